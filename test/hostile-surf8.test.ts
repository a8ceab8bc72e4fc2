/**
 * Robustness hunt (surf8), against a real listening service: what the other
 * hostile suites did not reach. Each case asserts the answer and that the
 * service keeps serving, never elapsed time.
 */
import http from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MAX_SUBSCRIPTIONS } from '../src/ws/hub.js';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';
import { connectWs } from './helpers-fuzz-ws.js';

const TOKEN = 'surf8-admin-token-0123456789';
const AGENT = 'surf8-agent-token-0123456789';
const tokens = [
  { name: 'admin', token: TOKEN, scopes: ['execute' as const, 'read' as const, 'approve' as const, 'admin' as const] },
  { name: 'agent', token: AGENT, scopes: ['execute' as const] },
];

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(() => cleanupTmp());

async function start(): Promise<{ port: number; base: string }> {
  t = await makeApp({ server: { tokens } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as { port: number }).port;
  return { port, base: `http://127.0.0.1:${port}` };
}

describe('websocket subscriptions', () => {
  it('one connection holds at most MAX_SUBSCRIPTIONS sessions (ever new ids grew two maps without bound); re-subscribing and "*" still work', async () => {
    const { port, base } = await start();
    const c = await connectWs(port, AGENT);
    for (let i = 0; i < MAX_SUBSCRIPTIONS + 50; i++) c.send({ type: 'subscribe', session_id: `s-${i}` });
    c.send({ type: 'ping' });
    const { before } = await c.until((f) => f.type === 'pong', 30_000);
    expect(before.filter((f) => f.type === 'ack')).toHaveLength(MAX_SUBSCRIPTIONS);
    const errors = before.filter((f) => f.type === 'error');
    expect(errors).toHaveLength(50);
    expect(errors[0]).toMatchObject({ code: 'TOOLEXEC_ERR_WS_FRAME_INVALID' });
    // A session already held is acknowledged again; freeing one makes room.
    expect(await c.roundTrip({ type: 'subscribe', session_id: 's-0' })).toEqual([{ type: 'ack', ref: 'subscribe', session_id: 's-0' }]);
    await c.roundTrip({ type: 'unsubscribe', session_id: 's-1' });
    expect(await c.roundTrip({ type: 'subscribe', session_id: 'fresh' })).toEqual([{ type: 'ack', ref: 'subscribe', session_id: 'fresh' }]);
    expect(c.closed).toBeUndefined();
    // A reader can still take every session at once.
    const admin = await connectWs(port, TOKEN);
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) admin.send({ type: 'subscribe', session_id: `a-${i}` });
    expect((await admin.roundTrip({ type: 'subscribe', session_id: '*' })).slice(-1)).toMatchObject([{ type: 'error', code: 'TOOLEXEC_ERR_WS_FRAME_INVALID' }]);
    await admin.roundTrip({ type: 'unsubscribe', session_id: 'a-0' });
    expect(await admin.roundTrip({ type: 'subscribe', session_id: '*' })).toEqual([{ type: 'ack', ref: 'subscribe', session_id: '*' }]);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('a result whose chunks are gone before the first byte (deleted after its row was read, or a damaged row) is a 404 in the contract\'s shape, not a 500 of Fastify\'s', async () => {
    const { base } = await start();
    const text = 'y'.repeat(300 * 1024);
    const meta = t!.app.toolexec.results.put({ sessionId: 's', tool: 'Bash' }, text);
    // What the stream meets when retention deletes the result between the route's read of its row and its first chunk.
    t!.app.toolexec.db.prepare('DELETE FROM result_chunks WHERE result_id = ?').run(meta.id);
    for (const range of [undefined, 'bytes=100-200']) {
      const res = await fetch(`${base}/results/${meta.id}`, { headers: { authorization: `Bearer ${TOKEN}`, ...(range ? { range } : {}) } });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('content-range')).toBeNull();
      expect(await res.json()).toMatchObject({ error: { code: 'TOOLEXEC_ERR_RESULT_NOT_FOUND' } });
    }
    // A row whose size is not one went out as `Content-Length: -5`, which no client could parse.
    const other = t!.app.toolexec.results.put({ sessionId: 's', tool: 'Bash' }, text);
    t!.app.toolexec.db.prepare('UPDATE results SET total_bytes = -5 WHERE id = ?').run(other.id);
    const damaged = await fetch(`${base}/results/${other.id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(damaged.status).toBe(404);
    expect(await damaged.json()).toMatchObject({ error: { code: 'TOOLEXEC_ERR_RESULT_NOT_FOUND' } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});

/** GET with a raw client that reads `firstBytes`, runs `between`, then reads to the end or the socket's close. */
function partialGet(port: number, path: string, firstBytes: number, between: () => void): Promise<{ status: number; length: number; received: number; outcome: 'end' | 'aborted' | 'error' }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let received = 0;
      let paused = false;
      const done = (outcome: 'end' | 'aborted' | 'error') =>
        resolve({ status: res.statusCode ?? 0, length: Number(res.headers['content-length']), received, outcome });
      res.on('data', (d: Buffer) => {
        received += d.length;
        if (!paused && received >= firstBytes) {
          paused = true;
          res.pause();
          between();
          setTimeout(() => res.resume(), 50);
        }
      });
      res.on('end', () => done('end'));
      res.on('aborted', () => done('aborted'));
      res.on('error', () => done('error'));
    });
    req.on('error', () => resolve({ status: 0, length: NaN, received: 0, outcome: 'error' }));
  });
}

describe('GET /results/:id while retention deletes it', () => {
  it('a stream cut short by the deletion is aborted, not ended short of its Content-Length (the client waited for bytes that never came)', async () => {
    const { port, base } = await start();
    const text = 'x'.repeat(8 * 1024 * 1024);
    const meta = t!.app.toolexec.results.put({ sessionId: 's', tool: 'Bash' }, text);
    const r = await partialGet(port, `/results/${meta.id}`, 64 * 1024, () => t!.app.toolexec.results.delete(meta.id));
    expect(r.status).toBe(200);
    expect(r.length).toBe(text.length);
    expect(r.received).toBeLessThan(text.length);
    expect(r.outcome).not.toBe('end');
    // Gone now, and the service goes on.
    expect((await fetch(`${base}/results/${meta.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
