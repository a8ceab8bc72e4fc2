/**
 * Approvals over a real websocket on a real listening server: approve one
 * request, deny one, let one time out, answer one twice; remembered rules;
 * live execution events; malformed frames; the dry-run check.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanupTmp, makeApp, probeTool, sleepTool, textOf, use, type TestApp } from './helpers.js';

const AGENT = 'agent-token-0123456789';
const APPROVER = 'approver-token-0123456789';
const WATCHER = 'watcher-token-0123456789';
const tokens = [
  { name: 'agent', token: AGENT, scopes: ['execute' as const] },
  { name: 'alice', token: APPROVER, scopes: ['approve' as const, 'read' as const] },
  { name: 'watcher', token: WATCHER, scopes: ['read' as const] },
];

let t: TestApp | undefined;
let sockets: WebSocket[] = [];
afterEach(async () => {
  for (const s of sockets) s.terminate();
  sockets = [];
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

type Frame = { type: string; [k: string]: unknown };
// Response bodies are checked field by field below.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

class Client {
  frames: Frame[] = [];
  private waiters: Array<{ pred: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as Frame;
      this.frames.push(f);
      for (const w of [...this.waiters]) {
        if (w.pred(f)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(f);
        }
      }
    });
  }
  next(pred: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const hit = this.frames.find(pred);
    if (hit) {
      this.frames.splice(this.frames.indexOf(hit), 1);
      return Promise.resolve(hit);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no such frame in time')), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (f) => {
          clearTimeout(timer);
          this.frames.splice(this.frames.indexOf(f), 1);
          resolve(f);
        },
      });
    });
  }
  send(f: unknown): void {
    this.ws.send(typeof f === 'string' ? f : JSON.stringify(f));
  }
}

async function start(config: Parameters<typeof makeApp>[0] = {}, opts: Parameters<typeof makeApp>[1] = {}) {
  t = await makeApp({ server: { tokens }, permissions: { askTimeoutMs: 60_000 }, ...config }, { extraTools: [probeTool({}), sleepTool({ safe: false })], ...opts });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as { port: number }).port;
  return { port, base: `http://127.0.0.1:${port}` };
}

async function connect(port: number, token: string, via: 'header' | 'query' = 'header'): Promise<Client> {
  const url = via === 'query' ? `ws://127.0.0.1:${port}/ws?token=${token}` : `ws://127.0.0.1:${port}/ws`;
  const ws = new WebSocket(url, via === 'header' ? { headers: { authorization: `Bearer ${token}` } } : {});
  sockets.push(ws);
  const c = new Client(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await c.next((f) => f.type === 'hello');
  return c;
}

function post(base: string, path: string, body: unknown, token = AGENT) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

describe('approvals over the websocket', () => {
  it('approves one, denies one, lets one time out and answers one twice; the audit shows each', async () => {
    const { port, base } = await start({ permissions: { askTimeoutMs: 1500 } });
    const approver = await connect(port, APPROVER);
    approver.send({ type: 'subscribe', session_id: 'sa' });
    await approver.next((f) => f.type === 'ack');

    // 1. Approved.
    const first = post(base, '/execute', { session_id: 'sa', tool_uses: [use('Probe', { value: 'one' }, 'p1')] });
    const req1 = (await approver.next((f) => f.type === 'permission.request')).request as { id: string; tool: string; input: unknown; summary: string; expires_at: number };
    expect(req1).toMatchObject({ tool: 'Probe', input: { value: 'one' } });
    expect(req1.summary).toContain('Probe');
    approver.send({ type: 'permission.respond', request_id: req1.id, decision: 'allow' });
    await approver.next((f) => f.type === 'ack' && f.ref === 'permission.respond');
    const r1 = await (await first).json() as Json;
    expect(r1.executions[0]).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'user', detail: 'alice' } } });

    // 2. Denied, with a message the model sees.
    const second = post(base, '/execute', { session_id: 'sa', tool_uses: [use('Probe', { value: 'two' }, 'p2')] });
    const req2 = (await approver.next((f) => f.type === 'permission.request')).request as { id: string };
    approver.send({ type: 'permission.respond', request_id: req2.id, decision: 'deny', message: 'not today' });
    const r2 = await (await second).json() as Json;
    expect(r2.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'user', detail: 'alice' } } });
    expect(textOf(r2.tool_results[0].content)).toContain('not today');

    // 3. Answered twice: the second answer is an error, over the websocket and over HTTP.
    approver.send({ type: 'permission.respond', request_id: req2.id, decision: 'allow' });
    const err = await approver.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED', request_id: req2.id });
    const again = await post(base, `/permissions/requests/${req2.id}`, { decision: 'allow' }, APPROVER);
    expect(again.status).toBe(409);
    expect((await again.json() as Json).error.code).toBe('TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED');

    // 4. Nobody answers: denied at the timeout.
    const fourth = await (await post(base, '/execute', { session_id: 'sa', tool_uses: [use('Probe', { value: 'four' }, 'p4')] })).json() as Json;
    expect(fourth.executions[0]).toMatchObject({ status: 'denied', decision: { reason: { type: 'timeout' } } });
    const expired = await approver.next((f) => f.type === 'permission.resolved' && (f.request as { status: string }).status === 'expired');
    expect(expired).toBeTruthy();

    const audit = t!.app.toolexec.audit.query({ sessionId: 'sa', limit: 10 }).reverse();
    expect(audit.map((a) => [a.tool_use_id, a.behavior, a.reason_type, a.actor])).toEqual([
      ['p1', 'allow', 'user', 'alice'],
      ['p2', 'deny', 'user', 'alice'],
      ['p4', 'deny', 'timeout', 'agent'],
    ]);
  });

  it('answers through POST /permissions/requests/:id, with updated input that is validated again', async () => {
    const calls: unknown[] = [];
    const { port, base } = await start({}, { extraTools: [probeTool({ calls })] });
    const approver = await connect(port, APPROVER, 'query');
    approver.send({ type: 'subscribe', session_id: '*' });
    const pending = post(base, '/execute', { session_id: 'sb', tool_uses: [use('Probe', { value: 'orig' }, 'b1')] });
    const req = (await approver.next((f) => f.type === 'permission.request')).request as { id: string };
    const listed = await (await fetch(`${base}/permissions/requests`, { headers: { authorization: `Bearer ${WATCHER}` } })).json() as Json;
    expect(listed.requests[0]).toMatchObject({ id: req.id, status: 'pending' });
    const res = await post(base, `/permissions/requests/${req.id}`, { decision: 'allow', updated_input: { value: 'edited' } }, APPROVER);
    expect(res.status).toBe(200);
    const out = await (await pending).json() as Json;
    expect(out.tool_results[0].content).toBe('value=edited');
    expect(calls).toEqual([{ value: 'edited' }]);
    // A watcher (read only) may not answer.
    const forbidden = await post(base, `/permissions/requests/${req.id}`, { decision: 'allow' }, WATCHER);
    expect(forbidden.status).toBe(403);
  });

  it('refuses an updated_input the tool cannot take (400 and a ws error), keeps the request pending and remembers nothing; the chain of a corrected one says what ran', async () => {
    const calls: unknown[] = [];
    const { port, base } = await start({}, { extraTools: [probeTool({ calls })] });
    const approver = await connect(port, APPROVER);
    approver.send({ type: 'subscribe', session_id: 'sv' });
    const pending = post(base, '/execute', { session_id: 'sv', tool_uses: [use('Probe', { value: 'orig' }, 'v1')] });
    const req = (await approver.next((f) => f.type === 'permission.request')).request as { id: string };
    const res = await post(base, `/permissions/requests/${req.id}`, { decision: 'allow', remember: 'session', updated_input: { valu: 'typo' } }, APPROVER);
    expect(res.status).toBe(400);
    const err = (await res.json()) as Json;
    expect(err.error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    expect(err.error.message).toContain('The required parameter `value` is missing');
    expect(err.error.message).toContain('An unexpected parameter `valu` was provided');
    approver.send({ type: 'permission.respond', request_id: req.id, decision: 'allow', updated_input: { value: 7 } });
    const frame = await approver.next((f) => f.type === 'error');
    expect(frame).toMatchObject({ code: 'TOOLEXEC_ERR_REQUEST_INVALID', request_id: req.id });
    const listed = (await (await fetch(`${base}/permissions/requests`, { headers: { authorization: `Bearer ${APPROVER}` } })).json()) as Json;
    expect(listed.requests.find((r: { id: string }) => r.id === req.id)).toMatchObject({ status: 'pending' });
    const rules = (await (await fetch(`${base}/permissions/rules`, { headers: { authorization: `Bearer ${APPROVER}` } })).json()) as Json;
    expect(rules.rules.filter((r: { source: string }) => r.source === 'session')).toEqual([]);
    expect(calls).toEqual([]);
    // The corrected answer runs the call with it.
    expect((await post(base, `/permissions/requests/${req.id}`, { decision: 'allow', updated_input: { value: 'fixed' } }, APPROVER)).status).toBe(200);
    const out = (await (await pending).json()) as Json;
    expect(out.tool_results[0].content).toBe('value=fixed');
    expect(calls).toEqual([{ value: 'fixed' }]);
    // The execution's input is the model's; its decision chain says what ran instead.
    const ex = (await (await fetch(`${base}/executions/${out.executions[0].id}`, { headers: { authorization: `Bearer ${WATCHER}` } })).json()) as Json;
    expect(ex.execution.input).toEqual({ value: 'orig' });
    expect(ex.execution.decision.chain).toContainEqual({ layer: 'user', outcome: 'allow', detail: 'alice (updated the input: {"value":"fixed"})' });
    expect(ex.execution.decision.reason).toEqual({ type: 'user', detail: 'alice' });
  });

  it('remember "session" adds a rule GET lists and DELETE revokes; it never beats a configured deny', async () => {
    const { port, base } = await start({ permissions: { deny: ['UnsafeSleep'] } });
    const approver = await connect(port, APPROVER);
    approver.send({ type: 'subscribe', session_id: 'sc' });
    const pending = post(base, '/execute', { session_id: 'sc', tool_uses: [use('Probe', { value: 'x' }, 'c1')] });
    const req = (await approver.next((f) => f.type === 'permission.request')).request as { id: string; suggested_rule: string };
    expect(req.suggested_rule).toBe('Probe');
    approver.send({ type: 'permission.respond', request_id: req.id, decision: 'allow', remember: 'session' });
    await pending;
    const next = await (await post(base, '/execute', { session_id: 'sc', tool_uses: [use('Probe', { value: 'y' }, 'c2')] })).json() as Json;
    expect(next.executions[0].decision).toEqual({ behavior: 'allow', reason: { type: 'rule', detail: 'Probe' } });
    const other = await (await post(base, '/execute', { session_id: 'other', tool_uses: [use('Probe', { value: 'y' }, 'c3')] })).json() as Json;
    expect(other.executions[0].decision.reason.type).toBe('headless');
    const rules = await (await fetch(`${base}/permissions/rules?session_id=sc`, { headers: { authorization: `Bearer ${APPROVER}` } })).json() as Json;
    const remembered = rules.rules.find((r: { source: string }) => r.source === 'session');
    expect(remembered).toMatchObject({ rule: 'Probe', behavior: 'allow', session_id: 'sc', created_by: 'alice', read_only: false });
    const configured = rules.rules.find((r: { source: string }) => r.source === 'config');
    expect(configured).toMatchObject({ rule: 'UnsafeSleep', behavior: 'deny', read_only: true });
    const ro = await fetch(`${base}/permissions/rules/${configured.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${APPROVER}` } });
    expect(ro.status).toBe(409);
    const del = await fetch(`${base}/permissions/rules/${remembered.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${APPROVER}` } });
    expect(del.status).toBe(204);
    // Revoked: the session's next call asks again.
    const afterP = post(base, '/execute', { session_id: 'sc', tool_uses: [use('Probe', { value: 'y' }, 'c4')] });
    const req4 = (await approver.next((f) => f.type === 'permission.request')).request as { id: string };
    approver.send({ type: 'permission.respond', request_id: req4.id, decision: 'deny' });
    const after = await (await afterP).json() as Json;
    expect(after.executions[0].decision.reason).toEqual({ type: 'user', detail: 'alice' });
    // A remembered "always" allow does not beat a configured deny.
    const created = await post(base, '/permissions/rules', { behavior: 'allow', rule: 'UnsafeSleep', scope: 'always' }, APPROVER);
    expect(created.status).toBe(201);
    const blocked = await (await post(base, '/execute', { session_id: 'sd', tool_uses: [use('UnsafeSleep', { ms: 1, tag: 'x' }, 'd1')] })).json() as Json;
    expect(blocked.executions[0].decision).toEqual({ behavior: 'deny', reason: { type: 'rule', detail: 'UnsafeSleep' } });
  });

  it('streams execution.started, progress and finished to subscribers, and cancels over the websocket', async () => {
    const { port, base } = await start({ permissions: { allow: ['UnsafeSleep'] } });
    const watcher = await connect(port, WATCHER);
    watcher.send({ type: 'subscribe', session_id: 'se' });
    await watcher.next((f) => f.type === 'ack');
    const accepted = await (await post(base, '/execute', { session_id: 'se', wait: false, tool_uses: [use('UnsafeSleep', { ms: 30_000, tag: 'x' }, 'e1')] })).json() as Json;
    const id = accepted.executions[0].id;
    const started = await watcher.next((f) => f.type === 'execution.started');
    expect(started.execution).toMatchObject({ id, tool: 'UnsafeSleep', tool_use_id: 'e1' });
    // The watcher may not cancel (read scope); an executor may.
    watcher.send({ type: 'cancel', execution_id: id });
    expect((await watcher.next((f) => f.type === 'error')).code).toBe('TOOLEXEC_ERR_AUTH_SCOPE');
    for (let i = 0; i < 200 && t!.app.toolexec.registry.get(id)?.call.status !== 'running'; i++) await new Promise((r) => setTimeout(r, 10));
    const agent = await connect(port, AGENT);
    agent.send({ type: 'cancel', execution_id: id });
    await agent.next((f) => f.type === 'ack' && f.ref === 'cancel');
    const finished = await watcher.next((f) => f.type === 'execution.finished');
    expect(finished.execution).toMatchObject({ id, status: 'cancelled', error_class: 'cancelled' });
  });

  it('sends execution events while connections subscribe: to the one left when another leaves, none after the last unsubscribes, and again on a new subscription', async () => {
    const { port, base } = await start({ permissions: { allow: ['Probe'] } });
    const run = async (id: string): Promise<void> => {
      const r = await post(base, '/execute', { session_id: 'sw', tool_uses: [use('Probe', { value: id }, id)] });
      expect(r.status).toBe(200);
    };
    const finishedOf = (c: Client, id: string) => c.next((f) => f.type === 'execution.finished' && (f.execution as { tool_use_id: string }).tool_use_id === id);
    const a = await connect(port, WATCHER);
    const b = await connect(port, WATCHER);
    for (const c of [a, b]) {
      c.send({ type: 'subscribe', session_id: 'sw' });
      await c.next((f) => f.type === 'ack' && f.ref === 'subscribe');
    }
    await run('w1');
    await finishedOf(a, 'w1');
    await finishedOf(b, 'w1');
    a.ws.close();
    await run('w2');
    await finishedOf(b, 'w2');
    b.send({ type: 'unsubscribe', session_id: 'sw' });
    await b.next((f) => f.type === 'ack' && f.ref === 'unsubscribe');
    await run('w3');
    b.send({ type: 'subscribe', session_id: '*' });
    await b.next((f) => f.type === 'ack' && f.ref === 'subscribe');
    await run('w4');
    await b.next((f) => f.type === 'execution.started' && (f.execution as { tool_use_id: string }).tool_use_id === 'w4');
    await finishedOf(b, 'w4');
    // w3 ran while nobody subscribed: no frame of it came (w4's came after where its would be).
    expect(b.frames.filter((f) => (f.execution as { tool_use_id?: string } | undefined)?.tool_use_id === 'w3')).toEqual([]);
  });

  it('answers malformed frames with an error frame and keeps the connection', async () => {
    const { port } = await start();
    const c = await connect(port, APPROVER);
    for (const bad of ['not json', '{"type":"nope"}', '{"type":"subscribe"}', JSON.stringify({ type: 'permission.respond', request_id: 'x', decision: 'maybe' }), '[]']) {
      c.send(bad);
      const f = await c.next((x) => x.type === 'error');
      expect(f.code).toBe('TOOLEXEC_ERR_WS_FRAME_INVALID');
    }
    c.send({ type: 'permission.respond', request_id: 'preq_missing', decision: 'allow' });
    expect((await c.next((x) => x.type === 'error')).code).toBe('TOOLEXEC_ERR_PERMISSION_REQUEST_NOT_FOUND');
    // A frame over the limit closes the connection with 1009 (message too big).
    const closed = new Promise<number>((resolve) => c.ws.on('close', (code) => resolve(code)));
    c.send('x'.repeat(200 * 1024));
    expect(await closed).toBe(1009);
  });

  it('refuses a websocket without a valid token', async () => {
    const { port } = await start();
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0000000000' }]) {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers });
      sockets.push(ws);
      ws.on('error', () => {});
      const status = await new Promise<number>((resolve) =>
        ws.on('unexpected-response', (req, res) => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        }),
      );
      expect(status).toBe(401);
    }
  });

  it('headless "wait" waits for an approver who subscribes later', async () => {
    const { port, base } = await start({ permissions: { headless: 'wait', askTimeoutMs: 30_000 } });
    const pending = post(base, '/execute', { session_id: 'sf', tool_uses: [use('Probe', { value: 'late' }, 'f1')] });
    await new Promise((r) => setTimeout(r, 200));
    const approver = await connect(port, APPROVER);
    approver.send({ type: 'subscribe', session_id: 'sf' });
    const req = (await approver.next((f) => f.type === 'permission.request')).request as { id: string };
    approver.send({ type: 'permission.respond', request_id: req.id, decision: 'allow' });
    expect((await (await pending).json() as Json).executions[0].status).toBe('succeeded');
  });
});

describe('POST /permissions/check', () => {
  it('explains a decision with its chain without running anything', async () => {
    const calls: unknown[] = [];
    const { base } = await start({ permissions: { ask: ['Probe(ask-me)'], allow: ['Probe'] } }, { extraTools: [probeTool({ calls })] });
    const check = async (input: unknown) =>
      (await post(base, '/permissions/check', { name: 'Probe', input }, WATCHER)).json() as Json;
    const allow = await check({ value: 'fine' });
    expect(allow).toMatchObject({ tool: 'Probe', behavior: 'allow', reason: { type: 'rule', detail: 'Probe' } });
    expect(allow.chain.map((c: { layer: string }) => c.layer)).toEqual(['tool', 'rules']);
    const unknown = await post(base, '/permissions/check', { name: 'Nope', input: {} }, WATCHER);
    expect(unknown.status).toBe(404);
    const bad = await post(base, '/permissions/check', { name: 'Probe', input: { value: 3 } }, WATCHER);
    expect(bad.status).toBe(400);
    expect(calls).toEqual([]);
  });
});
