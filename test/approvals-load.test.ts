/**
 * The approval path under load, in process: hundreds of requests waiting at
 * once (wait:false calls, nobody answering), listed a page at a time, and
 * the races around one request (timeout, cancel, two answers, a mode change)
 * each ending with one outcome, one audit row and a clear error to the loser.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, makeApp, probeTool, tmpDir, use, type TestApp } from './helpers.js';
import { script } from './helpers-hooks.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

// Response bodies are checked field by field below.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function start(permissions: Record<string, unknown> = {}): Promise<TestApp> {
  t = await makeApp(
    { server: { maxInFlightCalls: 5000 }, permissions: { headless: 'wait', askTimeoutMs: 120_000, ...permissions } },
    // Read-only, so concurrency-safe: a session's calls wait for their answers together.
    { extraTools: [probeTool({ name: 'Asker', readOnly: true })] },
  );
  return t;
}

/** `sessions` x `perSession` wait:false calls that all wait for a person. */
async function ask(app: TestApp['app'], sessions: number, perSession: number, prefix = 'q'): Promise<void> {
  for (let s = 0; s < sessions; s++) {
    const uses = Array.from({ length: perSession }, (_, i) => use('Asker', { value: `${prefix}-${s}-${i}` }, `${prefix}-${s}-${i}`));
    const r = await app.inject({ method: 'POST', url: '/execute', payload: { session_id: `${prefix}-${s}`, tool_uses: uses, wait: false } });
    expect(r.statusCode).toBe(202);
  }
}

async function get(app: TestApp['app'], url: string): Promise<{ status: number; body: Json }> {
  const r = await app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json() };
}

describe('GET /permissions/requests with hundreds waiting', () => {
  it('pages through the pending requests, oldest first, each once, while others are answered and added', async () => {
    const { app } = await start();
    await ask(app, 25, 10);
    await until(() => app.toolexec.broker.pendingCount === 250, 'every request to wait');
    const first = await get(app, '/permissions/requests?limit=100');
    expect(first.status).toBe(200);
    expect(first.body.pending_count).toBe(250);
    const pendingOf = (b: Json): Json[] => b.requests.filter((r: Json) => r.status === 'pending');
    expect(pendingOf(first.body)).toHaveLength(100);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const seen: string[] = pendingOf(first.body).map((r: Json) => r.id);
    // Meanwhile: ten requests not yet listed are answered, and fifty more come.
    const all = app.toolexec.broker.pendingIds('*');
    const answered = all.slice(150, 160);
    for (const id of answered) {
      expect((await app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'deny' } })).statusCode).toBe(200);
    }
    await ask(app, 5, 10, 'late');
    await until(() => app.toolexec.broker.pendingCount === 290, 'the new requests to wait');
    let cursor: string | null = first.body.next_cursor;
    while (cursor !== null) {
      const page = await get(app, `/permissions/requests?limit=100&cursor=${cursor}`);
      expect(page.status).toBe(200);
      // Later pages are pending requests only.
      expect(page.body.requests.every((r: Json) => r.status === 'pending')).toBe(true);
      seen.push(...page.body.requests.map((r: Json) => r.id));
      cursor = page.body.next_cursor;
    }
    // Every request still waiting, each once, oldest first; none of the answered ones.
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => !answered.includes(id))).toEqual(app.toolexec.broker.pendingIds('*'));
    expect(seen.some((id) => answered.includes(id))).toBe(false);
    // One session's.
    const one = await get(app, '/permissions/requests?session_id=q-3&limit=4');
    expect(one.body.pending_count).toBe(10);
    expect(pendingOf(one.body).map((r: Json) => r.session_id)).toEqual(['q-3', 'q-3', 'q-3', 'q-3']);
    expect(one.body.next_cursor).toEqual(expect.any(String));
    // A cursor this service did not issue, a limit out of range: 400 with a code.
    for (const q of ['cursor=nope', 'limit=0', 'limit=5000']) {
      const bad = await get(app, `/permissions/requests?${q}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    }
    // The default page is bounded too.
    const dflt = await get(app, '/permissions/requests');
    expect(pendingOf(dflt.body)).toHaveLength(100);
  });

  it('pending_count with session_id counts that session only, also for a session named "*"', async () => {
    const { app } = await start();
    await ask(app, 2, 3, 'pc');
    const star = [use('Asker', { value: 'star' }, 'star-0')];
    expect((await app.inject({ method: 'POST', url: '/execute', payload: { session_id: '*', tool_uses: star, wait: false } })).statusCode).toBe(202);
    await until(() => app.toolexec.broker.pendingCount === 7, 'every request to wait');
    const page = await get(app, '/permissions/requests?session_id=*');
    expect(page.status).toBe(200);
    expect(page.body.requests.map((r: Json) => r.session_id)).toEqual(['*']);
    expect(page.body.pending_count).toBe(1);
    expect((await get(app, '/permissions/requests?session_id=pc-0')).body.pending_count).toBe(3);
    expect((await get(app, '/permissions/requests?session_id=none')).body.pending_count).toBe(0);
  });
});

describe('GET /executions?status= for calls in flight', () => {
  it('lists the calls waiting for a person by their live status, a page at a time (their rows still say queued)', async () => {
    const { app } = await start();
    await ask(app, 25, 10, 'st');
    await until(() => app.toolexec.broker.pendingCount === 250, 'every request to wait');
    const waiting = new Set(app.toolexec.broker.pendingIds('*').map((id) => app.toolexec.broker.pendingView(id)!.execution_id));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(app, `/executions?status=awaiting_permission&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      for (const e of page.body.executions) expect(e).toMatchObject({ status: 'awaiting_permission', tool: 'Asker', finished_at: null });
      seen.push(...page.body.executions.map((e: Json) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(new Set(seen)).toEqual(waiting);
    expect(seen).toHaveLength(250);
    // Newest first, as every listing.
    const seqs = seen.map((id) => parseInt(id.slice(3, 14), 36));
    expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);
    // None is queued any more; one session's; another tool's.
    expect((await get(app, '/executions?status=queued')).body.executions).toEqual([]);
    expect((await get(app, '/executions?status=awaiting_permission&session_id=st-4')).body.executions).toHaveLength(10);
    expect((await get(app, '/executions?status=awaiting_permission&tool=Read')).body.executions).toEqual([]);
  });
});

describe('races around one request', () => {
  it('answers racing the ask timeout: each call has one outcome and one audit row that says which; the loser gets 409', async () => {
    const { app } = await start({ askTimeoutMs: 300 });
    await ask(app, 20, 10, 'race');
    // Every call asked (on a slow machine the first may have expired already).
    const requests = (): Array<{ id: string; execution_id: string }> =>
      app.toolexec.db.prepare("SELECT id, execution_id FROM permission_requests WHERE tool_use_id LIKE 'race-%' ORDER BY created_at").all() as Array<{ id: string; execution_id: string }>;
    await until(() => requests().length === 200, 'every call to ask');
    const byId = new Map(requests().map((r) => [r.id, r.execution_id]));
    const ids = [...byId.keys()];
    // Answered one by one from before the timeout to after it.
    const answers = new Map<string, number>();
    for (const id of ids) {
      const r = await app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'allow' } });
      answers.set(id, r.statusCode);
      if (r.statusCode !== 200) {
        expect(r.statusCode).toBe(409);
        expect(r.json().error.code).toBe('TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED');
      }
      await sleep(2);
    }
    // 200 answers at least 2 ms apart outlast the 300 ms timeout of requests all made before the first:
    // the last ones come after it, and lose (without a timeout every answer would win, and the checks below hold too).
    expect([...answers.values()]).toContain(409);
    await until(() => app.toolexec.registry.size === 0, 'every call to end');
    const rows = app.toolexec.db.prepare("SELECT execution_id, behavior, reason_type FROM audit WHERE tool_use_id LIKE 'race-%'").all() as Json[];
    expect(rows).toHaveLength(200);
    const audit = new Map(rows.map((r) => [r.execution_id, r]));
    for (const [id, status] of answers) {
      const row = audit.get(byId.get(id));
      expect(row, id).toMatchObject(status === 200 ? { behavior: 'allow', reason_type: 'user' } : { behavior: 'deny', reason_type: 'timeout' });
      const exec = app.toolexec.executions.get(byId.get(id)!)!;
      expect(exec.status).toBe(status === 200 ? 'succeeded' : 'denied');
    }
  });

  it('an answer after the call was cancelled gets 409; the call is audited once, as cancelled', async () => {
    const { app } = await start();
    await ask(app, 10, 10, 'cx');
    await until(() => app.toolexec.broker.pendingCount === 100, 'every request to wait');
    const views = app.toolexec.broker.pendingIds('*').map((id) => app.toolexec.broker.pendingView(id)!);
    for (const [i, v] of views.entries()) {
      if (i % 2 === 0) {
        expect((await app.inject({ method: 'POST', url: `/executions/${v.execution_id}/cancel` })).statusCode).toBe(202);
        const late = await app.inject({ method: 'POST', url: `/permissions/requests/${v.id}`, payload: { decision: 'allow' } });
        expect(late.statusCode).toBe(409);
        expect(late.json().error).toMatchObject({ code: 'TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED' });
      } else {
        expect((await app.inject({ method: 'POST', url: `/permissions/requests/${v.id}`, payload: { decision: 'allow' } })).statusCode).toBe(200);
        // Cancelling a call whose answer came is too late or stops it running; either way it is not answered again.
        const cancel = await app.inject({ method: 'POST', url: `/executions/${v.execution_id}/cancel` });
        expect([202, 409]).toContain(cancel.statusCode);
      }
    }
    await until(() => app.toolexec.registry.size === 0, 'every call to end');
    const rows = app.toolexec.db.prepare("SELECT execution_id, behavior, reason_type FROM audit WHERE tool_use_id LIKE 'cx-%'").all() as Json[];
    const per = new Map<string, Json[]>();
    for (const r of rows) per.set(r.execution_id, [...(per.get(r.execution_id) ?? []), r]);
    for (const [i, v] of views.entries()) {
      const mine = per.get(v.execution_id) ?? [];
      expect(mine, v.execution_id).toHaveLength(1);
      expect(mine[0]).toMatchObject(i % 2 === 0 ? { behavior: 'deny', reason_type: 'cancelled' } : { behavior: 'allow', reason_type: 'user' });
      const exec = app.toolexec.executions.get(v.execution_id)!;
      expect(['succeeded', 'cancelled']).toContain(exec.status);
      if (i % 2 === 0) expect(exec.status).toBe('cancelled');
    }
  });

  it('a session switched to plan mode while its calls wait: an allow that comes after runs nothing that is not read-only, audited as the mode', async () => {
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { headless: 'wait', askTimeoutMs: 120_000 } }, { extraTools: [probeTool({ name: 'Writer', calls })] });
    const { app } = t;
    const r = await app.inject({
      method: 'POST',
      url: '/execute',
      payload: { session_id: 'pm', wait: false, tool_uses: [use('Writer', { value: 'w' }, 'pm-w')] },
    });
    expect(r.statusCode).toBe(202);
    await until(() => app.toolexec.broker.pendingCount === 1, 'the first request');
    const patched = await app.inject({ method: 'PATCH', url: '/sessions/pm', payload: { mode: 'plan' } });
    expect(patched.statusCode).toBe(200);
    const first = app.toolexec.broker.pendingView(app.toolexec.broker.pendingIds('pm')[0]!)!;
    expect(first.tool).toBe('Writer');
    expect((await app.inject({ method: 'POST', url: `/permissions/requests/${first.id}`, payload: { decision: 'allow' } })).statusCode).toBe(200);
    await until(() => app.toolexec.registry.size === 0, 'the calls to end');
    const writer = app.toolexec.executions.findByToolUse('pm', 'pm-w')!;
    expect(calls).toEqual([]);
    expect(writer.status).toBe('denied');
    const rows = app.toolexec.db.prepare("SELECT tool_use_id, behavior, reason_type, reason_detail FROM audit WHERE session_id = 'pm' ORDER BY id").all();
    expect(rows).toEqual([{ tool_use_id: 'pm-w', behavior: 'deny', reason_type: 'mode', reason_detail: 'plan' }]);
    expect(JSON.parse(writer.result_block!).content).toContain('plan');
  });

  it('a session switched to dontAsk while its calls wait: an allow runs the call, with or without an edited input (the person answered the ask)', async () => {
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { headless: 'wait', askTimeoutMs: 120_000 } }, { extraTools: [probeTool({ name: 'Writer', calls })] });
    const { app } = t;
    for (const id of ['da-plain', 'da-edited']) {
      const r = await app.inject({ method: 'POST', url: '/execute', payload: { session_id: `s-${id}`, wait: false, tool_uses: [use('Writer', { value: id }, id)] } });
      expect(r.statusCode).toBe(202);
    }
    await until(() => app.toolexec.broker.pendingCount === 2, 'both requests');
    for (const id of ['da-plain', 'da-edited']) {
      expect((await app.inject({ method: 'PATCH', url: `/sessions/s-${id}`, payload: { mode: 'dontAsk' } })).statusCode).toBe(200);
    }
    const plain = app.toolexec.broker.pendingIds('s-da-plain')[0]!;
    const edited = app.toolexec.broker.pendingIds('s-da-edited')[0]!;
    expect((await app.inject({ method: 'POST', url: `/permissions/requests/${plain}`, payload: { decision: 'allow' } })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: `/permissions/requests/${edited}`, payload: { decision: 'allow', updated_input: { value: 'edited' } } })).statusCode).toBe(200);
    await until(() => app.toolexec.registry.size === 0, 'the calls to end');
    expect(app.toolexec.executions.findByToolUse('s-da-plain', 'da-plain')!.status).toBe('succeeded');
    expect(app.toolexec.executions.findByToolUse('s-da-edited', 'da-edited')!.status).toBe('succeeded');
    expect(calls).toEqual(expect.arrayContaining([{ value: 'da-plain' }, { value: 'edited' }]));
    const rows = app.toolexec.db.prepare("SELECT tool_use_id, behavior, reason_type FROM audit WHERE tool_use_id LIKE 'da-%' ORDER BY tool_use_id").all();
    expect(rows).toEqual([
      { tool_use_id: 'da-edited', behavior: 'allow', reason_type: 'user' },
      { tool_use_id: 'da-plain', behavior: 'allow', reason_type: 'user' },
    ]);
  });

  it('a session switched to plan mode while a PermissionRequest hook runs: the allow that comes after runs nothing that is not read-only', async () => {
    // The hook says nothing (so a person is asked), once the test lets it go on.
    const dir = tmpDir();
    const started = path.join(dir, 'started');
    const go = path.join(dir, 'go');
    const command = script(dir, 'slow-hook.sh', `cat >/dev/null; touch '${started}'; while [ ! -f '${go}' ]; do sleep 0.02; done; exit 0`);
    const calls: unknown[] = [];
    t = await makeApp(
      { permissions: { headless: 'wait', askTimeoutMs: 120_000 }, hooks: { PermissionRequest: [{ matcher: 'Writer', hooks: [{ type: 'command', command }] }] } },
      { extraTools: [probeTool({ name: 'Writer', calls })] },
    );
    const { app } = t;
    const r = await app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'ph', wait: false, tool_uses: [use('Writer', { value: 'w' }, 'ph-w')] } });
    expect(r.statusCode).toBe(202);
    await until(() => fs.existsSync(started), 'the hook to start');
    // Decided in default mode (ask); plan mode is set while the hook still runs.
    expect((await app.inject({ method: 'PATCH', url: '/sessions/ph', payload: { mode: 'plan' } })).statusCode).toBe(200);
    fs.writeFileSync(go, '');
    await until(() => app.toolexec.broker.pendingCount === 1, 'the request');
    const id = app.toolexec.broker.pendingIds('ph')[0]!;
    expect((await app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'allow' } })).statusCode).toBe(200);
    await until(() => app.toolexec.registry.size === 0, 'the call to end');
    expect(calls).toEqual([]);
    expect(app.toolexec.executions.findByToolUse('ph', 'ph-w')!.status).toBe('denied');
    const rows = app.toolexec.db.prepare("SELECT behavior, reason_type, reason_detail FROM audit WHERE session_id = 'ph'").all();
    expect(rows).toEqual([{ behavior: 'deny', reason_type: 'mode', reason_detail: 'plan' }]);
  });

  it('an answer after the waiting client went away gets 409; its calls are audited as cancelled, once each', async () => {
    const { app } = await start();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const clients = Array.from({ length: 20 }, (_, s) => {
      const ac = new AbortController();
      const uses = Array.from({ length: 5 }, (_, i) => use('Asker', { value: `${s}-${i}` }, `gone-${s}-${i}`));
      const done = fetch(`http://127.0.0.1:${port}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: `gone-${s}`, tool_uses: uses }),
        signal: ac.signal,
      }).catch((e: unknown) => e);
      return { ac, done };
    });
    await until(() => app.toolexec.broker.pendingCount === 100, 'every request to wait');
    const views = app.toolexec.broker.pendingIds('*').map((id) => app.toolexec.broker.pendingView(id)!);
    for (const c of clients) c.ac.abort();
    await Promise.all(clients.map((c) => c.done));
    await until(() => app.toolexec.registry.size === 0, 'the calls to be cancelled');
    for (const v of views) {
      const late = await app.inject({ method: 'POST', url: `/permissions/requests/${v.id}`, payload: { decision: 'allow' } });
      expect(late.statusCode).toBe(409);
      expect(late.json().error).toMatchObject({ code: 'TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED', details: { status: 'cancelled' } });
    }
    const rows = app.toolexec.db.prepare("SELECT behavior, reason_type, COUNT(*) AS n, COUNT(DISTINCT execution_id) AS calls FROM audit WHERE tool_use_id LIKE 'gone-%' GROUP BY 1, 2").all();
    expect(rows).toEqual([{ behavior: 'deny', reason_type: 'cancelled', n: 100, calls: 100 }]);
  });
});

describe('back-pressure with calls waiting for a person', () => {
  it('unanswered asks do not take the room of auto-allowed calls, up to server.maxWaitingCalls; past it they count, and 503 comes back', async () => {
    t = await makeApp(
      { server: { maxInFlightCalls: 20, maxWaitingCalls: 30 }, permissions: { allow: ['Allowed'], headless: 'wait', askTimeoutMs: 120_000 } },
      { extraTools: [probeTool({ name: 'Asker', readOnly: true }), probeTool({ name: 'Allowed', readOnly: true })] },
    );
    const { app } = t;
    const allowed = async (i: number) => app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'worker', tool_uses: [use('Allowed', { value: `${i}` }, `ok-${i}`)] } });
    // 25 asks nobody answers, more than maxInFlightCalls: each batch is admitted once the ones before wait.
    for (let s = 0; s < 5; s++) {
      await ask(app, 1, 5, `burst${s}`);
      await until(() => app.toolexec.broker.pendingCount === 5 * (s + 1), 'the asks to wait');
    }
    // An agent whose calls are allowed by a rule is not held up by them.
    for (let i = 0; i < 40; i++) {
      const r = await allowed(i);
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().executions[0].status).toBe('succeeded');
    }
    // Past maxWaitingCalls (30) the waiting calls count again: 5 more fill the free room, 20 more the limit.
    await ask(app, 1, 5, 'more');
    await until(() => app.toolexec.broker.pendingCount === 30, 'the asks to wait');
    expect((await allowed(100)).statusCode).toBe(200);
    // (Ten at a time: a batch's calls run execution.maxConcurrency at once.)
    await ask(app, 2, 10, 'over');
    await until(() => app.toolexec.broker.pendingCount === 50, 'the asks to wait');
    const full = await allowed(101);
    expect(full.statusCode).toBe(503);
    expect(full.json().error.code).toBe('TOOLEXEC_ERR_OVERLOADED');
    expect(full.headers['retry-after']).toEqual(expect.any(String));
    // An answer makes room again.
    const id = app.toolexec.broker.pendingIds('*')[0]!;
    expect((await app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'deny' } })).statusCode).toBe(200);
    await until(() => app.toolexec.registry.size === 49, 'the denied call to end');
    expect((await allowed(102)).statusCode).toBe(200);
  });
});
