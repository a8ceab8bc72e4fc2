/**
 * What the protected-change check (git-hooks.ts, git-config.ts) keeps between
 * decisions: each configuration file's values, a `.git` file's `gitdir:`
 * line and a `commondir`, by the file's identity (kept-reads.ts). Each test
 * lets the files settle (a file changed within a clock tick of a read is not
 * kept), makes a decision that keeps them, changes one thing, and expects the
 * next decision to see the change. Where the edit keeps the size and sets the
 * modification time back, only the change time and the content tell: a cache
 * keyed by the path, or by size and mtime, fails these. The walk up for the
 * `.git` and a file's absence are not kept: the tests of a `.git` appearing
 * above and of a file created hold any cache of them to the same.
 * Real repositories (the git binary), real files, the real check.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkPathPermission } from '../src/permissions/filesystem.js';
import { memoFs, withDecisionMemo } from '../src/util/decision-memo.js';
import { cleanupTmp, tmpDir } from './helpers.js';
import { directContext } from './helpers-files.js';

afterAll(cleanupTmp);

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

/** Past the clock's grain since the last change (hard-links.ts settledNow): what is read now is kept. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1100));

const HOOKS = /where git's hooks are \(core\.hooksPath/;
const INCLUDED = /a file git reads as its configuration/;

/** A workspace (not in a repository of its own unless the test makes one), in acceptEdits. */
function workspace() {
  const ws = path.join(tmpDir('toolexec-git-kept-'), 'ws');
  fs.mkdirSync(ws);
  // The commands' environment as the service's (the tests below change it): what git reads is judged by it.
  const ctx = { ...directContext({ root: ws, mode: 'acceptEdits' }), childEnv: process.env };
  const root = ctx.workspace.root;
  /** The Write check of a path below the workspace: its detail when it asks, else its behaviour. */
  const write = (rel: string): string => {
    const r = checkPathPermission('edit', 'Write', path.join(root, rel), ctx);
    return r.behavior === 'ask' ? `ask: ${r.detail}` : r.behavior;
  };
  return { ws: root, write };
}

/** Rewrites a file with text of the same length and its old modification time: only ctime and the content move. */
function rewriteInPlace(file: string, from: string, to: string): void {
  expect(to.length).toBe(from.length);
  const before = fs.statSync(file, { bigint: true });
  const text = fs.readFileSync(file, 'utf8');
  expect(text).toContain(from);
  // touch copies the times to the nanosecond (fs.utimesSync takes them as a double).
  const ref = `${file}.times`;
  execFileSync('touch', ['-r', file, ref]);
  fs.writeFileSync(file, text.replace(from, to));
  execFileSync('touch', ['-m', '-r', ref, file]);
  fs.rmSync(ref);
  const after = fs.statSync(file, { bigint: true });
  expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
  expect(after.ctimeNs).not.toBe(before.ctimeNs);
}

describe('what is kept between decisions is read again once it changes', () => {
  it("the repository's config edited in place (same size, mtime set back): a core.hooksPath added, changed, removed", async () => {
    const { ws, write } = workspace();
    git(ws, 'init', '-q');
    const config = path.join(ws, '.git', 'config');
    fs.appendFileSync(config, '[core]\n\thooksPath = aaaaa\n');
    await settle();
    expect(write('aaaaa/pre-commit')).toMatch(HOOKS);
    expect(write('bbbbb/pre-commit')).toBe('allow');
    rewriteInPlace(config, 'hooksPath = aaaaa', 'hooksPath = bbbbb');
    expect(write('bbbbb/pre-commit')).toMatch(HOOKS);
    expect(write('aaaaa/pre-commit')).toBe('allow');
    await settle();
    expect(write('bbbbb/pre-commit')).toMatch(HOOKS);
    // Commented out, same length: no hooks directory.
    rewriteInPlace(config, 'hooksPath = bbbbb', '#ooksPath = bbbbb');
    expect(write('bbbbb/pre-commit')).toBe('allow');
  });

  it('core.hooksPath set and changed by git config (a new file renamed over the old)', async () => {
    const { ws, write } = workspace();
    git(ws, 'init', '-q');
    await settle();
    expect(write('.husky/pre-commit')).toBe('allow');
    git(ws, 'config', 'core.hooksPath', '.husky');
    expect(write('.husky/pre-commit')).toMatch(HOOKS);
    await settle();
    expect(write('.husky/pre-commit')).toMatch(HOOKS);
    git(ws, 'config', 'core.hooksPath', '.hooks');
    expect(write('.hooks/pre-commit')).toMatch(HOOKS);
    expect(write('.husky/pre-commit')).toBe('allow');
  });

  it('an included file edited in place, deleted, and created again', async () => {
    const { ws, write } = workspace();
    git(ws, 'init', '-q');
    fs.appendFileSync(path.join(ws, '.git', 'config'), '[include]\n\tpath = ../tools/git.config\n');
    fs.mkdirSync(path.join(ws, 'tools'));
    const inc = path.join(ws, 'tools', 'git.config');
    fs.writeFileSync(inc, '[core]\n\thooksPath = hk1\n');
    await settle();
    expect(write('hk1/pre-commit')).toMatch(HOOKS);
    expect(write('tools/git.config')).toMatch(INCLUDED);
    rewriteInPlace(inc, 'hk1', 'hk2');
    expect(write('hk2/pre-commit')).toMatch(HOOKS);
    expect(write('hk1/pre-commit')).toBe('allow');
    await settle();
    expect(write('hk2/pre-commit')).toMatch(HOOKS);
    fs.rmSync(inc);
    expect(write('hk2/pre-commit')).toBe('allow');
    // Still named by the config: writing it is a change of the configuration.
    expect(write('tools/git.config')).toMatch(INCLUDED);
    await settle();
    expect(write('hk2/pre-commit')).toBe('allow');
    fs.writeFileSync(inc, '[core]\n\thooksPath = hk3\n');
    expect(write('hk3/pre-commit')).toMatch(HOOKS);
  });

  describe('the global configuration', () => {
    const saved = { GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    afterEach(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });

    it('$GIT_CONFIG_GLOBAL and $XDG_CONFIG_HOME/git/config created, edited in place and deleted', async () => {
      const { ws, write } = workspace();
      git(ws, 'init', '-q');
      const dir = path.dirname(ws);
      const global = path.join(dir, 'global.gitconfig');
      process.env.GIT_CONFIG_GLOBAL = global;
      process.env.XDG_CONFIG_HOME = path.join(dir, 'xdg');
      const xdg = path.join(dir, 'xdg', 'git', 'config');
      await settle();
      expect(write('ghk/pre-commit')).toBe('allow');
      fs.writeFileSync(global, '[core]\n\thooksPath = ghk\n');
      expect(write('ghk/pre-commit')).toMatch(HOOKS);
      await settle();
      expect(write('ghk/pre-commit')).toMatch(HOOKS);
      rewriteInPlace(global, 'ghk', 'gh2');
      expect(write('gh2/pre-commit')).toMatch(HOOKS);
      expect(write('ghk/pre-commit')).toBe('allow');
      await settle();
      fs.rmSync(global);
      expect(write('gh2/pre-commit')).toBe('allow');
      fs.mkdirSync(path.dirname(xdg), { recursive: true });
      await settle();
      expect(write('xhk/pre-commit')).toBe('allow');
      fs.writeFileSync(xdg, '[core]\n\thooksPath = xhk\n');
      expect(write('xhk/pre-commit')).toMatch(HOOKS);
      await settle();
      expect(write('xhk/pre-commit')).toMatch(HOOKS);
      fs.rmSync(xdg);
      expect(write('xhk/pre-commit')).toBe('allow');
    });
  });

  it('a .git appearing above the written file (a repository made there), and going again', async () => {
    const { ws, write } = workspace();
    fs.mkdirSync(path.join(ws, 'pkg', 'deep', 'hk'), { recursive: true });
    await settle();
    expect(write('pkg/deep/hk/pre-commit')).toBe('allow');
    git(path.join(ws, 'pkg'), 'init', '-q');
    git(path.join(ws, 'pkg'), 'config', 'core.hooksPath', 'deep/hk');
    expect(write('pkg/deep/hk/pre-commit')).toMatch(HOOKS);
    await settle();
    expect(write('pkg/deep/hk/pre-commit')).toMatch(HOOKS);
    fs.renameSync(path.join(ws, 'pkg', '.git'), path.join(ws, 'pkg', 'gitdir-moved'));
    expect(write('pkg/deep/hk/pre-commit')).toBe('allow');
  });

  it("a .git file's gitdir line rewritten in place to another git directory, and a commondir changed", async () => {
    const { ws, write } = workspace();
    const dir = path.dirname(ws);
    // Two git directories of names of one length, only the second with a hooks path.
    for (const g of ['gd1', 'gd2']) git(dir, 'init', '-q', '--bare', g);
    git(dir, '--git-dir=gd2', 'config', 'core.hooksPath', 'hk');
    const dotGit = path.join(ws, '.git');
    fs.writeFileSync(dotGit, `gitdir: ${path.join(dir, 'gd1')}\n`);
    await settle();
    expect(write('hk/pre-commit')).toBe('allow');
    rewriteInPlace(dotGit, 'gd1', 'gd2');
    expect(write('hk/pre-commit')).toMatch(HOOKS);
    await settle();
    expect(write('hk/pre-commit')).toMatch(HOOKS);
    rewriteInPlace(dotGit, 'gd2', 'gd1');
    expect(write('hk/pre-commit')).toBe('allow');
    // gd1 as a linked worktree's git directory: the common one's config counts, as `commondir` names it.
    fs.writeFileSync(path.join(dir, 'gd1', 'commondir'), '../gd3\n');
    git(dir, 'init', '-q', '--bare', 'gd3');
    await settle();
    expect(write('hk/pre-commit')).toBe('allow');
    rewriteInPlace(path.join(dir, 'gd1', 'commondir'), 'gd3', 'gd2');
    expect(write('hk/pre-commit')).toMatch(HOOKS);
  });

  it('a link moved to another file while a decision reads, and back: what is kept is the file read', async () => {
    const { ws, write } = workspace();
    const dir = path.dirname(ws);
    // .git a symlink to one of two git directories, each with its own hooks path: aaaaa, bbbbb.
    for (const [g, hk] of [['gA', 'aaaaa'], ['gB', 'bbbbb']] as const) {
      git(dir, 'init', '-q', '--bare', g);
      git(dir, `--git-dir=${g}`, 'config', 'core.hooksPath', hk);
    }
    const dotGit = path.join(ws, '.git');
    /** Points .git at `g` (a rename over it: the configs' own times do not move). */
    const relink = (g: string): void => {
      fs.symlinkSync(path.join(dir, g), `${dotGit}.new`);
      fs.renameSync(`${dotGit}.new`, dotGit);
    };
    relink('gA');
    await settle();
    // A decision stats gA's config; .git is moved to gB before the read (a loop of `ln -sfn` meets this window
    // about once in 250 decisions), so gB's config is read: that decision may judge by it, but what is kept for
    // later ones must be gB's values under gB's identity, not under gA's.
    withDecisionMemo(() => {
      expect(memoFs.stat(path.join(ws, '.git', 'config'))?.ino).toBe(fs.statSync(path.join(dir, 'gA', 'config')).ino);
      relink('gB');
      write('x.txt');
    });
    relink('gA');
    expect(write('aaaaa/pre-commit')).toMatch(HOOKS);
    expect(write('bbbbb/pre-commit')).toBe('allow');
  });
});
