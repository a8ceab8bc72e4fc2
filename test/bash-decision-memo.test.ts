/**
 * One Bash permission decision asks the file system about each path once
 * (util/decision-memo.ts): `cd src && ls -la foo bar && cat x/y.txt > out.txt`
 * made 57 realpath calls (20 of the workspace root) and 40 stat/lstat calls,
 * each path's spellings canonicalised again by every check, and realpath of
 * a missing name threw (an exception costs more than the call). Nothing is kept
 * from one decision to the next: a link swapped between two decisions is
 * judged where it leads now. The calls are counted on the real fs functions
 * (spies that call through), against a real workspace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import { Workspace } from '../src/workspace.js';
import { cleanupTmp } from './helpers.js';
import { ruleEnv } from './helpers-bash.js';

beforeAll(async () => {
  await initBashParser();
});
afterAll(cleanupTmp);

/** Every path the file system is asked about by `fn`, per question, with how often. */
async function fsCalls(fn: () => Promise<unknown>): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  const count = (what: string) => (p: fs.PathLike) => {
    const k = `${what} ${String(p)}`;
    calls.set(k, (calls.get(k) ?? 0) + 1);
  };
  const spies = [
    vi.spyOn(fs.realpathSync, 'native'),
    vi.spyOn(fs, 'realpathSync'),
    vi.spyOn(fs, 'statSync'),
    vi.spyOn(fs, 'lstatSync'),
    vi.spyOn(fs, 'existsSync'),
    vi.spyOn(fs, 'readlinkSync'),
  ];
  const names = ['realpath.native', 'realpath', 'stat', 'lstat', 'exists', 'readlink'];
  try {
    await fn();
  } finally {
    spies.forEach((s, i) => {
      for (const [p] of s.mock.calls) count(names[i]!)(p as fs.PathLike);
      s.mockRestore();
    });
  }
  return calls;
}

describe('one Bash decision', () => {
  it('asks the file system about each path once', async () => {
    const env = ruleEnv({ deny: ['Read(/.env)'], allow: ['Bash(git status:*)'] });
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.mkdirSync(path.join(env.ws, 'x'));
    fs.writeFileSync(path.join(env.ws, 'x', 'y.txt'), 'y\n');
    fs.writeFileSync(path.join(env.ws, 'src', 'foo'), 'foo\n');
    fs.symlinkSync('src', path.join(env.ws, 'l'));
    for (const c of ['cd src && ls -la foo bar && cat x/y.txt > out.txt', 'git status && cat l/foo ../y', 'cat x/../src/foo l/../x/y.txt | grep -r y src']) {
      let result: unknown;
      const calls = await fsCalls(async () => {
        result = await env.check(c);
      });
      expect(result, c).toMatchObject({ behavior: expect.any(String) });
      const repeated = [...calls].filter(([, n]) => n > 1);
      expect(repeated, c).toEqual([]);
      // The workspace root, which every path of the line is below, was asked about.
      expect([...calls.keys()].some((k) => k.endsWith(` ${env.ws}`)), c).toBe(true);
      // A missing name the line gives is found missing by lstat, not by realpath's exception (which costs more than the call).
      for (const name of ['bar', 'src/bar', 'out.txt', 'src/out.txt', '../y']) expect(calls.has(`realpath.native ${path.join(env.ws, name)}`), `${c}: ${name}`).toBe(false);
    }
  });

  it('keeps nothing for the next: a link swapped between two decisions is judged where it leads now', async () => {
    const env = ruleEnv({ deny: ['Read(/.env)'] });
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.writeFileSync(path.join(env.ws, 'src', '.env'), 'harmless\n');
    fs.symlinkSync('src', path.join(env.ws, 'l'));
    expect(await env.check('cat l/.env')).toMatchObject({ behavior: 'allow' });
    fs.rmSync(path.join(env.ws, 'l'));
    fs.symlinkSync('.', path.join(env.ws, 'l'));
    expect(await env.check('cat l/.env')).toMatchObject({ behavior: 'deny', type: 'rule' });
    // And back: a file that was missing in one decision is there in the next.
    fs.rmSync(path.join(env.ws, 'l'));
    expect(await env.check('cat l/.env')).toMatchObject({ behavior: 'allow' });
    fs.symlinkSync('.', path.join(env.ws, 'l'));
    expect(await env.check('cat l/.env')).toMatchObject({ behavior: 'deny', type: 'rule' });
  });

  it('outside a decision, canonicalising a path asks afresh each time, and no more than it did', async () => {
    const env = ruleEnv();
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), '');
    const ws = new Workspace(env.ws);
    const file = path.join(env.ws, 'src', 'a.ts');
    const calls = await fsCalls(async () => {
      ws.canonical(file);
      ws.canonical(file);
    });
    // The Read and Edit tools' check: realpath of the directory, lstat of the file, each time.
    expect(Object.fromEntries(calls)).toEqual({ [`realpath.native ${path.join(env.ws, 'src')}`]: 2, [`lstat ${file}`]: 2 });
  });
});
