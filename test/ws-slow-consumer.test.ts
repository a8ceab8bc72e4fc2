/**
 * The websocket hub under a consumer that never reads, on a real listening
 * server: a tool floods progress while permission requests come and go; the
 * server's send buffer for the stuck client stays bounded (progress dropped
 * past `slowBytes`, permission frames never), a healthy subscriber gets
 * everything, a client past `maxBufferedBytes` is cut off without harming
 * the others, and the heartbeat terminates a peer that stopped answering.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { buildTool } from '../src/tool/build-tool.js';
import type { AnyTool } from '../src/tool/types.js';
import { cleanupTmp, listenLocalApp, makeApp, probeTool, use, type TestApp } from './helpers.js';
import { sleep } from './helpers-hooks.js';

const APPROVER = 'approver-token-0123456789';
const WATCHER = 'watcher-token-0123456789';
const AGENT = 'agent-token-0123456789';
const tokens = [
  { name: 'agent', token: AGENT, scopes: ['execute' as const] },
  { name: 'alice', token: APPROVER, scopes: ['approve' as const, 'read' as const] },
  { name: 'watcher', token: WATCHER, scopes: ['read' as const] },
];

let t: TestApp | undefined;
const sockets: Array<WebSocket | net.Socket> = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) (s instanceof WebSocket ? s.terminate() : s.destroy());
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

type Frame = { type: string; [k: string]: unknown };

/** A websocket client that records every frame; as approver it allows every request it sees. */
class Client {
  readonly frames: Frame[] = [];
  closed = false;
  constructor(
    readonly ws: WebSocket,
    approve: boolean,
  ) {
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as Frame;
      this.frames.push(f);
      if (approve && f.type === 'permission.request') {
        ws.send(JSON.stringify({ type: 'permission.respond', request_id: (f.request as { id: string }).id, decision: 'allow' }));
      }
    });
    ws.on('close', () => {
      this.closed = true;
    });
  }
  count(type: string): number {
    return this.frames.filter((f) => f.type === type).length;
  }
  async until(pred: () => boolean, what: string, ms = 30_000): Promise<void> {
    for (const end = Date.now() + ms; !pred(); ) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  }
}

async function connect(port: number, token: string, session: string, approve = false): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${token}` } });
  sockets.push(ws);
  const c = new Client(ws, approve);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'subscribe', session_id: session }));
  await c.until(() => c.count('ack') > 0, 'the subscribe ack');
  return c;
}

/** The TCP socket under a ws client: pausing it means the client never reads again. */
function tcp(c: Client): net.Socket {
  return (c.ws as unknown as { _socket: net.Socket })._socket;
}

interface Flood {
  tool: AnyTool;
  /** Resolves once the server's send buffer for some client passed `threshold`. */
  backedUp: Promise<void>;
  /** Lets the tool go on with its second part. */
  release(): void;
  maxBuffered: number;
  emitted: number;
}

/**
 * A tool that reports progress (payloads of `bytes`) until some client's
 * server-side send buffer passes `threshold`, waits to be released, then
 * reports `after` more. It samples every websocket's bufferedAmount after
 * each event.
 */
function flood(buffered: () => number[], opts: { bytes: number; threshold: number; after: number; max: number }): Flood {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let backedUpResolve!: () => void;
  const backedUp = new Promise<void>((r) => (backedUpResolve = r));
  const f: Flood = {
    backedUp,
    release: () => release(),
    maxBuffered: 0,
    emitted: 0,
    tool: buildTool({
      name: 'Chatty',
      description: 'Reports progress many times',
      inputSchema: z.strictObject({ tag: z.string() }),
      maxResultSizeChars: 100_000,
      checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
      call: async (input, _ctx, _canUse, _parent, onProgress) => {
        const pad = randomBytes(opts.bytes / 2).toString('hex');
        let extra = -1;
        for (let i = 0; i < opts.max && extra !== 0; i++) {
          onProgress({ progress: i + 1, message: `step ${i}`, data: pad });
          f.emitted += 1;
          const now = Math.max(0, ...buffered());
          f.maxBuffered = Math.max(f.maxBuffered, now);
          if (extra < 0 && now > opts.threshold) {
            backedUpResolve();
            await gate;
            extra = opts.after;
          }
          if (extra > 0) extra -= 1;
          // Let the sockets write between events, as a real tool's awaits would.
          await new Promise((r) => setImmediate(r));
        }
        return { data: `done ${input.tag} after ${f.emitted} events` };
      },
    }),
  };
  return f;
}

async function start(ws: { slowBytes: number; maxBufferedBytes: number; heartbeatMs?: number }, tools: AnyTool[], askTimeoutMs = 60_000) {
  t = await makeApp(
    { server: { tokens }, permissions: { askTimeoutMs, headless: 'deny' } },
    { extraTools: [probeTool({}), ...tools], ws: { heartbeatMs: 60_000, ...ws } },
  );
  return listenLocalApp(t.app);
}

function serverSockets(): WebSocket[] {
  return [...(t!.app as unknown as { websocketServer: { clients: Set<WebSocket> } }).websocketServer.clients];
}

async function post(port: number, body: unknown): Promise<{ status: number; json: { executions: Array<{ status: string; decision: { reason: { type: string } } | null }> } }> {
  const res = await fetch(`http://127.0.0.1:${port}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as never };
}

describe('a subscriber that never reads', () => {
  it('loses progress frames past slowBytes but no permission frame; the server buffer stays bounded; a healthy subscriber gets everything', async () => {
    const SLOW = 256 * 1024;
    const f = flood(() => serverSockets().map((s) => s.bufferedAmount), { bytes: 8 * 1024, threshold: SLOW, after: 500, max: 20_000 });
    const port = await start({ slowBytes: SLOW, maxBufferedBytes: 64 * 1024 * 1024 }, [f.tool]);
    const healthy = await connect(port, APPROVER, 's', true);
    const slow = await connect(port, WATCHER, 's');
    tcp(slow).pause();

    const chatty = await post(port, { session_id: 's', wait: false, tool_uses: [use('Chatty', { tag: 'a' }, 'chatty')] });
    expect(chatty.status).toBe(202);
    await f.backedUp;
    // Permission requests while the stuck client's buffer is past slowBytes.
    const K = 5;
    for (let i = 0; i < K; i++) {
      const r = await post(port, { session_id: 's', tool_uses: [use('Probe', { value: `p${i}` }, `probe${i}`)] });
      expect(r.json.executions[0]).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'user' } } });
    }
    f.release();
    await healthy.until(() => healthy.frames.some((x) => x.type === 'execution.finished' && (x.execution as { tool: string }).tool === 'Chatty'), 'Chatty to finish');

    // Bounded: once past slowBytes only essential frames were queued.
    expect(f.maxBuffered).toBeLessThan(SLOW + 256 * 1024);
    expect(healthy.count('execution.progress')).toBe(f.emitted);
    expect(healthy.count('permission.request')).toBe(K);

    tcp(slow).resume();
    await slow.until(() => slow.frames.some((x) => x.type === 'execution.finished' && (x.execution as { tool: string }).tool === 'Chatty'), 'the slow client to catch up');
    expect(slow.closed).toBe(false);
    expect(slow.count('permission.request')).toBe(K);
    expect(slow.count('permission.resolved')).toBe(K);
    expect(slow.count('execution.progress')).toBeGreaterThan(0);
    expect(slow.count('execution.progress')).toBeLessThan(f.emitted);
    // What it did get of the progress is in order.
    const steps = slow.frames.filter((x) => x.type === 'execution.progress').map((x) => (x.progress as { progress: number }).progress);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
  });

  it('is disconnected past maxBufferedBytes (permission frames pile up), without harming the other subscribers', async () => {
    const port = await start({ slowBytes: 64 * 1024, maxBufferedBytes: 1024 * 1024 }, []);
    const healthy = await connect(port, APPROVER, 's', true);
    const watcher = await connect(port, WATCHER, '*');
    const slow = await connect(port, WATCHER, 's');
    tcp(slow).pause();
    expect(t!.app.toolexec.hub.connections).toBe(3);

    // Each request carries a 256 KB input: its request and resolved frames are essential and never dropped.
    const big = randomBytes(128 * 1024).toString('hex');
    const N = 60;
    for (let i = 0; i < N && t!.app.toolexec.hub.connections === 3; i++) {
      const r = await post(port, { session_id: 's', tool_uses: [use('Probe', { value: `${i}:${big}` }, `big${i}`)] });
      expect(r.json.executions[0]!.status).toBe('succeeded');
    }
    // The stuck client was cut off (the kernel's buffers hold a few MB before the server's own grows).
    expect(t!.app.toolexec.hub.connections).toBe(2);
    expect(Math.max(0, ...serverSockets().map((s) => s.bufferedAmount))).toBeLessThan(1024 * 1024);

    // The others go on: a new request reaches both, and is answered.
    const before = watcher.count('permission.request');
    const r = await post(port, { session_id: 's', tool_uses: [use('Probe', { value: 'after' }, 'after')] });
    expect(r.json.executions[0]).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'user' } } });
    await watcher.until(() => watcher.count('permission.request') === before + 1, 'the watcher to see the request');
    expect(healthy.closed).toBe(false);
    expect(watcher.closed).toBe(false);
    expect(healthy.count('permission.request')).toBe(watcher.count('permission.request'));

    tcp(slow).resume();
    await slow.until(() => slow.closed, 'the cut-off client to see its socket close');
  });
});

describe('heartbeat', () => {
  it('terminates a peer that completed the handshake and then went silent; a live client stays', async () => {
    const port = await start({ slowBytes: 64 * 1024, maxBufferedBytes: 1024 * 1024, heartbeatMs: 100 }, []);
    const live = await connect(port, WATCHER, 's');
    // A raw TCP client: upgrade, then never read and never answer a ping.
    const raw = net.connect(port, '127.0.0.1');
    sockets.push(raw);
    let head = '';
    let rawClosed = false;
    raw.on('close', () => (rawClosed = true));
    await new Promise<void>((resolve, reject) => {
      raw.once('error', reject);
      raw.on('data', (b) => {
        head += b.toString('latin1');
        if (head.includes('\r\n\r\n')) {
          raw.pause();
          resolve();
        }
      });
      raw.write(
        [
          'GET /ws HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
          'Sec-WebSocket-Version: 13',
          `Authorization: Bearer ${WATCHER}`,
          '',
          '',
        ].join('\r\n'),
      );
    });
    expect(head.startsWith('HTTP/1.1 101')).toBe(true);
    expect(t!.app.toolexec.hub.connections).toBe(2);
    await live.until(() => t!.app.toolexec.hub.connections === 1, 'the silent peer to be terminated', 10_000);
    raw.resume();
    await live.until(() => rawClosed, 'the raw socket to close', 10_000);
    // The live client answered every ping and is still served.
    live.ws.send(JSON.stringify({ type: 'ping' }));
    await live.until(() => live.count('pong') === 1, 'a pong');
    expect(live.closed).toBe(false);
  });
});

describe('shutdown', () => {
  it('a call that reaches the person layer after the broker was closed is denied at once, not left waiting', async () => {
    const port = await start({ slowBytes: 64 * 1024, maxBufferedBytes: 1024 * 1024 }, [], 3000);
    await connect(port, APPROVER, 's');
    t!.app.toolexec.broker.cancelAll();
    const r = await post(port, { session_id: 's', tool_uses: [use('Probe', { value: 'late' }, 'late')] });
    expect(r.json.executions[0]).toMatchObject({ status: 'denied', decision: { reason: { type: 'user' } } });
    expect(t!.app.toolexec.broker.pendingCount).toBe(0);
  });
});

describe('an approver who connects while many requests wait', () => {
  it('is shown every waiting request as its socket drains, is never cut off for the backlog, and answers them all', async () => {
    const SESSIONS = 100;
    const PER_SESSION = 10;
    const N = SESSIONS * PER_SESSION;
    const SLOW = 64 * 1024;
    t = await makeApp(
      { server: { tokens, maxInFlightCalls: 5000 }, permissions: { askTimeoutMs: 120_000, headless: 'wait' } },
      // Read-only, so concurrency-safe: a session's ten calls wait for their answers together.
      { extraTools: [probeTool({ name: 'Asker', readOnly: true })], ws: { heartbeatMs: 60_000, slowBytes: SLOW, maxBufferedBytes: 512 * 1024 } },
    );
    const port = await listenLocalApp(t.app);
    const pad = 'p'.repeat(8192);
    for (let s = 0; s < SESSIONS; s++) {
      const uses = Array.from({ length: PER_SESSION }, (_, i) => use('Asker', { value: `${s}-${i}-${pad}` }, `late-${s}-${i}`));
      expect((await post(port, { session_id: `late-${s}`, tool_uses: uses, wait: false })).status).toBe(202);
    }
    const broker = t.app.toolexec.broker;
    for (let i = 0; broker.pendingCount < N; i++) {
      if (i > 3000) throw new Error('timed out waiting for every request to wait');
      await sleep(10);
    }
    // About 8 MB of requests wait: far more than the connection may have buffered (512 KB).
    let maxBuffered = 0;
    let sampling = true;
    const sample = (): void => {
      if (!sampling) return;
      for (const s of serverSockets()) maxBuffered = Math.max(maxBuffered, s.bufferedAmount);
      setImmediate(sample);
    };
    sample();
    // The approver subscribes, and reads nothing for a moment (a slow start: the kernel's buffers fill).
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${APPROVER}` } });
    sockets.push(ws);
    const approver = new Client(ws, false);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    tcp(approver).pause();
    ws.send(JSON.stringify({ type: 'subscribe', session_id: '*' }));
    await sleep(300);
    tcp(approver).resume();
    await approver.until(() => approver.closed || approver.count('permission.request') === N, 'the backlog');
    sampling = false;
    expect(approver.closed).toBe(false);
    // What waited was sent as the socket drained: never much past slowBytes in the server's buffer.
    expect(maxBuffered).toBeLessThanOrEqual(2 * SLOW);
    const ids = approver.frames.filter((f) => f.type === 'permission.request').map((f) => (f.request as { id: string }).id);
    expect(new Set(ids).size).toBe(N);
    // Answered twenty at a time (each answer is broadcast back as permission.resolved, with the request).
    for (let i = 0; i < N; i += 20) {
      for (const id of ids.slice(i, i + 20)) ws.send(JSON.stringify({ type: 'permission.respond', request_id: id, decision: 'allow' }));
      await approver.until(() => approver.count('ack') === Math.min(N, i + 20) + 1, 'the answers to be taken');
    }
    await approver.until(() => t!.app.toolexec.registry.size === 0, 'every call to run');
    expect(approver.count('error')).toBe(0);
    const rows = t.app.toolexec.db.prepare("SELECT behavior, reason_type, actor, COUNT(*) AS n FROM audit WHERE tool_use_id LIKE 'late-%' GROUP BY 1, 2, 3").all();
    expect(rows).toEqual([{ behavior: 'allow', reason_type: 'user', actor: 'alice', n: N }]);
  });
});

describe('a backlog answered in a burst', () => {
  it('reaches a watcher that reads slowly: the resolved frames do not carry every input again', async () => {
    const N = 400;
    t = await makeApp(
      { server: { tokens, maxInFlightCalls: 5000 }, permissions: { askTimeoutMs: 120_000, headless: 'wait' } },
      { extraTools: [probeTool({ name: 'Asker', readOnly: true })], ws: { heartbeatMs: 60_000, slowBytes: 64 * 1024, maxBufferedBytes: 1024 * 1024 } },
    );
    const port = await listenLocalApp(t.app);
    const watcher = await connect(port, WATCHER, '*');
    // 400 requests of 32 KB each: about 13 MB of inputs, more than the kernel's buffers take.
    const pad = 'q'.repeat(32 * 1024);
    for (let s = 0; s < N / 10; s++) {
      const uses = Array.from({ length: 10 }, (_, i) => use('Asker', { value: `${s}-${i}-${pad}` }, `burst-${s}-${i}`));
      expect((await post(port, { session_id: `burst-${s}`, tool_uses: uses, wait: false })).status).toBe(202);
    }
    await watcher.until(() => watcher.count('permission.request') === N, 'every request frame');
    // The watcher stops reading; a script answers every request, one after another.
    tcp(watcher).pause();
    const broker = t.app.toolexec.broker;
    for (const id of broker.pendingIds('*')) {
      const r = await fetch(`http://127.0.0.1:${port}/permissions/requests/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${APPROVER}` },
        body: JSON.stringify({ decision: 'allow' }),
      });
      expect(r.status).toBe(200);
    }
    tcp(watcher).resume();
    await watcher.until(() => watcher.closed || watcher.count('permission.resolved') === N, 'every resolved frame');
    expect(watcher.closed).toBe(false);
    const resolved = watcher.frames.filter((f) => f.type === 'permission.resolved').map((f) => f.request as Record<string, unknown>);
    expect(resolved.every((r) => r.status === 'allowed' && r.resolved_by === 'alice' && typeof r.summary === 'string' && !('input' in r))).toBe(true);
  });
});

describe('several subscriptions on one connection', () => {
  async function waiting(port: number, perSession: Record<string, number>, pad = ''): Promise<void> {
    let total = 0;
    const before = t!.app.toolexec.broker.pendingCount;
    for (const [session, n] of Object.entries(perSession)) {
      const uses = Array.from({ length: n }, (_, i) => use('Asker', { value: `${session}-${i}${pad}` }, `${session}-${i}`));
      expect((await post(port, { session_id: session, tool_uses: uses, wait: false })).status).toBe(202);
      total += n;
    }
    for (let i = 0; t!.app.toolexec.broker.pendingCount < before + total; i++) {
      if (i > 3000) throw new Error('timed out waiting for the requests to wait');
      await sleep(10);
    }
  }
  async function app(ws: { slowBytes: number; maxBufferedBytes: number } = { slowBytes: 64 * 1024, maxBufferedBytes: 4 * 1024 * 1024 }) {
    t = await makeApp(
      { server: { tokens, maxInFlightCalls: 5000 }, permissions: { askTimeoutMs: 120_000, headless: 'wait' } },
      { extraTools: [probeTool({ name: 'Asker', readOnly: true })], ws: { heartbeatMs: 60_000, ...ws } },
    );
    return listenLocalApp(t.app);
  }
  const requestIds = (c: Client): string[] => c.frames.filter((f) => f.type === 'permission.request').map((f) => (f.request as { id: string }).id);
  async function subscribe(c: Client, session: string): Promise<void> {
    const acks = c.count('ack');
    c.ws.send(JSON.stringify({ type: 'subscribe', session_id: session }));
    await c.until(() => c.count('ack') === acks + 1, `the ack of ${session}`);
  }

  it('"*" then a session, or a session then "*", or a session twice: each waiting request is shown once', async () => {
    const port = await app();
    await waiting(port, { a: 5, b: 3 });
    const all = t!.app.toolexec.broker.pendingIds('*');

    const starFirst = await connect(port, APPROVER, '*');
    await starFirst.until(() => requestIds(starFirst).length >= all.length, 'the backlog of "*"');
    await subscribe(starFirst, 'a');
    await subscribe(starFirst, 'a');

    const sessionFirst = await connect(port, APPROVER, 'a');
    await sessionFirst.until(() => requestIds(sessionFirst).length >= 5, 'the backlog of a');
    await subscribe(sessionFirst, '*');
    await sessionFirst.until(() => requestIds(sessionFirst).length >= all.length, 'the backlog of "*"');

    // A ping round trip: anything the subscribes queued has been written out before the pong.
    for (const c of [starFirst, sessionFirst]) {
      c.ws.send(JSON.stringify({ type: 'ping' }));
      await c.until(() => c.count('pong') === 1, 'a pong');
      await sleep(100);
      expect(requestIds(c).sort()).toEqual([...all].sort());
    }
    // A request that arrives later reaches each connection once, whatever it subscribed to.
    await waiting(port, { late: 1 });
    for (const c of [starFirst, sessionFirst]) await c.until(() => requestIds(c).length === all.length + 1, 'the late request');
  });

  it('a request that arrives while the backlog is still being sent comes after it: oldest first, as the README says', async () => {
    const SLOW = 64 * 1024;
    const port = await app({ slowBytes: SLOW, maxBufferedBytes: 16 * 1024 * 1024 });
    // 40 sessions of 10 requests of 32 KB: about 13 MB, more than slowBytes and the kernel's buffers take.
    const pad = 'b'.repeat(32 * 1024);
    const sessions: Record<string, number> = {};
    for (let s = 0; s < 40; s++) sessions[`old-${s}`] = 10;
    await waiting(port, sessions, pad);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${APPROVER}` } });
    sockets.push(ws);
    const approver = new Client(ws, false);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    tcp(approver).pause();
    ws.send(JSON.stringify({ type: 'subscribe', session_id: '*' }));
    await sleep(300);
    // Still draining: the server holds frames it could not write yet.
    expect(Math.max(0, ...serverSockets().map((x) => x.bufferedAmount))).toBeGreaterThan(0);
    await waiting(port, { newcomer: 1 });
    tcp(approver).resume();
    await approver.until(() => requestIds(approver).length === 401, 'every request');
    const order = approver.frames.filter((f) => f.type === 'permission.request').map((f) => (f.request as { session_id: string }).session_id);
    expect(order.indexOf('newcomer')).toBe(400);
    expect(new Set(requestIds(approver)).size).toBe(401);
  });
});
