/**
 * The walks the hard-link and tree checks make are limited to what the deny
 * rules can match. In a pnpm project (every node_modules file hard linked
 * from a store, each package reached through a symlink into .pnpm), with
 * `Read(/.env.*)` (anchored at the project root; Claude Code's documented
 * `Read(./.env.*)` matches at any depth, as `.env.*` does) the hard-link walk
 * went through node_modules, though the rule matches only direct children of
 * the project root, passed its limit, and every Read or `cat` of a
 * dependency's file asked (a safety ask, even in bypassPermissions) and Grep
 * hid node_modules; `grep -r TODO src` asked because `.env.*`'s prefix is the
 * working directory; and `grep -r X node_modules` counted every package twice
 * (once where it lies, once through its symlink) and passed the tree limit.
 * Hard links and symlinks to denied files are still found. Real trees, the
 * real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { WALK_LIMIT } from '../src/permissions/hard-links.js';
import { compileDirFilter } from '../src/permissions/path-rules.js';
import { TREE_LIMIT } from '../src/permissions/tree-reach.js';
import { cleanupTmp, makeApp, tmpDir, type TestApp } from './helpers.js';
import { BYPASS } from './helpers-bash.js';
import { grepApp, runGrep } from './helpers-grep.js';
import { run } from './helpers-hooks.js';

/** More entries than either walk looks through, and than half the tree limit (a package counted twice passes it). */
const BIG = Math.max(WALK_LIMIT, Math.ceil(TREE_LIMIT / 2)) + 1;

let ws: string;

beforeAll(() => {
  ws = path.join(tmpDir('toolexec-walk-scope-'), 'ws');
  const store = tmpDir('toolexec-walk-store-');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, '.env.local'), 'SECRET=hunter2\n');
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'export const a = 1; // TODO\n');
  const pnpm = path.join(ws, 'node_modules', '.pnpm');
  // x: two files hard linked from the store, as pnpm installs them.
  const x = path.join(pnpm, 'x@1.0.0', 'node_modules', 'x');
  fs.mkdirSync(x, { recursive: true });
  for (const [name, text] of [
    ['index.js', 'module.exports = 1; // TODO from x\n'],
    ['package.json', '{"name":"x"}\n'],
  ] as const) {
    fs.writeFileSync(path.join(store, name), text);
    fs.linkSync(path.join(store, name), path.join(x, name));
  }
  fs.symlinkSync('.pnpm/x@1.0.0/node_modules/x', path.join(ws, 'node_modules', 'x'));
  // big: a package of BIG files, reached through its symlink too.
  const big = path.join(pnpm, 'big@1.0.0', 'node_modules', 'big');
  fs.mkdirSync(big, { recursive: true });
  for (let i = 0; i < BIG; i++) fs.writeFileSync(path.join(big, `f${i}.js`), '');
  fs.symlinkSync('.pnpm/big@1.0.0/node_modules/big', path.join(ws, 'node_modules', 'big'));
}, 120_000);
afterAll(cleanupTmp);

async function withApp<T>(permissions: ConfigInput['permissions'], f: (t: TestApp) => Promise<T>): Promise<T> {
  const t = await makeApp({ workspace: { root: ws }, permissions });
  try {
    return await f(t);
  } finally {
    await t.close();
  }
}

async function check(t: TestApp, name: string, input: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/permissions/check', payload: { name, input } });
  expect(res.statusCode).toBe(200);
  const b = res.json() as { behavior: string; reason: { type: string; detail: string } };
  return { behavior: b.behavior, type: b.reason.type, detail: b.reason.detail };
}

describe('a pnpm node_modules under Read(/.env.*)', () => {
  const modes = [BYPASS, { defaultMode: 'default' as const }];
  const policy = { deny: ['Read(/.env.*)'], allow: ['Bash(grep:*)'] };

  it('Read, cat and Grep of a dependency are as they were, in bypassPermissions and in default mode', async () => {
    for (const mode of modes) {
      await withApp({ ...mode, ...policy }, async (t) => {
        const index = path.join(ws, 'node_modules', 'x', 'index.js');
        expect(await check(t, 'Read', { file_path: index })).toMatchObject({ behavior: 'allow' });
        expect(await check(t, 'Bash', { command: 'cat node_modules/x/package.json' })).toMatchObject({ behavior: 'allow' });
        const read = await run(t, 'Read', { file_path: index });
        expect(read.text).toContain('TODO from x');
        const grep = await run(t, 'Grep', { pattern: 'TODO', path: path.join(ws, 'node_modules', 'x'), output_mode: 'content' });
        expect(grep.text).toContain('TODO from x');
      });
    }
  });

  it('a tree below the working directory that the rule cannot reach is not a recursive read under it', async () => {
    for (const mode of modes) {
      await withApp({ ...mode, ...policy }, async (t) => {
        expect(await check(t, 'Bash', { command: 'grep -r TODO src' })).toMatchObject({ behavior: 'allow' });
      });
    }
  });

  it('node_modules is looked through once, though every package lies there twice (where it is, and through its symlink)', async () => {
    for (const mode of modes) {
      await withApp({ ...mode, ...policy }, async (t) => {
        expect(await check(t, 'Bash', { command: 'grep -r TODO node_modules' })).toMatchObject({ behavior: 'allow' });
      });
    }
  });

  it('a hard link to a denied file is still found, at the depth the rule matches and below a directory it names', async () => {
    const link = path.join(ws, 'node_modules', 'leak.js');
    const dir = path.join(ws, '.env.d');
    fs.linkSync(path.join(ws, '.env.local'), link);
    fs.mkdirSync(path.join(dir, 'inner'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'inner', 'key'), 'KEY=k\n');
    fs.linkSync(path.join(dir, 'inner', 'key'), path.join(ws, 'src', 'key.ts'));
    try {
      await withApp({ ...BYPASS, deny: ['Read(/.env.*)'], allow: ['Bash(grep:*)'] }, async (t) => {
        expect(await check(t, 'Read', { file_path: link })).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(/.env.*)' });
        expect(await check(t, 'Bash', { command: 'cat node_modules/leak.js' })).toMatchObject({ behavior: 'deny', detail: 'Read(/.env.*)' });
        expect(await check(t, 'Bash', { command: 'cat src/key.ts' })).toMatchObject({ behavior: 'deny', detail: 'Read(/.env.*)' });
        expect(await check(t, 'Bash', { command: 'grep -r TODO src' })).toMatchObject({ behavior: 'ask', type: 'safety' });
        const r = await run(t, 'Read', { file_path: link });
        expect(r.text).not.toContain('hunter2');
        // A directory the rule names is read under it.
        expect(await check(t, 'Bash', { command: 'grep -r KEY .env.d' })).toMatchObject({ behavior: 'deny', detail: 'Read(/.env.*)' });
      });
    } finally {
      fs.rmSync(link);
      fs.rmSync(path.join(ws, 'src', 'key.ts'));
      fs.rmSync(dir, { recursive: true });
    }
  });

  it('a symlink to a denied file inside a package reached through its symlink is still found', async () => {
    const l = path.join(ws, 'node_modules', '.pnpm', 'x@1.0.0', 'node_modules', 'x', 'l');
    fs.symlinkSync(path.join(ws, '.env.local'), l);
    try {
      await withApp({ ...BYPASS, deny: ['Read(/.env.local)'], allow: ['Bash(grep:*)'] }, async (t) => {
        expect(await check(t, 'Bash', { command: 'grep -R TODO node_modules/x' })).toMatchObject({ behavior: 'ask', type: 'safety' });
        expect(await check(t, 'Bash', { command: 'grep -R TODO node_modules' })).toMatchObject({ behavior: 'ask', type: 'safety' });
      });
    } finally {
      fs.rmSync(l);
    }
  });
});

describe('a pnpm node_modules under a rule that matches at any depth', () => {
  // Every directory may hold a .env: the walk for the denied files passes its limit in this tree, and a file with
  // several names cannot be told from a denied one. Grep leaves such files out, and says so (both engines).
  for (const engine of ['rg', 'js'] as const) {
    it(`Grep (${engine}) says it left out the files it could not settle, rather than finding nothing`, async () => {
      const t = await grepApp(ws, engine, { permissions: { ...BYPASS, deny: ['Read(**/.env)'] } });
      try {
        const r = await runGrep(t.app, { pattern: 'TODO', path: path.join(ws, 'node_modules', '.pnpm', 'x@1.0.0'), output_mode: 'content' });
        expect(r.isError).toBe(false);
        expect(r.text).not.toContain('TODO from x');
        // rg screens the files that matched (index.js); the JS engine every file it walks (index.js, package.json).
        expect(r.text).toMatch(/\[(1 file|2 files) with several names \((a hard link|hard links)\) (was|were) left out of this search: .*Read\(\.\/\.env\)/);
        // An ordinary file is searched as before, with no note.
        const src = await runGrep(t.app, { pattern: 'TODO', path: path.join(ws, 'src') });
        expect(src.text).toContain('a.ts');
        expect(src.text).not.toContain('left out');
      } finally {
        await t.close();
      }
    });
  }
});

describe('compileDirFilter', () => {
  const base = { root: '/w', cwd: '/w', home: '/h', caseInsensitive: false };
  it('enters only the directories where what a rule covers may lie', () => {
    const envStar = compileDirFilter('/.env.*', base);
    expect(envStar('/w')).toBe(true);
    expect(envStar('/w/node_modules')).toBe(false);
    expect(envStar('/w/.env.d')).toBe(true);
    expect(envStar('/w/.env.d/a/b')).toBe(true);
    const fixed = compileDirFilter('./config/*/secret.json', base);
    expect(fixed('/w/config')).toBe(true);
    expect(fixed('/w/config/prod')).toBe(true);
    expect(fixed('/w/config/prod/sub')).toBe(false);
    const any = compileDirFilter('**/.env', base);
    expect(any('/w/node_modules/a/b')).toBe(true);
    const bare = compileDirFilter('.env', base);
    expect(bare('/w/src/deep')).toBe(true);
    const below = compileDirFilter('./a/*/b/**', base);
    expect(below('/w/a/x/c')).toBe(false);
    expect(below('/w/a/x/b/c/d')).toBe(true);
    // Braces may span segments: no pruning below the prefix.
    expect(compileDirFilter('./{a,b/c}/x', base)('/w/b/c')).toBe(true);
    expect(compileDirFilter('./{a,b/c}/x', base)('/w/z')).toBe(true);
    // Above the prefix: the walk must go through; beside it: nothing the rule covers.
    expect(fixed('/w')).toBe(true);
    expect(fixed('/')).toBe(true);
    expect(fixed('/w/src')).toBe(false);
    expect(compileDirFilter('~/.ssh/**', base)('/w/node_modules')).toBe(false);
  });

  it('compares as the file system does where it folds case', () => {
    const folded = { root: '/w', cwd: '/w', home: '/h', caseInsensitive: true };
    const f = compileDirFilter('./Config/*/secret.json', folded);
    expect(f('/w/config')).toBe(true);
    expect(f('/w/CONFIG/prod')).toBe(true);
    expect(f('/w/config/prod/sub')).toBe(false);
    expect(compileDirFilter('/.ENV.*', folded)('/w/.env.d')).toBe(true);
  });
});
