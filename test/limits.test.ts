/**
 * Request limits: the per-token rate limit (429 with Retry-After, other
 * tokens unaffected, open routes never limited; websocket frames too), the body size limit (413),
 * and a slow client cut off by the request timeout.
 */
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanupTmp, listenLocalApp, makeApp, probeTool, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const A = 'token-a-0123456789abcdef';
const B = 'token-b-0123456789abcdef';

describe('rate limit', () => {
  it('limits each token on its own, answers 429 with a code and Retry-After, and never limits the probes', async () => {
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: A }, { name: 'b', token: B }], rateLimit: { max: 3, timeWindowMs: 60_000 } },
        permissions: { allow: ['Probe'] },
      },
      { extraTools: [probeTool({})] },
    );
    const exec = (token: string) =>
      t!.app.inject({ method: 'POST', url: '/execute', headers: { authorization: `Bearer ${token}` }, payload: { tool_uses: [use('Probe', { value: 'x' })] } });
    for (let i = 0; i < 3; i++) expect((await exec(A)).statusCode).toBe(200);
    const limited = await exec(A);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('TOOLEXEC_ERR_RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await exec(B)).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('rate limit on websocket frames', () => {
  it('limits the frames of each token as its requests: past max in the window each frame gets an error with a code and is not acted on', async () => {
    t = await makeApp({ server: { tokens: [{ name: 'a', token: A }, { name: 'b', token: B }], rateLimit: { max: 5, timeWindowMs: 60_000 } } });
    const port = await listenLocalApp(t.app);
    const sockets: WebSocket[] = [];
    // Sends the frames and collects the answer to each (every frame gets exactly one).
    const answers = async (
      token: string,
      frames: number,
      frame = '{"type":"ping"}',
    ): Promise<Array<{ type: string; code?: string; retry_after_s?: number; request_id?: string; execution_id?: string }>> => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${token}` } });
      sockets.push(ws);
      const got: Array<{ type: string; code?: string }> = [];
      await new Promise<void>((resolve, reject) => {
        ws.on('error', reject);
        ws.on('message', (d) => {
          const f = JSON.parse(String(d)) as { type: string };
          if (f.type === 'hello') {
            for (let i = 0; i < frames; i++) ws.send(frame);
            return;
          }
          got.push(f);
          if (got.length === frames) resolve();
        });
      });
      return got;
    };
    try {
      // A token's eight pings: five answered, three refused (frames are not free of server.rateLimit).
      const a = await answers(A, 8);
      expect(a.map((f) => f.type)).toEqual(['pong', 'pong', 'pong', 'pong', 'pong', 'error', 'error', 'error']);
      expect(a[5]).toMatchObject({ code: 'TOOLEXEC_ERR_RATE_LIMITED', retry_after_s: expect.any(Number) });
      // Per token, not per connection: another connection of the same token is past the limit too.
      expect((await answers(A, 1))[0]).toMatchObject({ type: 'error', code: 'TOOLEXEC_ERR_RATE_LIMITED' });
      // A refused answer or cancel names what it refused: the approver knows which request to answer again.
      expect((await answers(A, 1, '{"type":"permission.respond","request_id":"preq_refused","decision":"allow"}'))[0]).toMatchObject({
        type: 'error',
        code: 'TOOLEXEC_ERR_RATE_LIMITED',
        request_id: 'preq_refused',
      });
      expect((await answers(A, 1, '{"type":"cancel","execution_id":"exe_refused"}'))[0]).toMatchObject({
        type: 'error',
        code: 'TOOLEXEC_ERR_RATE_LIMITED',
        execution_id: 'exe_refused',
      });
      // Another token is not.
      expect((await answers(B, 5)).map((f) => f.type)).toEqual(['pong', 'pong', 'pong', 'pong', 'pong']);
      // The connection stays open: the limit refuses frames, it does not cut anyone off.
      expect(sockets.every((s) => s.readyState === WebSocket.OPEN)).toBe(true);
    } finally {
      for (const s of sockets) s.terminate();
    }
  });
});

describe('body size', () => {
  it('answers a body over server.bodyLimitBytes with 413 and a code', async () => {
    t = await makeApp({ server: { bodyLimitBytes: 1024 } });
    const res = await t.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tool_uses: [use('Read', { file_path: 'x'.repeat(4000) })] }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_BODY_TOO_LARGE');
  });
});

describe('slow clients', () => {
  it('cuts off a client that trickles its request past server.requestTimeoutMs, and keeps serving others', async () => {
    t = await makeApp({ server: { requestTimeoutMs: 500 } });
    const port = await listenLocalApp(t.app);
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(`POST /execute HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"tool_uses":`);
    let answer = '';
    sock.on('data', (b) => (answer += b.toString()));
    const closedAfter = await new Promise<number>((resolve) => {
      const t0 = Date.now();
      const drip = setInterval(() => sock.write(' '), 100);
      sock.once('close', () => {
        clearInterval(drip);
        resolve(Date.now() - t0);
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"TOOLEXEC_ERR_REQUEST_TIMEOUT"');
    expect(closedAfter).toBeLessThan(10_000);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
