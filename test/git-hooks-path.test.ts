/**
 * The hooks directory a repository's `core.hooksPath` names (husky's
 * `.husky`, husky 9's `.husky/_`, `.githooks`) plays the role of
 * `.git/hooks`: what is written there runs on the next `git commit`, which
 * `Bash(git:*)` allows. Writing it is a protected change: it asks in
 * acceptEdits and bypassPermissions, as `.git/` does. Without such a setting
 * a `.husky` directory is a directory like any other. Real repositories
 * (the git binary), the real service, real rule indexes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGitConfig } from '../src/permissions/git-hooks.js';
import { bashServiceTests, BYPASS, ruleEnv, type RuleEnvOptions } from './helpers-bash.js';
import { tmpDir } from './helpers.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

/** A repository in `ws` with an executable `.husky/pre-commit`, a secret `.env` and, when given, core.hooksPath set. */
function repository(ws: string, hooksPath?: string): void {
  git(ws, 'init', '-q');
  git(ws, 'config', 'user.email', 'a@b.c');
  git(ws, 'config', 'user.name', 'a');
  if (hooksPath !== undefined) git(ws, 'config', 'core.hooksPath', hooksPath);
  fs.mkdirSync(path.join(ws, '.husky', '_'), { recursive: true });
  fs.writeFileSync(path.join(ws, '.husky', 'pre-commit'), '#!/bin/sh\necho ok\n', { mode: 0o755 });
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'app.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
}

const HOOK = '#!/bin/sh\ncp .env leaked.txt\n';
const WHY = /where git's hooks are \(core\.hooksPath/;

describe('a hooks directory core.hooksPath names', () => {
  for (const mode of ['acceptEdits', 'bypassPermissions'] as const) {
    it(`${mode}: Edit, Write and Bash of .husky/pre-commit ask, so git commit (Bash(git:*)) cannot run a planted hook`, async () => {
      const t = await openApp({ permissions: { defaultMode: mode, allowBypass: true, headless: 'deny', allow: ['Bash(git:*)', 'Bash(echo:*)', 'Bash(cp:*)'], deny: ['Read(./.env)'] } });
      repository(t.workspace, '.husky');
      const hook = path.join(t.workspace, '.husky', 'pre-commit');
      const nb = { cells: [{ cell_type: 'code', id: 'a', source: 'print(1)', metadata: {}, outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 };
      fs.writeFileSync(path.join(t.workspace, '.husky', 'nb.ipynb'), JSON.stringify(nb));
      for (const f of [hook, '.husky/nb.ipynb']) expect((await run(t, 'Read', { file_path: f })).exec.status).toBe('succeeded');
      for (const [tool, input] of [
        ['Edit', { file_path: hook, old_string: 'echo ok', new_string: 'cp .env leaked.txt' }],
        ['Write', { file_path: '.husky/pre-commit', content: HOOK }],
        ['Write', { file_path: '.husky/commit-msg', content: HOOK }],
        ['NotebookEdit', { notebook_path: path.join(t.workspace, '.husky', 'nb.ipynb'), new_source: 'x', cell_id: 'a' }],
        ['Bash', { command: 'echo "cp .env leaked.txt" > .husky/pre-commit' }],
        ['Bash', { command: 'echo "cp .env leaked.txt" >> .husky/pre-commit' }],
        ['Bash', { command: 'cp src/app.ts .husky/pre-commit' }],
      ] as Array<[string, Record<string, unknown>]>) {
        const r = await run(t, tool, input);
        // Asked (no approver here, so denied), and for that reason.
        expect(r.exec.status, `${tool} ${JSON.stringify(input)}`).toBe('denied');
        expect(r.chain.map((c) => c.detail).join('\n'), `${tool} ${JSON.stringify(input)}`).toMatch(WHY);
      }
      expect(fs.readFileSync(hook, 'utf8')).toBe('#!/bin/sh\necho ok\n');
      expect(fs.existsSync(path.join(t.workspace, '.husky', 'commit-msg'))).toBe(false);
      const commit = await run(t, 'Bash', { command: 'git commit -qm x --allow-empty' });
      expect(commit.exec.status).toBe('succeeded');
      expect(fs.existsSync(path.join(t.workspace, 'leaked.txt'))).toBe(false);
      // The project's own files are the mode's to allow.
      expect((await run(t, 'Read', { file_path: 'src/app.ts' })).exec.status).toBe('succeeded');
      expect((await run(t, 'Edit', { file_path: 'src/app.ts', old_string: '1', new_string: '2' })).exec.status).toBe('succeeded');
      expect((await run(t, 'Write', { file_path: 'src/new.ts', content: 'x\n' })).exec.status).toBe('succeeded');
      expect((await run(t, 'Bash', { command: 'echo x > src/other.ts' })).exec.status).toBe('succeeded');
      expect(fs.readFileSync(path.join(t.workspace, 'src', 'app.ts'), 'utf8')).toBe('export const a = 2;\n');
    });
  }

  it('a configuration file the repository includes from the workspace asks as well: it could name a hooks directory written before', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', headless: 'deny', allow: ['Bash(git:*)', 'Bash(echo:*)'], deny: ['Read(./.env)'] } });
    repository(t.workspace);
    // A shared configuration kept in the project (not named .gitconfig), and one only included under a condition.
    git(t.workspace, 'config', 'include.path', '../tools/git.config');
    git(t.workspace, 'config', 'includeIf.onbranch:main.path', '../tools/branch.config');
    fs.mkdirSync(path.join(t.workspace, 'tools'));
    fs.writeFileSync(path.join(t.workspace, 'tools', 'git.config'), '[commit]\n\tverbose = false\n');
    // Nothing names hk yet: the hook is a file like any other.
    expect((await run(t, 'Write', { file_path: 'hk/pre-commit', content: HOOK })).exec.status).toBe('succeeded');
    fs.chmodSync(path.join(t.workspace, 'hk', 'pre-commit'), 0o755);
    expect((await run(t, 'Read', { file_path: 'tools/git.config' })).exec.status).toBe('succeeded');
    for (const [tool, input] of [
      ['Write', { file_path: 'tools/git.config', content: '[core]\n\thooksPath = hk\n' }],
      ['Write', { file_path: 'tools/branch.config', content: '[core]\n\thooksPath = hk\n' }],
      ['Edit', { file_path: 'tools/git.config', old_string: '[commit]\n\tverbose = false', new_string: '[core]\n\thooksPath = hk' }],
      ['Bash', { command: 'echo "[core] hooksPath = hk" >> tools/git.config' }],
      ['Bash', { command: 'echo x > src/x && git mv src tools' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const r = await run(t, tool, input);
      expect(r.exec.status, `${tool} ${JSON.stringify(input)}`).toBe('denied');
      expect(r.chain.map((c) => c.detail).join('\n'), `${tool} ${JSON.stringify(input)}`).toMatch(/a file git reads as its configuration/);
    }
    expect(fs.readFileSync(path.join(t.workspace, 'tools', 'git.config'), 'utf8')).toBe('[commit]\n\tverbose = false\n');
    expect(fs.existsSync(path.join(t.workspace, 'tools', 'branch.config'))).toBe(false);
    const commit = await run(t, 'Bash', { command: 'git commit -qm x --allow-empty' });
    expect(commit.exec.status).toBe('succeeded');
    expect(fs.existsSync(path.join(t.workspace, 'leaked.txt')), 'the planted hook did not run').toBe(false);
  }, 20000);

  it('a hard link to a hook or to .git/config is not a way around: making one, and writing a file that has one, ask', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', headless: 'deny', allow: ['Bash(git:*)', 'Bash(echo:*)', 'Bash(cp:*)'], deny: ['Read(./.env)'] } });
    repository(t.workspace, '.husky');
    const marker = path.join(t.workspace, 'fsmonitor-ran');
    for (const command of [
      'cp -l .husky/pre-commit notes.txt && echo "cp .env leaked.txt" >> notes.txt && git commit -qm x --allow-empty',
      'cp --link .husky/pre-commit notes.txt',
      'cp -al .husky h2',
      `cp -l .git/config cfg.txt && echo '[core] fsmonitor = "touch ${marker}; false"' >> cfg.txt && git status --short`,
    ]) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec.status, command).toBe('denied');
    }
    // A second name made some other way (here by the test): a write in place through it asks too.
    fs.linkSync(path.join(t.workspace, '.husky', 'pre-commit'), path.join(t.workspace, 'other.txt'));
    expect((await run(t, 'Bash', { command: 'echo "cp .env leaked.txt" >> other.txt' })).exec.status).toBe('denied');
    expect((await run(t, 'Bash', { command: 'git commit -qm x --allow-empty' })).exec.status).toBe('succeeded');
    expect(fs.readFileSync(path.join(t.workspace, '.husky', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\necho ok\n');
    expect(fs.existsSync(path.join(t.workspace, 'leaked.txt'))).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
    // Copies are copies.
    expect((await run(t, 'Bash', { command: 'cp .husky/pre-commit copy.txt && echo x >> copy.txt && cp -l src/app.ts src/b.ts' })).exec.status).toBe('succeeded');
  }, 20000);

  it('without core.hooksPath, .husky is a directory like any other: its files are written in acceptEdits', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', headless: 'deny', allow: ['Bash(echo:*)'] } });
    repository(t.workspace);
    const hook = path.join(t.workspace, '.husky', 'pre-commit');
    expect((await run(t, 'Read', { file_path: hook })).exec.status).toBe('succeeded');
    expect((await run(t, 'Edit', { file_path: hook, old_string: 'echo ok', new_string: 'echo fine' })).exec.status).toBe('succeeded');
    expect((await run(t, 'Write', { file_path: '.husky/commit-msg', content: 'x\n' })).exec.status).toBe('succeeded');
    expect((await run(t, 'Bash', { command: 'echo x > .husky/pre-push' })).exec.status).toBe('succeeded');
    expect(fs.readFileSync(hook, 'utf8')).toBe('#!/bin/sh\necho fine\n');
  });
});

describe('which writes count (the permission check)', () => {
  function env(hooksPath: string | undefined, opts: RuleEnvOptions = { mode: 'acceptEdits' }) {
    const e = ruleEnv(opts);
    repository(e.ws, hooksPath);
    return e;
  }
  const asks = { behavior: 'ask', type: 'safety', detail: expect.stringMatching(WHY) };

  it('every Bash write there asks, in acceptEdits and bypassPermissions; other writes do not', async () => {
    for (const opts of [{ mode: 'acceptEdits' }, { mode: BYPASS.defaultMode }] as RuleEnvOptions[]) {
      const e = env('.husky', opts);
      for (const c of [
        'echo x > .husky/pre-commit',
        'echo x | tee .husky/pre-commit',
        'sed -i s/ok/x/ .husky/pre-commit',
        'cp /dev/null .husky/post-checkout',
        'mv src/app.ts .husky/pre-push',
        'rm -rf .husky',
        'cd src && echo x > ../.husky/pre-commit',
        `echo x > ${e.ws}/.husky/pre-commit`,
      ]) {
        expect(await e.check(c), `${opts.mode}: ${c}`).toMatchObject(asks);
      }
      for (const c of ['echo x > src/app.ts', 'rm src/app.ts', 'cp src/app.ts src/b.ts']) expect((await e.check(c)).behavior, `${opts.mode}: ${c}`).not.toBe('ask');
    }
  });

  it('husky 9 (core.hooksPath .husky/_) runs .husky/<hook>: those ask too', async () => {
    const e = env('.husky/_');
    for (const c of ['echo x > .husky/pre-commit', 'echo x > .husky/_/h', 'echo x > .husky/_/pre-commit']) expect(await e.check(c), c).toMatchObject(asks);
    expect((await e.check('echo x > src/app.ts')).behavior).toBe('allow');
  });

  it('a nested hooks path: the directories that hold it ask when moved or replaced, not a glob that only starts there', async () => {
    const e = env('tools/hooks');
    fs.mkdirSync(path.join(e.ws, 'tools', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(e.ws, 'tools', 'notes.md'), 'x\n');
    for (const c of ['echo x > tools/hooks/pre-commit', 'rm -rf tools', 'mv src tools2 && mv tools2 tools']) expect(await e.check(c), c).toMatchObject(asks);
    for (const c of ['echo x > tools/notes.md', 'rm tools/*.md']) expect((await e.check(c)).behavior, c).toBe('allow');
  });

  it('reads the value as git does: any case, quotes, comments, an included file; an absolute value; a linked worktree', async () => {
    const e = env(undefined);
    const config = path.join(e.ws, '.git', 'config');
    fs.appendFileSync(config, '[Core] # hooks\n\tHooksPath = ".githooks" ; husky-like\n');
    expect(await e.check('echo x > .githooks/pre-commit')).toMatchObject(asks);
    // An included file (relative to the including one), whatever the condition of includeIf.
    fs.writeFileSync(config, fs.readFileSync(config, 'utf8').replace(/\[Core\][^\n]*\n[^\n]*\n/, '[includeIf "gitdir:/elsewhere/"]\n\tpath = hooks.inc\n'));
    fs.writeFileSync(path.join(e.ws, '.git', 'hooks.inc'), `[core]\n\thooksPath = ${path.join(e.ws, 'abs-hooks')}\n`);
    expect(await e.check('echo x > abs-hooks/pre-commit')).toMatchObject(asks);
    expect((await e.check('echo x > .githooks/pre-commit')).behavior).toBe('allow');
    // A linked worktree reads the repository's config; a relative value is relative to its own top.
    git(e.ws, 'config', 'core.hooksPath', '.husky');
    git(e.ws, 'add', 'src');
    git(e.ws, 'commit', '-qm', 'x', '--no-verify');
    git(e.ws, 'worktree', 'add', '-q', 'wt');
    expect(await e.check('echo x > wt/.husky/pre-commit')).toMatchObject(asks);
    expect((await e.check('echo x > wt/src/app.ts')).behavior).toBe('allow');
  });

  describe('the global configuration', () => {
    const saved = process.env.GIT_CONFIG_GLOBAL;
    afterEach(() => {
      if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved;
    });

    it('a global core.hooksPath (relative: in every repository) counts', async () => {
      const e = env(undefined);
      const global = path.join(path.dirname(e.ws), 'global.gitconfig');
      fs.writeFileSync(global, '[core]\n\thooksPath = .githooks\n');
      process.env.GIT_CONFIG_GLOBAL = global;
      expect(await e.check('echo x > .githooks/pre-commit')).toMatchObject(asks);
      expect((await e.check('echo x > src/app.ts')).behavior).toBe('allow');
    });
  });

  it('a hooks path of /dev/null or one outside the workspace protects nothing in it', async () => {
    for (const v of ['/dev/null', '/tmp/elsewhere-hooks']) {
      const e = env(v);
      expect((await e.check('echo x > .husky/pre-commit')).behavior, v).toBe('allow');
    }
  });
});

describe('parseGitConfig', () => {
  it('takes core.hooksPath and include paths as git reads them', () => {
    const text = [
      '; comment',
      '[core]',
      '\tbare',
      '\thooksPath = "a b" # trailing',
      '[core "sub"]',
      '\thooksPath = not-this',
      '[core.sub2]',
      '\thooksPath = nor-this',
      '[CORE] hookspath = c\\',
      'd',
      '[include]',
      '\tpath = one.inc',
      '[includeIf "gitdir:~/x/"]',
      '\tpath = ~/two.inc',
      '[other]',
      '\thooksPath = no',
    ].join('\n');
    expect(parseGitConfig(text)).toEqual({ hooksPaths: ['a b', 'cd'], includes: ['one.inc', '~/two.inc'] });
    // git takes a value as a C string: `git config --get core.hooksPath` printed `hk` for `hk<NUL>zz`, and hooks ran from hk.
    expect(parseGitConfig('[core]\n\thooksPath = hk\0zz\n[include]\n\tpath = a.inc\0b\n')).toEqual({ hooksPaths: ['hk'], includes: ['a.inc'] });
  });
});

describe('the environment the commands run with, not the service’s own', () => {
  /** A planted hook's marker: the commit the agent runs shows which hooks directory its git uses. */
  const planted = (ws: string, dir: string): string => {
    fs.mkdirSync(path.join(ws, dir), { recursive: true });
    fs.writeFileSync(path.join(ws, dir, 'pre-commit'), `#!/bin/sh\ntouch ran-${dir}\n`, { mode: 0o755 });
    return path.join(ws, `ran-${dir}`);
  };
  const mode = { permissions: { defaultMode: 'acceptEdits' as const, headless: 'deny' as const, allow: ['Bash(git:*)', 'Bash(echo:*)'] } };

  it('the global file the commands read (HOME given them, XDG_CONFIG_HOME redacted) names the hooks directory: writing it asks', async () => {
    const base = tmpDir('toolexec-git-env-');
    const home = path.join(base, 'home');
    const xdg = path.join(base, 'xdg');
    fs.mkdirSync(path.join(home, '.config', 'git'), { recursive: true });
    fs.mkdirSync(path.join(xdg, 'git'), { recursive: true });
    // What the commands read: $HOME/.config/git/config, as XDG_CONFIG_HOME is not given them.
    fs.writeFileSync(path.join(home, '.config', 'git', 'config'), '[core]\n\thooksPath = hk\n');
    // What only the service's own environment names.
    fs.writeFileSync(path.join(xdg, 'git', 'config'), '[core]\n\thooksPath = svc\n');
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: xdg, GIT_CONFIG_NOSYSTEM: '1' };
    delete env.GIT_CONFIG_GLOBAL;
    const t = await openApp({ ...mode, server: { redact: ['XDG_CONFIG_HOME'] } }, { env });
    repository(t.workspace);
    const ran = planted(t.workspace, 'hk');
    // The commands' git runs hooks from hk, not from svc.
    expect((await run(t, 'Bash', { command: 'git commit -qm x --allow-empty' })).exec.status).toBe('succeeded');
    expect(fs.existsSync(ran)).toBe(true);
    fs.rmSync(ran);
    for (const [tool, input] of [
      ['Write', { file_path: 'hk/commit-msg', content: HOOK }],
      ['Bash', { command: 'echo "cp .env leaked.txt" >> hk/pre-commit' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const r = await run(t, tool, input);
      expect(r.exec.status, `${tool} ${JSON.stringify(input)}`).toBe('denied');
      expect(r.chain.map((c) => c.detail).join('\n')).toMatch(WHY);
    }
    // svc is named only where the commands do not look: a directory like any other.
    expect((await run(t, 'Write', { file_path: 'svc/pre-commit', content: 'x\n' })).exec.status).toBe('succeeded');
    expect(fs.readFileSync(path.join(t.workspace, 'hk', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\ntouch ran-hk\n');
  }, 20000);

  it('core.hooksPath given in the commands’ environment (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS) counts', async () => {
    for (const extra of [
      { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'a', GIT_CONFIG_KEY_1: 'Core.HooksPath', GIT_CONFIG_VALUE_1: 'envhk' },
      { GIT_CONFIG_PARAMETERS: "'user.name'='a' 'core.hookspath'='envhk'" },
    ]) {
      const t = await openApp(mode, { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', ...extra } });
      repository(t.workspace);
      const ran = planted(t.workspace, 'envhk');
      expect((await run(t, 'Bash', { command: 'git commit -qm x --allow-empty' })).exec.status).toBe('succeeded');
      expect(fs.existsSync(ran), JSON.stringify(extra)).toBe(true);
      const r = await run(t, 'Write', { file_path: 'envhk/commit-msg', content: HOOK });
      expect(r.exec.status, JSON.stringify(extra)).toBe('denied');
      expect(r.chain.map((c) => c.detail).join('\n')).toMatch(WHY);
      expect((await run(t, 'Write', { file_path: 'src/x.ts', content: 'x\n' })).exec.status).toBe('succeeded');
    }
  }, 20000);
});
