/**
 * Path confinement and Read/Edit path rules: rule anchors, directory
 * coverage, spellings of a path (.., repeated slashes, symlinks, case, NFC and
 * NFD), the working directories, protected paths that ask even in bypass
 * mode, and what the pipeline audits for each.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkPathPermission, protectedPathReason } from '../src/permissions/filesystem.js';
import { compilePathRule, specifierToGlob, type PathBase } from '../src/permissions/path-rules.js';
import { buildApp } from '../src/app.js';
import { Workspace } from '../src/workspace.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { call, decisionChain, directContext, fileApp, fileTools } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const base: PathBase = { root: '/proj', cwd: '/proj', home: '/home/u', caseInsensitive: false };
const matches = (spec: string, p: string, b: PathBase = base): boolean => compilePathRule(spec, b)(p);

describe('path rule specifiers', () => {
  it('anchor //abs, ~/home, /root-relative; ./p is p (Claude Code drops the ./)', () => {
    expect(specifierToGlob('//etc/passwd', base)).toBe('/etc/passwd');
    expect(specifierToGlob('~/.ssh/**', base)).toBe('/home/u/.ssh/**');
    expect(specifierToGlob('/src/**/*.ts', base)).toBe('/proj/src/**/*.ts');
    expect(specifierToGlob('./.env', base)).toBe('/proj/**/.env');
    expect(specifierToGlob('./config/.env', base)).toBe('/proj/config/.env');
    expect(matches('//etc/passwd', '/etc/passwd')).toBe(true);
    expect(matches('~/.ssh/**', '/home/u/.ssh/id_rsa')).toBe(true);
    expect(matches('/src/**/*.ts', '/proj/src/a/b.ts')).toBe(true);
    expect(matches('/src/**/*.ts', '/other/src/a/b.ts')).toBe(false);
    expect(matches('./.env', '/proj/.env')).toBe(true);
    expect(matches('./.env', '/proj/sub/.env')).toBe(true);
    expect(matches('./config/.env', '/proj/config/.env')).toBe(true);
    expect(matches('./config/.env', '/proj/sub/config/.env')).toBe(false);
    expect(matches('/.env', '/proj/sub/.env')).toBe(false);
  });

  it('match a bare pattern at any depth, and a bare pattern with a slash from the working directory', () => {
    expect(matches('.env', '/proj/.env')).toBe(true);
    expect(matches('.env', '/proj/a/b/.env')).toBe(true);
    expect(matches('*.pem', '/proj/keys/server.pem')).toBe(true);
    expect(matches('.env', '/elsewhere/.env')).toBe(false);
    expect(matches('config/app.yml', '/proj/config/app.yml')).toBe(true);
    expect(matches('config/app.yml', '/proj/x/config/app.yml')).toBe(false);
  });

  it('cover a directory\u2019s contents, and with `/**` the directory itself', () => {
    expect(matches('./secrets/**', '/proj/secrets')).toBe(true);
    expect(matches('./secrets/**', '/proj/secrets/a/b.txt')).toBe(true);
    expect(matches('./secrets', '/proj/secrets/a/b.txt')).toBe(true);
    expect(matches('./secrets/**', '/proj/secrets-not')).toBe(false);
  });

  it('resolve `..` and repeated slashes in the rule, as in the paths matched', () => {
    expect(matches('//tmp/../etc//passwd', '/etc/passwd')).toBe(true);
    expect(matches('./a/../b/*.txt', '/proj/b/x.txt')).toBe(true);
  });

  it('fold case where the file system does, and Unicode NFC/NFD always', () => {
    const ci = { ...base, caseInsensitive: true };
    expect(matches('./Secrets/**', '/proj/secrets/x', ci)).toBe(true);
    expect(matches('./Secrets/**', '/proj/secrets/x', base)).toBe(false);
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    expect(matches(`./${nfc}.txt`, `/proj/${nfd}.txt`)).toBe(true);
    expect(matches(`./${nfd}.txt`, `/proj/${nfc}.txt`)).toBe(true);
  });

  it('match a rule whose fixed prefix runs through a symlink by that prefix resolved too', () => {
    const root = tmpDir();
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'link'));
    expect(matches(`/${path.join(root, 'link')}/**`, path.join(root, 'real', 'f.txt'))).toBe(true);
  });
});

describe('Workspace: the working directories and path spellings', () => {
  it('contains paths after resolving .., repeated slashes and symlinks', () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    const outside = path.join(root, 'outside');
    fs.mkdirSync(path.join(ws, 'sub'), { recursive: true });
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(ws, 'escape'));
    fs.symlinkSync(path.join(ws, 'sub'), path.join(outside, 'back-in'));
    const w = new Workspace(ws);
    expect(w.contains(path.join(ws, 'sub', 'f.txt'))).toBe(true);
    expect(w.contains(`${ws}//sub///f.txt`)).toBe(true);
    expect(w.contains(`${ws}/sub/../../outside/f.txt`)).toBe(false);
    expect(w.contains('../outside/f.txt', ws)).toBe(false);
    expect(w.contains(path.join(ws, 'escape', 'f.txt'))).toBe(false);
    expect(w.contains(path.join(outside, 'back-in', 'f.txt'))).toBe(true);
    expect(w.containsLexically(path.join(ws, 'escape', 'f.txt'))).toBe(true);
    // A dangling link is judged by where a write through it would land.
    fs.symlinkSync(path.join(outside, 'new.txt'), path.join(ws, 'dangling'));
    expect(w.contains(path.join(ws, 'dangling'))).toBe(false);
  });

  it('adds the additional directories', () => {
    const root = tmpDir();
    fs.mkdirSync(path.join(root, 'ws'));
    fs.mkdirSync(path.join(root, 'extra'));
    const w = new Workspace(path.join(root, 'ws'), ['../extra']);
    expect(w.roots).toEqual([path.join(root, 'ws'), path.join(root, 'extra')]);
    expect(w.contains(path.join(root, 'extra', 'x'))).toBe(true);
    expect(w.contains(path.join(root, 'other', 'x'))).toBe(false);
  });

  it('folds case only on a case-insensitive file system', () => {
    const root = tmpDir();
    fs.mkdirSync(path.join(root, 'Work'));
    const ci = new Workspace(path.join(root, 'Work'), [], { caseInsensitive: true });
    const cs = new Workspace(path.join(root, 'Work'), [], { caseInsensitive: false });
    expect(ci.contains(path.join(root, 'WORK', 'f.txt'))).toBe(true);
    expect(ci.contains(path.join(root, 'work', 'f.txt'))).toBe(true);
    expect(cs.contains(path.join(root, 'WORK', 'f.txt'))).toBe(false);
  });

  it('treats NFC and NFD spellings of the root alike', () => {
    const root = tmpDir();
    const nfd = path.join(root, 'proje\u0301t');
    fs.mkdirSync(nfd);
    const w = new Workspace(nfd);
    expect(w.contains(path.join(root, 'proj\u00e9t', 'f.txt'))).toBe(true);
    expect(w.contains(path.join(root, 'projet', 'f.txt'))).toBe(false);
  });
});

describe('checkPathPermission', () => {
  it('denies by any spelling, but allows only by where the path really leads', () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    const outside = path.join(root, 'outside');
    fs.mkdirSync(path.join(ws, 'secrets'), { recursive: true });
    fs.mkdirSync(outside);
    fs.symlinkSync(path.join(ws, 'secrets'), path.join(ws, 'alias'));
    fs.symlinkSync(outside, path.join(ws, 'out'));
    const ctx = directContext({ root: ws, deny: ['Read(./secrets/**)'], allow: ['Edit(./**)'] });
    expect(checkPathPermission('read', 'Read', path.join(ws, 'alias', 'k'), ctx)).toMatchObject({ behavior: 'deny', type: 'rule' });
    expect(checkPathPermission('read', 'Read', `${ws}/x/../secrets//k`, ctx)).toMatchObject({ behavior: 'deny' });
    // `Edit(./**)` matches the spelling ws/out/f, but the file is outside: the allowance does not carry.
    expect(checkPathPermission('edit', 'Edit', path.join(ws, 'out', 'f'), ctx)).toMatchObject({ behavior: 'ask', type: 'working_dir' });
    expect(checkPathPermission('edit', 'Edit', path.join(ws, 'f'), ctx)).toMatchObject({ behavior: 'allow', type: 'rule' });
  });

  it('reads inside are allowed; reads and edits outside ask (working_dir); edits inside are undecided outside acceptEdits', () => {
    const root = tmpDir();
    const ctx = directContext({ root });
    expect(checkPathPermission('read', 'Read', path.join(root, 'f'), ctx)).toMatchObject({ behavior: 'allow', type: 'working_dir' });
    expect(checkPathPermission('read', 'Read', '/etc/passwd', ctx)).toMatchObject({ behavior: 'ask', type: 'working_dir' });
    expect(checkPathPermission('edit', 'Edit', path.join(root, 'f'), ctx)).toEqual({ behavior: 'passthrough' });
    const accept = directContext({ root, mode: 'acceptEdits' });
    expect(checkPathPermission('edit', 'Edit', path.join(root, 'f'), accept)).toMatchObject({ behavior: 'allow', type: 'mode' });
    expect(checkPathPermission('edit', 'Edit', '/etc/hosts', accept)).toMatchObject({ behavior: 'ask', type: 'working_dir' });
  });

  it('knows Claude Code\u2019s protected paths, case-insensitively', () => {
    expect(protectedPathReason('/p/.git/config')).toBeDefined();
    expect(protectedPathReason('/p/.GIT/hooks/pre-commit')).toBeDefined();
    expect(protectedPathReason('/p/sub/.git')).toBeDefined();
    expect(protectedPathReason('/p/.claude/settings.json')).toBeDefined();
    expect(protectedPathReason('/p/.claude/worktrees/w/a.ts')).toBeUndefined();
    expect(protectedPathReason('/home/u/.bashrc')).toBeDefined();
    expect(protectedPathReason('/p/.mcp.json')).toBeDefined();
    expect(protectedPathReason('/p/.vscode/settings.json')).toBeDefined();
    expect(protectedPathReason('/p/src/git.ts')).toBeUndefined();
    expect(protectedPathReason('/p/.gitignore')).toBeUndefined();
  });
});

describe('confinement through the pipeline', () => {
  it('asks (working_dir) for a Read outside the workspace in every spelling: denied headless, audited, nothing read', async () => {
    const outside = tmpDir();
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'TOP SECRET');
    t = await fileApp();
    fs.symlinkSync(outside, path.join(t.workspace, 'door'));
    const rel = path.relative(t.workspace, path.join(outside, 'secret.txt'));
    const spellings = [
      path.join(outside, 'secret.txt'),
      rel,
      `${t.workspace}/./sub/../${rel}`,
      `${t.workspace}//door//secret.txt`,
      path.join(t.workspace, 'door', 'secret.txt'),
    ];
    for (const file_path of spellings) {
      const r = await call(t, 'Read', { file_path });
      expect(r, file_path).toMatchObject({ isError: true, status: 'denied' });
      expect(r.text).not.toContain('TOP SECRET');
      expect(r.decision?.reason.type).toBe('headless');
      const tool = decisionChain(t, r.executionId).find((s) => s.layer === 'tool');
      expect(tool).toMatchObject({ outcome: 'ask' });
      expect(tool?.detail).toBe(`working_dir: ${path.join(outside, 'secret.txt')}`);
    }
    const audit = t.app.toolexec.audit.query({ limit: 10 });
    expect(audit.filter((a) => a.tool === 'Read' && a.behavior === 'deny' && a.reason_type === 'headless')).toHaveLength(spellings.length);
  });

  it('asks (working_dir) for a Write outside the workspace, even with an Edit allow rule on the spelling; nothing written', async () => {
    const outside = tmpDir();
    t = await fileApp({ permissions: { allow: ['Edit(./**)'] } });
    fs.symlinkSync(outside, path.join(t.workspace, 'door'));
    const inside = await call(t, 'Write', { file_path: path.join(t.workspace, 'ok.txt'), content: 'ok' });
    expect(inside.isError).toBe(false);
    for (const file_path of [path.join(outside, 'a.txt'), path.join(t.workspace, 'door', 'a.txt'), '../' + path.basename(outside) + '/a.txt']) {
      const r = await call(t, 'Write', { file_path, content: 'pwned' });
      expect(r, file_path).toMatchObject({ isError: true, status: 'denied' });
      expect(decisionChain(t, r.executionId).find((s) => s.layer === 'tool')?.detail).toMatch(/^working_dir: /);
    }
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('does not look at a file outside before the permission layer asked (no existence or name leaks)', async () => {
    const outside = tmpDir();
    fs.writeFileSync(path.join(outside, 'private-notes.md'), 'x\n');
    t = await fileApp();
    const r = await call(t, 'Edit', { file_path: path.join(outside, 'private-notes.txt'), old_string: 'x', new_string: 'y' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(r.text).not.toContain('private-notes.md');
    expect(r.text).not.toContain('does not exist');
    await t.close();
    // Once allowed (bypass mode), the checks run at call time: an unread file is refused as not read.
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    const b = await call(t, 'Edit', { file_path: path.join(outside, 'private-notes.md'), old_string: 'x', new_string: 'y' });
    expect(b).toMatchObject({ isError: true, status: 'failed' });
    expect(b.text).toContain('File has not been read yet. Read it first before writing to it.');
    expect(fs.readFileSync(path.join(outside, 'private-notes.md'), 'utf8')).toBe('x\n');
  });

  it('lets additionalDirectories in', async () => {
    const extra = tmpDir();
    fs.writeFileSync(path.join(extra, 'shared.txt'), 'shared');
    t = await fileApp({ workspace: { additionalDirectories: [extra] } });
    const r = await call(t, 'Read', { file_path: path.join(extra, 'shared.txt') });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('shared');
  });

  it('in default mode an Edit without an allow rule asks and is denied headless; acceptEdits allows it inside', async () => {
    t = await fileApp();
    const f = path.join(t.workspace, 'a.txt');
    fs.writeFileSync(f, 'x\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'x', new_string: 'y' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    await t.close();
    t = await fileApp({ permissions: { defaultMode: 'acceptEdits' } });
    const g = path.join(t.workspace, 'a.txt');
    fs.writeFileSync(g, 'x\n');
    await call(t, 'Read', { file_path: g });
    const ok = await call(t, 'Edit', { file_path: g, old_string: 'x', new_string: 'y' });
    expect(ok.isError).toBe(false);
    expect(ok.decision?.reason.type).toBe('mode');
  });

  it('protected paths ask even in bypassPermissions mode: denied headless, audited, file untouched', async () => {
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    const gitConfig = path.join(t.workspace, '.git', 'config');
    fs.mkdirSync(path.dirname(gitConfig));
    fs.writeFileSync(gitConfig, '[core]\n');
    await call(t, 'Read', { file_path: gitConfig });
    const r = await call(t, 'Edit', { file_path: gitConfig, old_string: '[core]', new_string: '[core]\n\thooksPath = /tmp/evil' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(r.decision?.reason.type).toBe('headless');
    expect(decisionChain(t, r.executionId).find((s) => s.layer === 'tool')).toMatchObject({ outcome: 'ask', detail: expect.stringMatching(/^safety: /) });
    expect(fs.readFileSync(gitConfig, 'utf8')).toBe('[core]\n');
    const audit = t.app.toolexec.audit.query({ limit: 10 });
    expect(audit.find((a) => a.execution_id === r.executionId)).toMatchObject({ tool: 'Edit', behavior: 'deny', reason_type: 'headless' });
    for (const p of ['.claude/settings.json', '.mcp.json', '.bashrc', '.GIT/HEAD']) {
      const w = await call(t, 'Write', { file_path: path.join(t.workspace, p), content: 'x' });
      expect(w, p).toMatchObject({ isError: true, status: 'denied' });
      expect(fs.existsSync(path.join(t.workspace, p))).toBe(false);
    }
    // An ordinary file in bypass mode is written.
    expect((await call(t, 'Write', { file_path: path.join(t.workspace, 'plain.txt'), content: 'x' })).isError).toBe(false);
  });

  it('a protected path reached through a symlink is still protected', async () => {
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    fs.mkdirSync(path.join(t.workspace, '.git'));
    fs.symlinkSync(path.join(t.workspace, '.git'), path.join(t.workspace, 'g'));
    const r = await call(t, 'Write', { file_path: path.join(t.workspace, 'g', 'config'), content: 'x' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(fs.existsSync(path.join(t.workspace, '.git', 'config'))).toBe(false);
  });

  it('Edit rules cover Write and NotebookEdit; Read deny rules hold for NFD spellings of a name', async () => {
    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    t = await fileApp({ permissions: { allow: ['Write'], deny: ['Edit(./vendor/**)', `Read(./${nfc})`] } });
    const w = await call(t, 'Write', { file_path: path.join(t.workspace, 'vendor', 'lib.js'), content: 'x' });
    expect(w.isError).toBe(true);
    expect(fs.existsSync(path.join(t.workspace, 'vendor'))).toBe(false);
    fs.writeFileSync(path.join(t.workspace, nfd), 'hidden');
    const r = await call(t, 'Read', { file_path: path.join(t.workspace, nfd) });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(r.decision?.reason).toEqual({ type: 'rule', detail: `Read(./${nfc})` });
  });

  it('resolves ~ in paths to the home directory (outside the workspace: asks)', async () => {
    t = await fileApp();
    const r = await call(t, 'Read', { file_path: '~/.bashrc' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(decisionChain(t, r.executionId).find((s) => s.layer === 'tool')?.detail).toContain(os.homedir());
  });
});

describe("toolexec's own files (configuration, database) are out of every tool's reach", () => {
  const ADMIN = 'admin-token-BBBBBBBBBBBBBBBBBBBB';
  /** The README's quick start: the configuration in the workspace, SQLite under .toolexec/ in it. */
  async function ownFilesApp(permissions: Record<string, unknown> = {}): Promise<TestApp> {
    const ws = path.join(tmpDir(), 'ws');
    fs.mkdirSync(ws);
    const configFile = path.join(ws, 'toolexec.json');
    fs.writeFileSync(configFile, JSON.stringify({ server: { tokens: [{ name: 'admin', token: ADMIN, scopes: ['admin'] }] } }));
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'token: none here\n');
    const dbPath = path.join(ws, '.toolexec', 'toolexec.db');
    const app = await buildApp({
      logger: false,
      extraTools: fileTools,
      configFiles: [configFile],
      config: { workspace: { root: ws }, storage: { path: dbPath }, permissions },
    });
    return { app, workspace: ws, dbPath, close: () => app.close() };
  }

  const chainTool = (r: { executionId: string }) => decisionChain(t!, r.executionId).find((s) => s.layer === 'tool');

  it('Read, Grep, Glob and NotebookEdit are denied (safety) even with allow rules in bypassPermissions', async () => {
    t = await ownFilesApp({ defaultMode: 'bypassPermissions', allowBypass: true, allow: ['Read', 'Grep', 'Glob', 'Read(./**)'] });
    // Something is in the database (and its -wal) by now.
    await call(t, 'Read', { file_path: 'notes.txt' });
    const ws = t.workspace;
    const targets = ['toolexec.json', path.join(ws, 'toolexec.json'), `${ws}/./sub/../toolexec.json`, '.toolexec/toolexec.db', '.toolexec/toolexec.db-wal', '.toolexec'];
    for (const file_path of targets) {
      const r = await call(t, 'Read', { file_path });
      expect(r, file_path).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type, file_path).toBe('safety');
      expect(r.text).not.toContain(ADMIN);
      expect(r.text).toMatch(/toolexec's own files|toolexec's data directory/);
    }
    fs.symlinkSync(path.join(ws, '.toolexec'), path.join(ws, 'dbl'));
    fs.symlinkSync(path.join(ws, 'toolexec.json'), path.join(ws, 'cfg-link'));
    for (const file_path of ['dbl/toolexec.db', 'cfg-link']) {
      const r = await call(t, 'Read', { file_path });
      expect(r, file_path).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type).toBe('safety');
    }
    // Grep: aimed at them, denied; over the workspace, they are not searched.
    for (const p of ['toolexec.json', '.toolexec', 'dbl']) {
      const r = await call(t, 'Grep', { pattern: 'token', path: p });
      expect(r, p).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type).toBe('safety');
    }
    const g = await call(t, 'Grep', { pattern: 'token|s-files', path: '.', output_mode: 'content' });
    expect(g.isError).toBe(false);
    expect(g.text).toContain('notes.txt');
    expect(g.text).not.toContain(ADMIN);
    expect(g.text).not.toMatch(/toolexec\.json|toolexec\.db|cfg-link/);
    // Glob: not listed, also through a symlink; aimed at the data directory, denied.
    const all = await call(t, 'Glob', { pattern: '**/*' });
    expect(all.text).toContain('notes.txt');
    expect(all.text).not.toMatch(/toolexec\.json|toolexec\.db|cfg-link/);
    for (const pattern of ['.toolexec/*', 'dbl/*', '*.json']) {
      const r = await call(t, 'Glob', { pattern });
      expect(r.text, pattern).not.toMatch(/toolexec\.json|toolexec\.db/);
    }
    const gd = await call(t, 'Glob', { pattern: '*', path: '.toolexec' });
    expect(gd).toMatchObject({ isError: true, status: 'denied' });
    // NotebookEdit reads the notebook (and returns it): refused before it is read.
    fs.writeFileSync(path.join(ws, '.toolexec', 'x.ipynb'), JSON.stringify({ cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const input = { notebook_path: '.toolexec/x.ipynb', new_source: 'x', edit_mode: 'insert', cell_type: 'code' };
    expect((await call(t, 'NotebookEdit', input)).isError).toBe(true);
    const check = await t.app.inject({ method: 'POST', url: '/permissions/check', payload: { session_id: 's-files', name: 'NotebookEdit', input } });
    expect(check.json()).toMatchObject({ behavior: 'deny', reason: { type: 'safety' } });
  });

  it('Write and Edit of them are denied (safety), whatever the mode and rules', async () => {
    t = await ownFilesApp({ defaultMode: 'bypassPermissions', allowBypass: true, allow: ['Edit', 'Write', 'Edit(./**)'] });
    // A file that does not exist yet: nothing stops a Write before the permission layer.
    for (const file_path of ['.toolexec/new-file', 'toolexec.db-wal-but-not']) {
      const r = await call(t, 'Write', { file_path: file_path.replace('toolexec.db-wal-but-not', '.toolexec/toolexec.db-journal'), content: '{}' });
      expect(r, file_path).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type).toBe('safety');
    }
    expect(fs.existsSync(path.join(t.workspace, '.toolexec', 'new-file'))).toBe(false);
    // One that exists: never read, so Write and Edit are refused; the permission layer says why.
    for (const name of ['Write', 'Edit'] as const) {
      const input = name === 'Write' ? { file_path: 'toolexec.json', content: '{}' } : { file_path: 'toolexec.json', old_string: 'admin', new_string: 'x' };
      const r = await call(t, name, input);
      expect(r.isError).toBe(true);
      expect(r.text).not.toContain(ADMIN);
      const check = await t.app.inject({ method: 'POST', url: '/permissions/check', payload: { session_id: 's-files', name, input } });
      expect(check.json(), name).toMatchObject({ behavior: 'deny', reason: { type: 'safety' } });
    }
    expect(fs.readFileSync(path.join(t.workspace, 'toolexec.json'), 'utf8')).toContain(ADMIN);
  });

  it('Bash: reading them is denied (safety), a recursive read over them or an unknown read asks, even in bypassPermissions', async () => {
    t = await ownFilesApp({ defaultMode: 'bypassPermissions', allowBypass: true, allow: ['Bash'] });
    await call(t, 'Read', { file_path: 'notes.txt' });
    for (const command of ['cat toolexec.json', 'strings .toolexec/toolexec.db | grep -m3 s-files', 'head -c 100 < toolexec.json', 'cat *.json', 'cp toolexec.json copy.json', 'cat .toolexec/*']) {
      const r = await call(t, 'Bash', { command });
      expect(r, command).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type, command).toBe('safety');
      expect(r.text).not.toContain(ADMIN);
    }
    for (const command of ['grep -r token .', 'f=toolexec.json; cat "$f"']) {
      const r = await call(t, 'Bash', { command });
      expect(r, command).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type, command).toBe('headless');
      expect(chainTool(r)).toMatchObject({ outcome: 'ask', detail: expect.stringMatching(/^safety: /) });
      expect(r.text).not.toContain(ADMIN);
    }
    for (const command of ['rm -rf .toolexec', 'echo {} > toolexec.json']) {
      const r = await call(t, 'Bash', { command });
      expect(r, command).toMatchObject({ isError: true, status: 'denied' });
      expect(r.decision?.reason.type, command).toBe('safety');
    }
    expect(fs.readFileSync(path.join(t.workspace, 'toolexec.json'), 'utf8')).toContain(ADMIN);
    expect(fs.existsSync(t.dbPath)).toBe(true);
    // What is not theirs still runs.
    const ok = await call(t, 'Bash', { command: 'cat notes.txt && grep -r token notes.txt' });
    expect(ok.isError).toBe(false);
    expect(ok.text).toContain('token: none here');
  });

  it('in the default mode, a read-only Bash command on them is not allowed as read-only', async () => {
    t = await ownFilesApp();
    const r = await call(t, 'Bash', { command: 'cat toolexec.json' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(r.decision?.reason.type).toBe('safety');
    expect((await call(t, 'Bash', { command: 'cat notes.txt' })).isError).toBe(false);
  });

  it('a database kept in the workspace root itself protects the database and its -wal/-shm, not the root', () => {
    const root = tmpDir();
    const w = new Workspace(root, [], { serviceFiles: { config: [path.join(root, 'cfg.json')], database: path.join(root, 'x.db') } });
    for (const p of ['cfg.json', 'x.db', 'x.db-wal', 'x.db-shm', 'x.db-journal']) expect(w.serviceFileReason(path.join(root, p)), p).toBeDefined();
    expect(w.serviceFileReason(path.join(root, 'src', 'a.ts'))).toBeUndefined();
    expect(w.serviceFileReason(root)).toBeUndefined();
    expect(w.serviceFileBelow(root)).toBeDefined();
    expect(w.serviceFileBelow(path.join(root, 'src'))).toBeUndefined();
    const none = new Workspace(root, [], { serviceFiles: { database: ':memory:' } });
    expect(none.hasServiceFiles).toBe(false);
  });
});
