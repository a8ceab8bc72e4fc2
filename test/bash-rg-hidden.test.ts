/**
 * rg skips hidden names below the trees it walks: with Read(./.env) denied,
 * `rg TODO` at the project root (or `rg --files`, `rg -g '!node_modules'
 * TODO`) was a safety ask in every mode, bypassPermissions too, as a read of
 * a tree holding .env, which rg does not open. The listing now skips what rg
 * skips, and lists every name when something may un-hide one: rg's options
 * (--hidden, -uu, a whitelisting glob or a type), a configuration file, an
 * ignore file with a `!` line in the tree or above it (ripgrep applies
 * hiddenness only to a path no ignore rule matched: shown here with the real
 * rg), or a write of the line that may make one. Real trees and rule
 * indexes, and rg run for real.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import { cleanupTmp, tmpDir } from './helpers.js';
import { BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

beforeAll(async () => {
  await initBashParser();
});
const savedHome = process.env.HOME;
afterEach(() => {
  process.env.HOME = savedHome;
  vi.restoreAllMocks();
});
afterAll(cleanupTmp);

const DENY = ['Read(./.env)', 'Read(**/.env)'];

/** A project whose root and config/ hold a .env, with a home directory of its own and no RIPGREP_CONFIG_PATH. */
function project(mode: 'default' | 'acceptEdits' | typeof BYPASS.defaultMode, childEnv: NodeJS.ProcessEnv = {}): RuleEnv {
  process.env.HOME = tmpDir('toolexec-rg-home-');
  const env = ruleEnv({ deny: DENY, mode });
  env.ctx.childEnv = childEnv;
  const ws = env.ws;
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.mkdirSync(path.join(ws, 'config'));
  fs.writeFileSync(path.join(ws, 'config', '.env'), 'DB=hunter3\n');
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'index.ts'), '// TODO: x SECRET\n');
  fs.writeFileSync(path.join(ws, '.gitignore'), 'node_modules\n.env\n');
  return env;
}

describe('rg over a tree holding a hidden denied file', () => {
  it('reads what rg reads, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = project(mode);
      for (const c of ['rg TODO', 'rg -n TODO', 'rg -l TODO .', 'rg --files', 'rg --files | wc -l', "rg -g '!node_modules' TODO", 'rg TODO | head -5', 'cd config && rg DB', 'rg DB config']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
    const edits = project('acceptEdits');
    expect(await edits.check('rg -n TODO > todo.txt')).toMatchObject({ behavior: 'allow' });
  });

  it('asks as before when something may make rg read a hidden name', async () => {
    const env = project(BYPASS.defaultMode);
    const safety = async (c: string): Promise<void> => {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringContaining('recursive read') });
    };
    for (const c of [
      'rg --hidden KEY',
      'rg -uu KEY',
      'rg -. KEY',
      'rg --hid KEY',
      'rg -g .env KEY',
      "rg -g '!*.lock' -g '.e*' KEY",
      'rg --glob=.env KEY',
      'rg -t ts KEY',
      'rg --ignore-file extra KEY',
      'RIPGREP_CONFIG_PATH=rg.conf rg KEY',
      'env rg KEY',
      "echo '!.env' > .ignore && rg KEY",
      "printf '!.env' >> .rgignore; rg KEY",
      'cp a src/.gitignore && rg KEY',
      'rg KEY > .ignore',
    ]) {
      await safety(c);
    }
    // An ignore file that whitelists, in the tree or above it, or a repository's exclude file.
    fs.writeFileSync(path.join(env.ws, 'config', '.ignore'), '!.env\n');
    await safety('rg DB config');
    await safety('rg DB');
    fs.rmSync(path.join(env.ws, 'config', '.ignore'));
    fs.writeFileSync(path.join(path.dirname(env.ws), '.rgignore'), '# keep\n!.env\n');
    await safety('rg DB config');
    fs.rmSync(path.join(path.dirname(env.ws), '.rgignore'));
    fs.mkdirSync(path.join(env.ws, '.git', 'info'), { recursive: true });
    fs.writeFileSync(path.join(env.ws, '.git', 'info', 'exclude'), '!.env\n');
    await safety('rg KEY');
    fs.rmSync(path.join(env.ws, '.git'), { recursive: true });
    // git's global excludes file, and a user configuration that names another.
    fs.mkdirSync(path.join(env.ctx.workspace.home, '.config', 'git'), { recursive: true });
    fs.writeFileSync(path.join(env.ctx.workspace.home, '.config', 'git', 'ignore'), '!.env\n');
    await safety('rg KEY');
    fs.rmSync(path.join(env.ctx.workspace.home, '.config'), { recursive: true });
    fs.writeFileSync(path.join(env.ctx.workspace.home, '.gitconfig'), '[core]\n\texcludesFile = /somewhere\n');
    await safety('rg KEY');
    fs.rmSync(path.join(env.ctx.workspace.home, '.gitconfig'));
    // A name rg does not skip: a link to the file, or the file named.
    fs.symlinkSync('../.env', path.join(env.ws, 'src', 'l'));
    await safety('rg KEY src');
    fs.rmSync(path.join(env.ws, 'src', 'l'));
    expect(await env.check('rg KEY .env')).toMatchObject({ behavior: 'deny', type: 'rule' });
    expect(await env.check('rg TODO')).toMatchObject({ behavior: 'allow' });
    // A configuration file in the environment commands run with.
    const configured = project(BYPASS.defaultMode, { RIPGREP_CONFIG_PATH: '/etc/rg.conf' });
    expect(await configured.check('rg KEY')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('judges a listed plain entry where its directory really lies, without resolving it again', async () => {
    // rg's tree is now listed whole where it used to ask at the root's .env: every entry judged by name.
    const env = project(BYPASS.defaultMode);
    for (let d = 0; d < 20; d++) {
      fs.mkdirSync(path.join(env.ws, 'src', `m${d}`));
      for (let f = 0; f < 20; f++) fs.writeFileSync(path.join(env.ws, 'src', `m${d}`, `f${f}.ts`), '');
    }
    const lstat = vi.spyOn(fs, 'lstatSync');
    const realpath = vi.spyOn(fs, 'realpathSync');
    expect(await env.check('rg TODO')).toMatchObject({ behavior: 'allow' });
    // 400 files, 21 directories: a lookup per directory, not per file (each file was resolved twice).
    expect(lstat.mock.calls.length + realpath.mock.calls.length).toBeLessThan(200);
  });

  it('what the check stands against: rg reads a hidden file an ignore file or a glob whitelists', () => {
    const dir = tmpDir('toolexec-rg-real-');
    fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'x SECRET\n');
    const rg = (...a: string[]): string => spawnSync('rg', ['--no-config', ...a, '.'], { cwd: dir, encoding: 'utf8' }).stdout;
    expect(rg('SECRET')).not.toContain('hunter2');
    expect(rg('-g', '!a.txt', 'SECRET')).not.toContain('hunter2');
    expect(rg('-g', '.env', 'SECRET')).toContain('hunter2');
    fs.writeFileSync(path.join(dir, '.ignore'), '!.env\n');
    expect(rg('SECRET')).toContain('hunter2');
  });
});
