/**
 * One connection that sends frames as fast as it can (answers for unknown
 * requests, invalid JSON, subscribe/unsubscribe churn), from another process
 * on a real listening server: the server handles its frames a few per turn
 * of the event loop, so that other clients are served between them, answers
 * each of them, and keeps nothing of the connection once it is gone.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanupTmp, listenLocalApp, makeApp, tmpDir } from './helpers.js';

afterAll(cleanupTmp);

const APPROVER = 'approver-token-0123456789';
const WATCHER = 'watcher-token-0123456789';
const FRAMES = 60_000;

/** The flooder: FRAMES frames in one go, then a ping; prints what came back once the pong arrives. */
const FLOODER = `
const WebSocket = require(${JSON.stringify(createRequire(import.meta.url).resolve('ws'))});
const [url, token, n] = process.argv.slice(2);
const ws = new WebSocket(url, { headers: { authorization: 'Bearer ' + token } });
const got = {};
ws.on('message', (d) => {
  const f = JSON.parse(String(d));
  const k = f.type === 'error' ? f.code : f.type;
  got[k] = (got[k] || 0) + 1;
  if (f.type === 'pong') { console.log(JSON.stringify(got)); ws.close(); }
});
ws.on('open', () => {
  for (let i = 0; i < Number(n); i++) {
    const f = i % 3 === 0 ? '{not json ' + i
      : i % 3 === 1 ? JSON.stringify({ type: 'permission.respond', request_id: 'preq_nope' + i, decision: 'allow' })
      : JSON.stringify({ type: i % 2 ? 'unsubscribe' : 'subscribe', session_id: 's' + (i % 500) });
    ws.send(f);
  }
  ws.send(JSON.stringify({ type: 'ping' }));
});
ws.on('close', () => process.exit(0));
`;

describe('a connection that floods the websocket with frames', () => {
  it('is handled a few frames per turn of the event loop: another client is served meanwhile, every frame is answered, nothing stays', async () => {
    const t = await makeApp({
      server: {
        tokens: [
          { name: 'alice', token: APPROVER, scopes: ['approve', 'read'] },
          { name: 'watcher', token: WATCHER, scopes: ['read'] },
        ],
      },
    });
    try {
      const port = await listenLocalApp(t.app);
      // Frames the server takes from its sockets, and the most it took in one turn of the event loop.
      let handled = 0;
      t.app.websocketServer.on('connection', (ws: WebSocket) => ws.on('message', () => handled++));
      let mostPerTurn = 0;
      let atLastTurn = 0;
      let ticking = true;
      const tick = (): void => {
        mostPerTurn = Math.max(mostPerTurn, handled - atLastTurn);
        atLastTurn = handled;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);

      // A watcher pings all along; each pong is an answer it got while the flood was handled.
      const watcher = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${WATCHER}` } });
      await new Promise((r) => watcher.once('open', r));
      let pongs = 0;
      watcher.on('message', (d) => {
        if ((JSON.parse(String(d)) as { type: string }).type === 'pong') {
          pongs++;
          watcher.send('{"type":"ping"}');
        }
      });

      const script = path.join(tmpDir(), 'flooder.cjs');
      fs.writeFileSync(script, FLOODER);
      const child = spawn(process.execPath, [script, `ws://127.0.0.1:${port}/ws`, APPROVER, String(FRAMES)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += String(d)));
      // The watcher's first ping once the flood is under way.
      while (handled < 1000) await new Promise((r) => setTimeout(r, 5));
      const pongsBefore = pongs;
      watcher.send('{"type":"ping"}');
      await new Promise((r) => child.once('exit', r));
      ticking = false;
      const got = JSON.parse(out) as Record<string, number>;

      // Handled whole in a few turns (a socket read holds thousands of such frames), the flood held the event loop
      // for seconds: other clients, /healthz included, waited (300,000 invalid frames: 6.3 s between two turns).
      expect(mostPerTurn).toBeLessThanOrEqual(20);
      expect(pongs - pongsBefore).toBeGreaterThanOrEqual(1000);
      // Each frame got its answer: an error for the invalid ones and the answers to unknown requests, an ack for the others.
      const invalid = Math.ceil(FRAMES / 3);
      expect(got.TOOLEXEC_ERR_WS_FRAME_INVALID).toBe(invalid);
      expect(got.TOOLEXEC_ERR_PERMISSION_REQUEST_NOT_FOUND).toBe(Math.ceil((FRAMES - 1) / 3));
      expect(got.ack).toBe(FRAMES - invalid - got.TOOLEXEC_ERR_PERMISSION_REQUEST_NOT_FOUND!);
      expect(got.pong).toBe(1);
      // Gone with its subscriptions: only the watcher is left, and it is still answered.
      for (let i = 0; i < 200 && t.app.toolexec.hub.connections !== 1; i++) await new Promise((r) => setTimeout(r, 10));
      expect(t.app.toolexec.hub.connections).toBe(1);
      expect(t.app.toolexec.hub.hasApprover('s2')).toBe(false);
      watcher.close();
    } finally {
      await t.close();
    }
  });
});
