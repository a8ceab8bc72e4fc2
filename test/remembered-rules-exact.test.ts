/**
 * The rule an approver's `remember` keeps covers exactly the call approved: a file whose name holds a
 * character globs give a meaning to (`[id].ts`, `notes*.md`, `a{b,c}`), a command holding `*` or a
 * trailing `:*`. Before, the path went into the rule as it was, and the rule covered other files (or, for
 * `[id]`, not the file itself), and the command became a wildcard or prefix rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { fileApp } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  cleanupTmp();
});

const SESSION = 's-remember';
const waitConfig = { permissions: { headless: 'wait' as const, askTimeoutMs: 30_000 } };

async function until<T>(get: () => T | undefined, what: string): Promise<T> {
  const end = Date.now() + 10_000;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs one call that asks and answers it with `answer`; the answer's HTTP status and the call's result text. */
async function answered(app: TestApp, name: string, input: unknown, answer: Record<string, unknown>) {
  const pending = execute(app.app, { session_id: SESSION, tool_uses: [use(name, input)] });
  const req = await until(() => app.app.toolexec.broker.list().pending[0], 'the permission request');
  const res = await app.app.inject({ method: 'POST', url: `/permissions/requests/${req.id}`, payload: answer });
  if (res.statusCode !== 200) {
    // Still pending: answered again without remember, so that the call ends.
    const again = await app.app.inject({ method: 'POST', url: `/permissions/requests/${req.id}`, payload: { decision: 'deny' } });
    expect(again.statusCode).toBe(200);
  }
  const r = await pending;
  return { status: res.statusCode, body: res.json() as { message?: string }, suggested: req.suggested_rule, text: textOf(r.body.tool_results[0]!.content) };
}

/** The decision the session's rules give a call now (running nothing). */
async function check(app: TestApp, name: string, input: unknown): Promise<{ behavior: string; reason: { type: string; detail: string } }> {
  const res = await app.app.inject({ method: 'POST', url: '/permissions/check', payload: { name, input, session_id: SESSION } });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('remember: a file tool’s rule covers that file only', () => {
  const cases: Array<{ name: string; sibling: string }> = [
    { name: '[id].ts', sibling: 'i.ts' },
    { name: 'notes*.md', sibling: 'notes-secret.md' },
    { name: 'a{b,c}', sibling: 'ab' },
    { name: 'a?c', sibling: 'abc' },
    { name: '+(x)', sibling: 'x' },
  ];
  for (const { name, sibling } of cases) {
    it(`Read of ${name} remembered: ${name} is allowed, ${sibling} still asks`, async () => {
      t = await fileApp(waitConfig);
      const out = tmpDir();
      fs.writeFileSync(path.join(out, name), 'approved\n');
      fs.writeFileSync(path.join(out, sibling), 'other\n');
      const r = await answered(t, 'Read', { file_path: path.join(out, name) }, { decision: 'allow', remember: 'session' });
      expect(r.status).toBe(200);
      expect(r.text).toContain('approved');
      expect(await check(t, 'Read', { file_path: path.join(out, name) })).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: r.suggested } });
      expect((await check(t, 'Read', { file_path: path.join(out, sibling) })).behavior).toBe('ask');
    });
  }

  it('Edit of src/[id].ts in the workspace remembered: that file is allowed, src/d.ts still asks', async () => {
    t = await fileApp(waitConfig);
    fs.mkdirSync(path.join(t.workspace, 'src'));
    const file = path.join(t.workspace, 'src', '[id].ts');
    const r = await answered(t, 'Write', { file_path: file, content: 'export {};\n' }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect(fs.readFileSync(file, 'utf8')).toBe('export {};\n');
    expect((await check(t, 'Write', { file_path: file, content: 'x' })).behavior).toBe('allow');
    expect((await check(t, 'Write', { file_path: path.join(t.workspace, 'src', 'd.ts'), content: 'x' })).behavior).toBe('ask');
  });
});

describe('remember: a Bash rule covers that command only', () => {
  it('a command ending in :* is not remembered as a prefix rule', async () => {
    t = await fileApp(waitConfig);
    const r = await answered(t, 'Bash', { command: 'rm -f cache:*' }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect((await check(t, 'Bash', { command: 'rm -f cache:*' })).behavior).toBe('allow');
    expect((await check(t, 'Bash', { command: 'rm -f cache /etc/hosts' })).behavior).toBe('ask');
  });

  it('a command holding * is not remembered as a wildcard rule', async () => {
    t = await fileApp(waitConfig);
    const r = await answered(t, 'Bash', { command: 'rm -f *.log' }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect((await check(t, 'Bash', { command: 'rm -f *.log' })).behavior).toBe('allow');
    expect((await check(t, 'Bash', { command: 'rm -f notes.txt x.log' })).behavior).toBe('ask');
  });

  it('a command holding parentheses is remembered exactly', async () => {
    t = await fileApp(waitConfig);
    const r = await answered(t, 'Bash', { command: "rm -f '(a)'" }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect((await check(t, 'Bash', { command: "rm -f '(a)'" })).behavior).toBe('allow');
    expect((await check(t, 'Bash', { command: "rm -f '(b)'" })).behavior).toBe('ask');
  });

  it('a command holding \\* and \\\\ is remembered exactly (a rule’s \\* is a star, its \\\\ a backslash)', async () => {
    t = await fileApp(waitConfig);
    const r = await answered(t, 'Bash', { command: String.raw`rm -f \*.tmp a\\b` }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect((await check(t, 'Bash', { command: String.raw`rm -f \*.tmp a\\b` })).behavior).toBe('allow');
    for (const other of ['rm -f *.tmp a\\b', String.raw`rm -f \*.tmp a\b`, String.raw`rm -f x.tmp a\\b`]) {
      expect((await check(t, 'Bash', { command: other })).behavior).toBe('ask');
    }
  });
});

describe('remember with updated_input: the rule covers the call that runs', () => {
  it('rm -rf build dist edited to rm -rf build: the edited call is allowed, the model’s still asks', async () => {
    t = await fileApp(waitConfig);
    fs.mkdirSync(path.join(t.workspace, 'build'));
    fs.mkdirSync(path.join(t.workspace, 'dist'));
    const r = await answered(t, 'Bash', { command: 'rm -rf build dist' }, { decision: 'allow', remember: 'session', updated_input: { command: 'rm -rf build' } });
    expect(r.status).toBe(200);
    expect(fs.existsSync(path.join(t.workspace, 'build'))).toBe(false);
    expect(fs.existsSync(path.join(t.workspace, 'dist'))).toBe(true);
    expect(await check(t, 'Bash', { command: 'rm -rf build' })).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(rm -rf build)' } });
    expect((await check(t, 'Bash', { command: 'rm -rf build dist' })).behavior).toBe('ask');
  });

  it('a Read whose path was edited: the edited file is allowed, the model’s still asks', async () => {
    t = await fileApp(waitConfig);
    const out = tmpDir();
    fs.writeFileSync(path.join(out, 'public.txt'), 'public\n');
    fs.writeFileSync(path.join(out, 'secret.txt'), 'secret\n');
    const r = await answered(t, 'Read', { file_path: path.join(out, 'secret.txt') }, { decision: 'allow', remember: 'session', updated_input: { file_path: path.join(out, 'public.txt') } });
    expect(r.status).toBe(200);
    expect(r.text).toContain('public');
    expect((await check(t, 'Read', { file_path: path.join(out, 'public.txt') })).behavior).toBe('allow');
    expect((await check(t, 'Read', { file_path: path.join(out, 'secret.txt') })).behavior).toBe('ask');
  });

  it('an explicit rule is kept as sent', async () => {
    t = await fileApp(waitConfig);
    const r = await answered(t, 'Bash', { command: 'rm -f one two' }, { decision: 'allow', remember: 'session', rule: 'Bash(rm -f:*)', updated_input: { command: 'rm -f one' } });
    expect(r.status).toBe(200);
    expect(await check(t, 'Bash', { command: 'rm -f three' })).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(rm -f:*)' } });
  });
});

describe('remember through a symlinked directory: the rule names where the call led, and only that file', () => {
  /** Another remembered rule: the session's rules are compiled again, their symlinks read as they are now. */
  async function rebuild(app: TestApp): Promise<void> {
    const res = await app.app.inject({ method: 'POST', url: '/permissions/rules', payload: { behavior: 'allow', rule: 'Bash(make:*)', scope: 'always' } });
    expect(res.statusCode).toBe(201);
  }

  // `a (1).txt` and `@x.txt`: characters a rule escapes, which the rule's symlinked prefix was never resolved through.
  for (const name of ['a.txt', 'a (1).txt', '@x.txt']) {
    it(`Write of link/${name} (link → real, in the workspace) remembered: allowed by either name, real/b.txt still asks`, async () => {
      t = await fileApp(waitConfig);
      fs.mkdirSync(path.join(t.workspace, 'real'));
      fs.symlinkSync('real', path.join(t.workspace, 'link'));
      const file = path.join(t.workspace, 'link', name);
      const r = await answered(t, 'Write', { file_path: file, content: 'one\n' }, { decision: 'allow', remember: 'session' });
      expect(r.status).toBe(200);
      expect(fs.readFileSync(path.join(t.workspace, 'real', name), 'utf8')).toBe('one\n');
      expect(r.suggested).toContain(`/real/`);
      expect(await check(t, 'Write', { file_path: file, content: 'x' })).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: r.suggested } });
      expect((await check(t, 'Write', { file_path: path.join(t.workspace, 'real', name), content: 'x' })).behavior).toBe('allow');
      expect((await check(t, 'Write', { file_path: path.join(t.workspace, 'real', 'b.txt'), content: 'x' })).behavior).toBe('ask');
      expect((await check(t, 'Write', { file_path: path.join(t.workspace, 'link', 'b.txt'), content: 'x' })).behavior).toBe('ask');
    });
  }

  it('Read of link/@x.txt (link → a directory outside the working directories) remembered: allowed again, a sibling still asks', async () => {
    t = await fileApp(waitConfig);
    const out = tmpDir();
    fs.writeFileSync(path.join(out, '@x.txt'), 'approved\n');
    fs.writeFileSync(path.join(out, 'y.txt'), 'other\n');
    fs.symlinkSync(out, path.join(t.workspace, 'link'));
    const file = path.join(t.workspace, 'link', '@x.txt');
    const r = await answered(t, 'Read', { file_path: file }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect(r.text).toContain('approved');
    expect(await check(t, 'Read', { file_path: file })).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: r.suggested } });
    expect((await check(t, 'Read', { file_path: path.join(t.workspace, 'link', 'y.txt') })).behavior).toBe('ask');
  });

  it('the link swapped to another directory after remembering: link/a.txt (now another file) asks, the approved file is still allowed', async () => {
    t = await fileApp(waitConfig);
    fs.mkdirSync(path.join(t.workspace, 'real'));
    fs.mkdirSync(path.join(t.workspace, 'other'));
    fs.writeFileSync(path.join(t.workspace, 'other', 'a.txt'), 'other\n');
    fs.symlinkSync('real', path.join(t.workspace, 'link'));
    const file = path.join(t.workspace, 'link', 'a.txt');
    const r = await answered(t, 'Write', { file_path: file, content: 'one\n' }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    expect((await check(t, 'Write', { file_path: file, content: 'x' })).behavior).toBe('allow');
    fs.unlinkSync(path.join(t.workspace, 'link'));
    fs.symlinkSync('other', path.join(t.workspace, 'link'));
    await rebuild(t);
    expect((await check(t, 'Write', { file_path: file, content: 'x' })).behavior).toBe('ask');
    expect((await check(t, 'Write', { file_path: path.join(t.workspace, 'other', 'a.txt'), content: 'x' })).behavior).toBe('ask');
    expect((await check(t, 'Write', { file_path: path.join(t.workspace, 'real', 'a.txt'), content: 'x' })).behavior).toBe('allow');
  });

  it('the approved file’s directory replaced by a symlink after remembering: the rule does not follow it to another file', async () => {
    t = await fileApp(waitConfig);
    fs.mkdirSync(path.join(t.workspace, 'real'));
    fs.symlinkSync('real', path.join(t.workspace, 'link'));
    const out = tmpDir();
    fs.writeFileSync(path.join(out, 'a.txt'), 'elsewhere\n');
    const r = await answered(t, 'Write', { file_path: path.join(t.workspace, 'link', 'a.txt'), content: 'one\n' }, { decision: 'allow', remember: 'session' });
    expect(r.status).toBe(200);
    fs.renameSync(path.join(t.workspace, 'real'), path.join(t.workspace, 'real.old'));
    fs.symlinkSync(out, path.join(t.workspace, 'real'));
    await rebuild(t);
    for (const p of [path.join(t.workspace, 'real', 'a.txt'), path.join(t.workspace, 'link', 'a.txt'), path.join(out, 'a.txt')]) {
      expect((await check(t, 'Write', { file_path: p, content: 'x' })).behavior, p).toBe('ask');
    }
  });
});
