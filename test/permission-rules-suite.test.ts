/**
 * The reference's rule examples and pitfalls, end to end through POST
 * /execute with the real Bash, Read, Write and WebFetch tools: compound
 * commands and wrappers under deny rules (the pipeline path; the exhaustive
 * list is test/bash-rules.test.ts), path spellings and symlinks for Read/Edit
 * rules, domain tricks for WebFetch rules, protected paths in
 * bypassPermissions, a hook's allow against deny and ask rules, a hook's
 * updatedInput judged again, Bash paths through a symlink and `..`, output
 * redirections judged as edits of their targets (the wrappers added to the
 * stripped list are in bash-path-bypass.test.ts) — and the audit reason type
 * each leaves.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { cleanupTmp, makeApp, tmpDir, type TestApp } from './helpers.js';
import { BYPASS } from './helpers-bash.js';
import { lastAudit, printing, run } from './helpers-hooks.js';
import { waitFor } from './helpers-mcp.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);


describe('Bash deny rules through the pipeline: compound commands and wrappers', () => {
  // bypassPermissions and a whole-tool allow: the deny rule is the only thing in the way.
  const attacks = [
    'git status && rm -f victim', // pitfall 1
    'echo ok; rm -f victim',
    'timeout 5 rm -f victim', // pitfall 2
    'command rm -f victim',
    'FOO=1 nice -n 5 rm -f victim',
    'echo "$(rm -f victim)"', // pitfall 4
    '{ rm -f victim; }',
    'bash -c "rm -f victim"',
    "r'm' -f victim",
    // Wrappers named by their path (found in review).
    '/usr/bin/env rm -f victim',
    '/usr/bin/timeout 5 rm -f victim',
    '/usr/bin/nohup rm -f victim',
  ];
  it.each(attacks)('%s is denied by Bash(rm:*) (audit: rule), and victim survives', async (command) => {
    t = await makeApp({ permissions: { ...BYPASS, allow: ['Bash'], deny: ['Bash(rm:*)'] } });
    fs.writeFileSync(path.join(t.workspace, 'victim'), 'x');
    const r = await run(t, 'Bash', { command });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm:*)' } } });
    expect(fs.existsSync(path.join(t.workspace, 'victim'))).toBe(true);
    expect(lastAudit(t)).toMatchObject({ tool: 'Bash', behavior: 'deny', reason_type: 'rule', reason_detail: 'Bash(rm:*)' });
  });

  it.each(['x=rm; $x -f victim', 'c=rm; "$c" -f victim'])(
    '%s (a command name hidden in an expansion) is never allowed while Bash deny rules exist, even in bypass mode',
    async (command) => {
      t = await makeApp({ permissions: { ...BYPASS, allow: ['Bash'], deny: ['Bash(rm:*)'] } });
      fs.writeFileSync(path.join(t.workspace, 'victim'), 'x');
      const r = await run(t, 'Bash', { command });
      expect(r.exec).toMatchObject({ status: 'denied' });
      expect(fs.existsSync(path.join(t.workspace, 'victim'))).toBe(true);
      expect(r.chain.find((c) => c.layer === 'tool')).toMatchObject({ outcome: 'ask' });
      expect(r.chain.find((c) => c.layer === 'tool')!.detail).toMatch(/^safety: too complex/);
    },
  );

  it('a prefix deny rule is literal, as in Claude Code (pitfall 3): `rm -fr` is not `rm -rf`, so it only asks', async () => {
    t = await makeApp({ permissions: { deny: ['Bash(rm -rf:*)'] } });
    fs.mkdirSync(path.join(t.workspace, 'victim'));
    expect((await run(t, 'Bash', { command: 'rm -rf victim' })).exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: 'Bash(rm -rf:*)' } } });
    // Not matched by the rule: undecided, so it asks; headless denies. Under bypassPermissions it would run.
    const fr = await run(t, 'Bash', { command: 'rm -fr victim' });
    expect(fr.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fr.chain.find((c) => c.layer === 'rules')).toBeUndefined();
    expect(fs.existsSync(path.join(t.workspace, 'victim'))).toBe(true);
  });

  it('an allow rule never carries a chained command (`Bash(git:*)` vs `git status && touch pwned`): audit headless', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(git:*)'] } });
    const r = await run(t, 'Bash', { command: 'git status && touch pwned' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fs.existsSync(path.join(t.workspace, 'pwned'))).toBe(false);
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'headless' });
  });
});

describe('Read and Edit rules: path spellings and symlinks', () => {
  const setup = async (config: ConfigInput) => {
    t = await makeApp(config);
    const ws = t.workspace;
    fs.writeFileSync(path.join(ws, '.env'), 'TOKEN=top-secret\n');
    fs.mkdirSync(path.join(ws, 'sub'));
    fs.writeFileSync(path.join(ws, 'sub', '.env'), 'SUB=nested\n');
    fs.symlinkSync(path.join(ws, '.env'), path.join(ws, 'innocent.txt'));
    fs.symlinkSync(ws, path.join(ws, 'loop'));
    return ws;
  };

  it('Read(./.env) holds for every spelling of the file: relative, ./sub/.., absolute, //, a symlink, a symlinked dir', async () => {
    const ws = await setup({ permissions: { deny: ['Read(./.env)'] } });
    const spellings = ['.env', './.env', 'sub/../.env', './sub/../.env', path.join(ws, '.env'), `${ws}//.env`, `${ws}/./sub/../.env`, 'innocent.txt', 'loop/.env', 'loop/loop/.env'];
    for (const file_path of spellings) {
      const r = await run(t!, 'Read', { file_path });
      expect(r.exec, file_path).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Read(./.env)' } } });
      expect(r.text).not.toContain('top-secret');
      expect(lastAudit(t!)).toMatchObject({ behavior: 'deny', reason_type: 'rule', reason_detail: 'Read(./.env)' });
    }
    // As in Claude Code, `./.env` is `.env`, at every depth: sub/.env is denied too.
    expect((await run(t!, 'Read', { file_path: 'sub/.env' })).exec).toMatchObject({ status: 'denied', decision: { reason: { detail: 'Read(./.env)' } } });
  });

  it('Read(/.env) is anchored at the project root: sub/.env is another file', async () => {
    await setup({ permissions: { deny: ['Read(/.env)'] } });
    expect((await run(t!, 'Read', { file_path: '.env' })).exec.status).toBe('denied');
    expect((await run(t!, 'Read', { file_path: 'sub/.env' })).exec.status).toBe('succeeded');
  });

  it('a bare Read(.env) covers every depth; on case-sensitive Linux `.ENV` is another file and is readable', async () => {
    const ws = await setup({ permissions: { deny: ['Read(.env)'] } });
    expect((await run(t!, 'Read', { file_path: 'sub/.env' })).exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: 'Read(.env)' } } });
    fs.writeFileSync(path.join(ws, '.ENV'), 'UPPER=case\n');
    expect(t!.app.toolexec.workspace.caseInsensitive).toBe(false);
    const upper = await run(t!, 'Read', { file_path: '.ENV' });
    expect(upper.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'working_dir' } } });
    expect(upper.text).toContain('UPPER=case');
  });

  it('Read(//abs) denies an absolute path outside the workspace before the working-directory ask; other outside reads ask', async () => {
    const outside = tmpDir();
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside-secret');
    fs.writeFileSync(path.join(outside, 'other.txt'), 'other-outside-content');
    await setup({ permissions: { deny: [`Read(/${outside}/secret.txt)`] } });
    const d = await run(t!, 'Read', { file_path: path.join(outside, 'secret.txt') });
    expect(d.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: `Read(/${outside}/secret.txt)` } } });
    const o = await run(t!, 'Read', { file_path: path.join(outside, 'other.txt') });
    expect(o.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(o.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: expect.stringMatching(/^working_dir: /) }));
    expect(o.text).not.toContain('other-outside-content');
  });

  it('Edit(./config/**) stops Write through `..`, a symlinked directory and an absolute path, at validation as in Claude Code', async () => {
    t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./config/**)'] } });
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, 'config'));
    fs.mkdirSync(path.join(ws, 'sub'));
    fs.symlinkSync(path.join(ws, 'config'), path.join(ws, 'cfg'));
    for (const file_path of ['config/app.json', 'sub/../config/app.json', 'cfg/app.json', path.join(ws, 'config', 'app.json'), `${ws}//config/app.json`]) {
      const r = await run(t, 'Write', { file_path, content: '{}' });
      // Claude Code's FileWriteTool refuses it in validateInput (errorCode 2), before any permission layer.
      expect(r.exec, file_path).toMatchObject({ status: 'failed', error_class: 'validation', decision: null });
      expect(r.text).toContain('File is in a directory that is denied by your permission settings.');
      expect(fs.existsSync(path.join(ws, 'config', 'app.json'))).toBe(false);
    }
    expect(t.app.toolexec.audit.query({ limit: 10 })).toEqual([]);
    // A sibling outside the rule is written (bypass mode).
    expect((await run(t, 'Write', { file_path: 'configs.json', content: '{}' })).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'mode', detail: 'bypassPermissions' } } });
  });
});

describe('WebFetch domain rules: tricks through the pipeline (a real server on 127.0.0.1)', () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits += 1;
      res.setHeader('content-type', 'text/plain');
      res.end('served');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const app = () =>
    makeApp({
      webFetch: { allowPrivateNetwork: true, timeoutMs: 2000 },
      permissions: { allow: ['WebFetch(domain:localhost)'], deny: ['WebFetch(domain:127.0.0.1)'] },
    });

  it('the allowed host in any case, with a trailing dot: fetched (audit: rule)', async () => {
    t = await app();
    for (const url of [`http://localhost:${port}/a`, `http://LOCALHOST:${port}/b`]) {
      const r = await run(t, 'WebFetch', { url, prompt: 'p' });
      expect(r.exec, url).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'WebFetch(domain:localhost)' } } });
      expect(r.text).toContain('served');
    }
    expect(lastAudit(t)).toMatchObject({ behavior: 'allow', reason_type: 'rule', reason_detail: 'WebFetch(domain:localhost)' });
    // The trailing-dot spelling is the same host for the rule (the resolver here does not know `localhost.`, so only the decision is checked).
    const dot = await run(t, 'WebFetch', { url: `http://localhost.:${port}/c`, prompt: 'p' });
    expect(dot.exec.decision).toEqual({ behavior: 'allow', reason: { type: 'rule', detail: 'WebFetch(domain:localhost)' } });
  });

  it('the denied host in every spelling the URL parser folds to it: decimal, hex, short forms, IPv4-mapped IPv6, and 0.0.0.0 — denied, never contacted', async () => {
    t = await app();
    const before = hits;
    for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '0x7f.1', '127.1', '127.0.0.1.', '[::ffff:127.0.0.1]', '[::FFFF:7f00:1]', '0.0.0.0', '0']) {
      const r = await run(t, 'WebFetch', { url: `http://${host}:${port}/x`, prompt: 'p' });
      expect(r.exec, host).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'WebFetch(domain:127.0.0.1)' } } });
    }
    expect(hits).toBe(before);
    expect(lastAudit(t)).toMatchObject({ reason_type: 'rule', reason_detail: 'WebFetch(domain:127.0.0.1)' });
  });

  it('look-alikes of the allowed host are not allowed: a suffix, a prefix, an IPv6 spelling — no rule covers them, so they ask (headless deny)', async () => {
    t = await app();
    const before = hits;
    for (const url of [`http://localhost.evil.test:${port}/`, `http://evil-localhost:${port}/`, `http://[::1]:${port}/`]) {
      const r = await run(t, 'WebFetch', { url, prompt: 'p' });
      expect(r.exec, url).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
      expect(r.chain.find((c) => c.layer === 'rules')).toBeUndefined();
    }
    // User info naming the allowed host does not carry its allowance to another host: refused outright.
    const ui = await run(t, 'WebFetch', { url: `http://localhost@127.0.0.2:${port}/`, prompt: 'p' });
    expect(ui.exec).toMatchObject({ status: 'failed', error_class: 'validation' });
    expect(ui.text).toContain('user name or password');
    expect(hits).toBe(before);
  });
});

describe('protected paths in bypassPermissions', () => {
  it.each(['.git/config', '.GIT/config', '.claude/settings.json', '.vscode/settings.json', '.bashrc', '.mcp.json', 'sub/.gitmodules'])(
    'Write %s asks even in bypass mode (chain: safety) and is denied headless; nothing written',
    async (file) => {
      t = await makeApp({ permissions: { ...BYPASS } });
      fs.mkdirSync(path.join(t.workspace, path.dirname(file)), { recursive: true });
      const r = await run(t, 'Write', { file_path: file, content: 'x' });
      expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
      expect(r.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: expect.stringMatching(/^safety: /) }));
      expect(r.chain.find((c) => c.layer === 'mode')).toBeUndefined();
      expect(fs.existsSync(path.join(t.workspace, file))).toBe(false);
      expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'headless' });
    },
  );

  it('.claude/worktrees is the exception, and a symlink into .git is still protected', async () => {
    t = await makeApp({ permissions: { ...BYPASS } });
    fs.mkdirSync(path.join(t.workspace, '.claude', 'worktrees'), { recursive: true });
    fs.mkdirSync(path.join(t.workspace, '.git'));
    fs.symlinkSync(path.join(t.workspace, '.git'), path.join(t.workspace, 'gitdir'));
    expect((await run(t, 'Write', { file_path: '.claude/worktrees/notes.md', content: 'x' })).exec).toMatchObject({
      status: 'succeeded',
      decision: { reason: { type: 'mode', detail: 'bypassPermissions' } },
    });
    const viaLink = await run(t, 'Write', { file_path: 'gitdir/hooks/pre-commit', content: 'x' });
    expect(viaLink.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fs.existsSync(path.join(t.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });
});

describe('hooks against rules', () => {
  const allowHook = (dir: string) =>
    printing(dir, 'allow', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'hook says fine' } });

  it('a hook’s allow does not beat a content deny rule (audit: rule), an ask rule or a protected path (audit: headless)', async () => {
    const dir = tmpDir();
    const hook = allowHook(dir);
    t = await makeApp({
      permissions: { deny: ['Read(./.env)'], ask: ['Bash(git push:*)'] },
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: hook }] }] },
    });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'TOKEN=x');
    fs.mkdirSync(path.join(t.workspace, '.git'));
    const env = await run(t, 'Read', { file_path: '.env' });
    expect(env.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: 'Read(./.env)' } } });
    expect(lastAudit(t)).toMatchObject({ reason_type: 'rule', reason_detail: 'Read(./.env)' });
    const push = await run(t, 'Bash', { command: 'git push origin main' });
    expect(push.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(push.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: 'rule: Bash(git push:*)' }));
    const git = await run(t, 'Write', { file_path: '.git/config', content: 'x' });
    expect(git.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fs.existsSync(path.join(t.workspace, '.git', 'config'))).toBe(false);
    // What nothing else stops, the hook allows (audit: hook).
    const ok = await run(t, 'Bash', { command: 'touch ok' });
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'hook', detail: hook } } });
    expect(lastAudit(t)).toMatchObject({ behavior: 'allow', reason_type: 'hook', reason_detail: hook });
  });

  it('an updatedInput pointing Read at .env is judged again (pitfall 8): denied by Read(./.env), nothing read', async () => {
    const dir = tmpDir();
    t = await makeApp({ permissions: { allow: ['Read'], deny: ['Read(./.env)'] } });
    await t.close();
    const rewrite = printing(dir, 'rewrite', {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { file_path: '.env' } },
    });
    t = await makeApp({ permissions: { allow: ['Read'], deny: ['Read(./.env)'] }, hooks: { PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: rewrite }] }] } });
    fs.writeFileSync(path.join(t.workspace, 'README.md'), 'readme');
    fs.writeFileSync(path.join(t.workspace, '.env'), 'TOKEN=top-secret');
    const r = await run(t, 'Read', { file_path: 'README.md' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: 'Read(./.env)' } } });
    expect(r.text).not.toContain('top-secret');
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'rule', reason_detail: 'Read(./.env)' });
  });
});

/** The id of the first permission request to appear (the call asked and waits for a person). */
async function firstPendingRequest(app: TestApp): Promise<string> {
  return waitFor(() => app.app.toolexec.broker.list().pending[0]?.id, 'a pending permission request');
}

describe('input replaced by an approver or a PermissionRequest hook', () => {
  it('is judged again: an approver cannot turn an allowed ask into a denied command', async () => {
    t = await makeApp({ permissions: { deny: ['Bash(rm:*)'], headless: 'wait', askTimeoutMs: 20_000 } });
    fs.writeFileSync(path.join(t.workspace, 'victim'), 'x');
    const pending = run(t, 'Bash', { command: 'touch a' });
    const id = await firstPendingRequest(t);
    const answer = await t.app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'allow', updated_input: { command: 'rm -f victim' } } });
    expect(answer.statusCode).toBe(200);
    const r = await pending;
    expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm:*)' } } });
    expect(fs.existsSync(path.join(t.workspace, 'victim'))).toBe(true);
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'rule' });
  });

  it('an approver’s harmless replacement runs', async () => {
    t = await makeApp({ permissions: { deny: ['Bash(rm:*)'], headless: 'wait', askTimeoutMs: 20_000 } });
    const pending = run(t, 'Bash', { command: 'touch a' });
    const id = await firstPendingRequest(t);
    await t.app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'allow', updated_input: { command: 'touch b' } } });
    const r = await pending;
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'user' } } });
    expect(fs.existsSync(path.join(t.workspace, 'b'))).toBe(true);
    expect(fs.existsSync(path.join(t.workspace, 'a'))).toBe(false);
  });
});

describe('Bash paths through a symlink and `..`: judged where the kernel goes, not where the text points', () => {
  it('`cat l/../secret` with l → /outside/sub is a read of /outside/secret: denied by Read(//outside/secret), nothing read', async () => {
    const outside = tmpDir();
    fs.mkdirSync(path.join(outside, 'sub'));
    fs.writeFileSync(path.join(outside, 'secret'), 'outside-secret-content');
    const rule = `Read(/${outside}/secret)`;
    t = await makeApp({ permissions: { deny: [rule] } });
    fs.symlinkSync(path.join(outside, 'sub'), path.join(t.workspace, 'l'));
    // The decoy the text points at: a harmless file inside the workspace.
    fs.writeFileSync(path.join(t.workspace, 'secret'), 'decoy');
    for (const command of ['cat l/../secret', 'cat ./l/../secret', 'cd l && cat ../secret', 'head -c 100 l/./../secret']) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec, command).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: rule } } });
      expect(r.text).not.toContain('outside-secret-content');
      expect(lastAudit(t)).toMatchObject({ tool: 'Bash', behavior: 'deny', reason_type: 'rule', reason_detail: rule });
    }
    // In bypassPermissions too.
    await t.close();
    t = await makeApp({ permissions: { ...BYPASS, deny: [rule] } });
    fs.symlinkSync(path.join(outside, 'sub'), path.join(t.workspace, 'l'));
    const b = await run(t, 'Bash', { command: 'cat l/../secret' });
    expect(b.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: rule } } });
    expect(b.text).not.toContain('outside-secret-content');
    // A file next to the link's target that no rule covers is outside the working directories: it asks (headless deny) in default mode.
    await t.close();
    t = await makeApp({ permissions: { deny: [rule] } });
    fs.symlinkSync(path.join(outside, 'sub'), path.join(t.workspace, 'l'));
    fs.writeFileSync(path.join(outside, 'other'), 'other-content');
    const o = await run(t, 'Bash', { command: 'cat l/../other' });
    expect(o.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(o.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: `working_dir: ${path.join(outside, 'other')}` }));
  });

  it('`touch cs/../app.json` with cs → config/sub creates config/app.json: denied by Edit(./config/**) in bypassPermissions', async () => {
    t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./config/**)'] } });
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, 'config', 'sub'), { recursive: true });
    fs.symlinkSync(path.join(ws, 'config', 'sub'), path.join(ws, 'cs'));
    for (const command of ['touch cs/../app.json', 'echo {} > cs/../app.json', 'cp /dev/null cs/../app.json', 'mkdir cs/../../config/x']) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec, command).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Edit(./config/**)' } } });
    }
    expect(fs.readdirSync(path.join(ws, 'config')).sort()).toEqual(['sub']);
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'rule', reason_detail: 'Edit(./config/**)' });
    // A sibling of the workspace's own files, outside the rule, is still written in bypass mode.
    const ok = await run(t, 'Bash', { command: 'touch app.json' });
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'mode', detail: 'bypassPermissions' } } });
    expect(fs.existsSync(path.join(ws, 'app.json'))).toBe(true);
  });

  it('`echo pwned > docs/../config` with docs → .git/hooks writes .git/config: asks even in bypassPermissions (safety), nothing written', async () => {
    t = await makeApp({ permissions: { ...BYPASS } });
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.git', 'config'), '[core]\n');
    fs.symlinkSync(path.join(ws, '.git', 'hooks'), path.join(ws, 'docs'));
    for (const command of ['echo pwned > docs/../config', 'echo pwned >> ./docs/../config', 'echo pwned | tee docs/../config', 'rm -f docs/../config']) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec, command).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
      expect(r.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: 'safety: .git/ is a protected directory' }));
      expect(r.chain.find((c) => c.layer === 'mode')).toBeUndefined();
    }
    expect(fs.readFileSync(path.join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'headless' });
  });
  it('POST /permissions/check gives the same answers for the audit’s three probes, running nothing', async () => {
    const outside = tmpDir();
    fs.mkdirSync(path.join(outside, 'sub'));
    fs.writeFileSync(path.join(outside, 'secret'), 'x');
    const readRule = `Read(/${outside}/secret)`;
    t = await makeApp({ permissions: { ...BYPASS, deny: [readRule, 'Edit(./config/**)'] } });
    const ws = t.workspace;
    fs.symlinkSync(path.join(outside, 'sub'), path.join(ws, 'l'));
    fs.mkdirSync(path.join(ws, 'config', 'sub'), { recursive: true });
    fs.symlinkSync(path.join(ws, 'config', 'sub'), path.join(ws, 'cs'));
    const check = async (command: string) => {
      const res = await t!.app.inject({ method: 'POST', url: '/permissions/check', payload: { name: 'Bash', input: { command } } });
      expect(res.statusCode).toBe(200);
      return res.json() as { behavior: string; reason: { type: string; detail: string } };
    };
    expect(await check('cat l/../secret')).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: readRule } });
    expect(await check('touch cs/../app.json')).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Edit(./config/**)' } });
    expect(fs.existsSync(path.join(ws, 'config', 'app.json'))).toBe(false);
    // The third probe without the Edit rule (which would deny the textual spelling `config` first).
    await t.close();
    t = await makeApp({ permissions: { ...BYPASS } });
    fs.mkdirSync(path.join(t.workspace, '.git', 'hooks'), { recursive: true });
    fs.symlinkSync(path.join(t.workspace, '.git', 'hooks'), path.join(t.workspace, 'docs'));
    expect(await check('echo pwned > docs/../config')).toMatchObject({ behavior: 'ask', reason: { type: 'safety', detail: '.git/ is a protected directory' } });
    expect(fs.existsSync(path.join(t.workspace, '.git', 'config'))).toBe(false);
  });
});

describe('output redirections are judged as edits of their targets', () => {
  it('default mode: `Bash(echo:*)` does not carry `echo x > src.ts`, nor `Bash(git status:*)` `git status > README.md` (ask → headless deny)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(echo:*)', 'Bash(git status:*)'] } });
    fs.writeFileSync(path.join(t.workspace, 'README.md'), 'readme');
    for (const command of ['echo x > src.ts', 'git status > README.md', 'echo a && echo x >> README.md']) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec, command).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
      expect(r.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'passthrough' }));
    }
    expect(fs.existsSync(path.join(t.workspace, 'src.ts'))).toBe(false);
    expect(fs.readFileSync(path.join(t.workspace, 'README.md'), 'utf8')).toBe('readme');
    // Output that names no file is still allowed by the rule.
    for (const command of ['echo x > /dev/null', 'echo x 2>&1', 'echo x >&2', 'echo x 1>/dev/stderr', 'echo x >/dev/fd/2']) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec, command).toMatchObject({ decision: { behavior: 'allow', reason: { type: 'rule', detail: 'Bash(echo:*)' } } });
    }
  });

  it('default mode: an Edit allow rule on the target lets the redirection through (audit: both rules)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(echo:*)', 'Edit(./out/**)'] } });
    fs.mkdirSync(path.join(t.workspace, 'out'));
    const r = await run(t, 'Bash', { command: 'echo hello > out/a.txt' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'rule', detail: 'Edit(./out/**), Bash(echo:*)' } } });
    expect(fs.readFileSync(path.join(t.workspace, 'out', 'a.txt'), 'utf8')).toBe('hello\n');
    // The rule does not reach past its directory.
    const other = await run(t, 'Bash', { command: 'echo hello > out/../b.txt' });
    expect(other.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fs.existsSync(path.join(t.workspace, 'b.txt'))).toBe(false);
  });

  it('acceptEdits: a redirection inside the working directories is allowed; outside (also through `link/..`) it asks (working_dir); into .git it asks (safety)', async () => {
    const outside = tmpDir();
    t = await makeApp({ permissions: { defaultMode: 'acceptEdits', allow: ['Bash(echo:*)'] } });
    fs.mkdirSync(path.join(t.workspace, '.git'));
    const inside = await run(t, 'Bash', { command: 'echo x > src.ts' });
    expect(inside.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'rule', detail: 'Bash(echo:*)' } } });
    expect(fs.existsSync(path.join(t.workspace, 'src.ts'))).toBe(true);
    const out = await run(t, 'Bash', { command: `echo x > ${outside}/f` });
    expect(out.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(out.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: `working_dir: ${outside}/f` }));
    const git = await run(t, 'Bash', { command: 'echo ok > fine.txt && echo x > .git/config' });
    expect(git.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(git.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: expect.stringMatching(/^safety: /) }));
    expect(fs.existsSync(path.join(t.workspace, 'fine.txt'))).toBe(false);
    // Through a symlink and `..`, a target that reads as inside lands outside: it asks too.
    fs.mkdirSync(path.join(outside, 'sub'));
    fs.symlinkSync(path.join(outside, 'sub'), path.join(t.workspace, 'l'));
    const dotdot = await run(t, 'Bash', { command: 'echo x > l/../f' });
    expect(dotdot.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(dotdot.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: `working_dir: ${outside}/f` }));
    expect(fs.existsSync(path.join(outside, 'f'))).toBe(false);
  });

  it('bypassPermissions: a redirection inside is allowed (mode); an Edit deny rule denies it; an Edit ask rule or a protected target asks', async () => {
    t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./locked.txt)'], ask: ['Edit(./careful.txt)'] } });
    fs.mkdirSync(path.join(t.workspace, '.git'));
    const ok = await run(t, 'Bash', { command: 'echo x > src.ts' });
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'mode', detail: 'bypassPermissions' } } });
    const locked = await run(t, 'Bash', { command: 'echo x > locked.txt' });
    expect(locked.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Edit(./locked.txt)' } } });
    const careful = await run(t, 'Bash', { command: 'echo x > careful.txt' });
    expect(careful.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(careful.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask', detail: 'rule: Edit(./careful.txt)' }));
    const git = await run(t, 'Bash', { command: 'echo x > .git/config' });
    expect(git.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fs.existsSync(path.join(t.workspace, 'locked.txt'))).toBe(false);
    expect(fs.existsSync(path.join(t.workspace, 'careful.txt'))).toBe(false);
    expect(fs.existsSync(path.join(t.workspace, '.git', 'config'))).toBe(false);
  });
});
