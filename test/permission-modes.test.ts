/**
 * Step 5 with whole-tool rules and the six modes, through the pipeline, and
 * the audit rows each decision leaves (reason types and details).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Classifier } from '../src/permissions/classifier.js';
import { cleanupTmp, execute, makeApp, probeTool, tmpDir, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const writer = () => probeTool({ name: 'Writer', readOnly: false });
const reader = () => probeTool({ name: 'Reader', readOnly: true, permission: 'allow' });

async function decisionOf(config: Parameters<typeof makeApp>[0], tool: string, opts: Parameters<typeof makeApp>[1] = {}) {
  t = await makeApp(config, { extraTools: [writer(), reader()], ...opts });
  const r = await execute(t.app, { session_id: 's', tool_uses: [use(tool, { value: 'v' }, 'id1')] });
  const audit = t.app.toolexec.audit.query({ limit: 10 });
  const out = { status: r.body.executions[0]!.status, decision: r.body.executions[0]!.decision, audit };
  await t.close();
  t = undefined;
  return out;
}

describe('whole-tool rules', () => {
  it('allow rule → allow (rule)', async () => {
    const d = await decisionOf({ permissions: { allow: ['Writer'] } }, 'Writer');
    expect(d.status).toBe('succeeded');
    expect(d.decision).toEqual({ behavior: 'allow', reason: { type: 'rule', detail: 'Writer' } });
    expect(d.audit).toHaveLength(1);
    expect(d.audit[0]).toMatchObject({ tool: 'Writer', behavior: 'allow', reason_type: 'rule', reason_detail: 'Writer', tool_use_id: 'id1', session_id: 's' });
    expect(d.audit[0]!.input_digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('deny rule → deny (rule), even with an allow rule beside it', async () => {
    const d = await decisionOf({ permissions: { allow: ['Writer'], deny: ['Writer'] } }, 'Writer');
    expect(d.status).toBe('denied');
    expect(d.decision).toEqual({ behavior: 'deny', reason: { type: 'rule', detail: 'Writer' } });
    expect(d.audit[0]).toMatchObject({ behavior: 'deny', reason_type: 'rule' });
  });

  it('ask beats allow: an ask rule with no approver ends as a headless denial', async () => {
    const d = await decisionOf({ permissions: { allow: ['Writer'], ask: ['Writer'] } }, 'Writer');
    expect(d.status).toBe('denied');
    expect(d.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(d.audit[0]).toMatchObject({ behavior: 'deny', reason_type: 'headless' });
  });

  it('no rule → ask → headless denial', async () => {
    const d = await decisionOf({}, 'Writer');
    expect(d.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
  });

  it('a tool’s own allow runs it', async () => {
    const d = await decisionOf({}, 'Reader');
    expect(d.decision).toEqual({ behavior: 'allow', reason: { type: 'tool', detail: 'probe allows' } });
  });

  it('mcp__srv rules cover every tool of that server', async () => {
    const mcp = { ...probeTool({ name: 'mcp__files__read_it' }), mcpInfo: { serverName: 'files', toolName: 'read_it' } };
    for (const [rule, behavior] of [
      ['mcp__files', 'allow'],
      ['mcp__files__*', 'allow'],
      ['mcp__files__read_it', 'allow'],
      ['mcp__other', 'deny'],
    ] as const) {
      t = await makeApp({ permissions: { allow: [rule] } }, { mcpTools: [mcp] });
      const r = await execute(t.app, { tool_uses: [use('mcp__files__read_it', { value: 'v' })] });
      expect(r.body.executions[0]!.decision!.behavior, rule).toBe(behavior);
      await t.close();
      t = undefined;
    }
  });
});

describe('working directories', () => {
  it('a whole-tool allow rule does not reach outside the working directories; a path rule does', async () => {
    const outside = tmpDir();
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
    t = await makeApp({ permissions: { allow: ['Read'] } });
    const r = await execute(t.app, { tool_uses: [use('Read', { file_path: path.join(outside, 'secret.txt') })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(JSON.stringify(r.body.tool_results)).not.toContain('top secret');
    const chain = JSON.parse(t.app.toolexec.executions.get(r.body.executions[0]!.id)!.decision!).chain;
    expect(chain[0]).toMatchObject({ layer: 'tool', outcome: 'ask' });
    expect(chain[0].detail).toMatch(/^working_dir:/);
    await t.close();
    t = await makeApp({ permissions: { allow: [`Read(/${outside}/**)`] } });
    const ok = await execute(t.app, { tool_uses: [use('Read', { file_path: path.join(outside, 'secret.txt') })] });
    expect(ok.body.executions[0]).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
  });
});

describe('modes', () => {
  it('bypassPermissions allows what no deny or ask rule stops', async () => {
    const cfg = { permissions: { defaultMode: 'bypassPermissions' as const, allowBypass: true } };
    expect((await decisionOf(cfg, 'Writer')).decision).toEqual({ behavior: 'allow', reason: { type: 'mode', detail: 'bypassPermissions' } });
    expect((await decisionOf({ permissions: { ...cfg.permissions, deny: ['Writer'] } }, 'Writer')).decision!.behavior).toBe('deny');
    expect((await decisionOf({ permissions: { ...cfg.permissions, ask: ['Writer'] } }, 'Writer')).decision!.reason.type).toBe('headless');
  });

  it('plan denies what is not read-only, even when an allow rule covers it', async () => {
    const d = await decisionOf({ permissions: { defaultMode: 'plan', allow: ['Writer'] } }, 'Writer');
    expect(d.decision).toEqual({ behavior: 'deny', reason: { type: 'mode', detail: 'plan' } });
    expect((await decisionOf({ permissions: { defaultMode: 'plan' } }, 'Reader')).status).toBe('succeeded');
  });

  it('dontAsk turns ask into deny (mode), and keeps allows', async () => {
    const d = await decisionOf({ permissions: { defaultMode: 'dontAsk' } }, 'Writer');
    expect(d.decision).toEqual({ behavior: 'deny', reason: { type: 'mode', detail: 'dontAsk' } });
    expect((await decisionOf({ permissions: { defaultMode: 'dontAsk', allow: ['Writer'] } }, 'Writer')).status).toBe('succeeded');
  });

  it('uses Claude Code\u2019s wording for the dontAsk denial and the ask message, naming this service and "the agent"', async () => {
    const MAY = 'IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, e.g. using head instead of cat.';
    t = await makeApp({ permissions: { defaultMode: 'dontAsk' } }, { extraTools: [writer()] });
    const r = await execute(t.app, { session_id: 's', tool_uses: [use('Writer', { value: 'v' }, 'id1')] });
    const text = String(r.body.tool_results[0]!.content);
    expect(text.startsWith(`Permission to use Writer has been denied because toolexec is running in don't ask mode. ${MAY}`)).toBe(true);
    await t.close();
    t = await makeApp({}, { extraTools: [writer()] });
    const check = await t.app.inject({ method: 'POST', url: '/permissions/check', payload: { name: 'Writer', input: { value: 'v' } } });
    expect(check.json()).toMatchObject({ behavior: 'ask', message: "The agent requested permissions to use Writer, but you haven't granted it yet." });
  });

  it('auto: the classifier decides what would otherwise ask; its errors mean ask, never allow', async () => {
    const seen: string[] = [];
    const classifier = (verdict: 'allow' | 'deny' | 'ask'): Classifier => ({
      classify: async (req) => {
        seen.push(`${req.tool}:${req.text}`);
        return { behavior: verdict, reason: `said ${verdict}` };
      },
    });
    const Writer = () => ({ ...probeTool({ name: 'Writer' }), toAutoClassifierInput: (i: { value: string }) => `write ${i.value}` });
    const run = async (verdict: 'allow' | 'deny' | 'ask') => {
      t = await makeApp({ permissions: { defaultMode: 'auto' } }, { extraTools: [Writer()], classifier: classifier(verdict) });
      const r = await execute(t.app, { tool_uses: [use('Writer', { value: 'v' })] });
      const d = r.body.executions[0]!.decision;
      await t.close();
      t = undefined;
      return d;
    };
    expect(await run('allow')).toEqual({ behavior: 'allow', reason: { type: 'classifier', detail: 'said allow' } });
    expect(await run('deny')).toEqual({ behavior: 'deny', reason: { type: 'classifier', detail: 'said deny' } });
    expect((await run('ask'))!.reason.type).toBe('headless');
    expect(seen).toEqual(['Writer:write v', 'Writer:write v', 'Writer:write v']);
  });

  it('auto: after 3 consecutive classifier denials the session asks a person instead', async () => {
    let calls = 0;
    const classifier: Classifier = {
      classify: async () => {
        calls++;
        return { behavior: 'deny', reason: 'no' };
      },
    };
    const Writer = { ...probeTool({ name: 'Writer' }), toAutoClassifierInput: () => 'x' };
    t = await makeApp({ permissions: { defaultMode: 'auto' } }, { extraTools: [Writer], classifier });
    const reasons: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await execute(t.app, { session_id: 'auto', tool_uses: [use('Writer', { value: 'v' })] });
      reasons.push(r.body.executions[0]!.decision!.reason.type);
    }
    expect(reasons).toEqual(['classifier', 'classifier', 'classifier', 'headless', 'headless']);
    expect(calls).toBe(3);
  });
});

describe('audit', () => {
  it('records one row per decision, committed before the answer, with the executing token’s name', async () => {
    t = await makeApp(
      { permissions: { allow: ['Writer'] }, server: { tokens: [{ name: 'agent-7', token: 'agent-7-secret-token-value', scopes: ['execute', 'read'] }] } },
      { extraTools: [writer()] },
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { authorization: 'Bearer agent-7-secret-token-value' },
      payload: { session_id: 'a', tool_uses: [use('Writer', { value: '1' }, 'w1'), use('Writer', { value: '2' }, 'w2')] },
    });
    expect(res.statusCode).toBe(200);
    // Read straight from the file through a second connection: the rows are committed.
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(t.dbPath, { readonly: true });
    const rows = db.prepare('SELECT tool_use_id, behavior, reason_type, actor FROM audit ORDER BY id').all();
    db.close();
    expect(rows).toEqual([
      { tool_use_id: 'w1', behavior: 'allow', reason_type: 'rule', actor: 'agent-7' },
      { tool_use_id: 'w2', behavior: 'allow', reason_type: 'rule', actor: 'agent-7' },
    ]);
  });
});

describe('session modes across restarts', () => {
  it('PATCH to bypassPermissions refused names the setting that refuses it', async () => {
    t = await makeApp({}, { extraTools: [writer()] });
    const off = await t.app.inject({ method: 'PATCH', url: '/sessions/s-b', payload: { mode: 'bypassPermissions' } });
    expect(off.statusCode).toBe(403);
    expect(off.json().error).toEqual({
      code: 'TOOLEXEC_ERR_SESSION_MODE_FORBIDDEN',
      message: 'bypassPermissions is not allowed by the configuration: set permissions.allowBypass to true to allow it',
    });
    await t.close();
    t = await makeApp({ permissions: { allowBypass: true, disableBypassPermissionsMode: 'disable' } }, { extraTools: [writer()] });
    const disabled = await t.app.inject({ method: 'PATCH', url: '/sessions/s-b', payload: { mode: 'bypassPermissions' } });
    expect(disabled.statusCode).toBe(403);
    expect(disabled.json().error.message).toContain('permissions.disableBypassPermissionsMode is "disable"');
  });

  it('a session left in bypassPermissions comes back in the default mode once bypass is no longer allowed', async () => {
    const dir = tmpDir();
    const storage = { path: path.join(dir, 'db.sqlite') };
    t = await makeApp({ storage, permissions: { allowBypass: true } }, { extraTools: [writer()] });
    const patched = await t.app.inject({ method: 'PATCH', url: '/sessions/s-bypass', payload: { mode: 'bypassPermissions' } });
    expect(patched.json().session.mode).toBe('bypassPermissions');
    await t.close();
    t = await makeApp({ storage, permissions: { allowBypass: false } }, { extraTools: [writer()] });
    expect((await t.app.inject({ url: '/sessions/s-bypass' })).json().session.mode).toBe('default');
    const r = await execute(t.app, { session_id: 's-bypass', tool_uses: [use('Writer', { value: 'v' })] });
    expect(r.body.executions[0]!.decision!.reason.type).toBe('headless');
  });
});
