/**
 * Auth for every route of the OpenAPI document: without a token, with a wrong
 * token, and with a token that lacks the route's scope — each answered with
 * its code, on a real listening server. Open routes answer without a token.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';

type Op = { 'x-scope'?: string; security?: unknown[] };
const doc = JSON.parse(fs.readFileSync(path.resolve('openapi/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, Op>> };

const TOKENS = {
  execute: 'execute-only-token-000000',
  read: 'read-only-token-0000000000',
  approve: 'approve-only-token-000000',
};
const ops = Object.entries(doc.paths).flatMap(([p, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method, path: p, scope: op['x-scope'] ?? null, url: p.replace(/\{[^}]+\}/g, 'some-id') })),
);

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await makeApp({
    server: {
      tokens: [
        { name: 'executor', token: TOKENS.execute, scopes: ['execute'] },
        { name: 'reader', token: TOKENS.read, scopes: ['read'] },
        { name: 'approver', token: TOKENS.approve, scopes: ['approve'] },
      ],
    },
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t.close();
  cleanupTmp();
});

async function request(method: string, url: string, token?: string): Promise<{ status: number; code: string | undefined }> {
  if (url === '/ws') {
    return new Promise((resolve) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      ws.on('error', () => {});
      ws.on('open', () => {
        ws.close();
        resolve({ status: 101, code: undefined });
      });
      ws.on('unexpected-response', (req, res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, code: (JSON.parse(body) as { error?: { code: string } }).error?.code });
        });
      });
    });
  }
  const res = await fetch(`${base}${url}`, {
    method: method.toUpperCase(),
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method === 'get' || method === 'delete' ? {} : { 'content-type': 'application/json' }) },
    body: method === 'get' || method === 'delete' ? undefined : '{}',
  });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: res.status, code };
}

describe('every protected route', () => {
  const protectedOps = ops.filter((o) => o.scope !== null);

  it('covers the routes the document protects', () => {
    expect(protectedOps.length).toBeGreaterThan(15);
  });

  for (const o of protectedOps) {
    it(`${o.method.toUpperCase()} ${o.path} (scope ${o.scope})`, async () => {
      expect(await request(o.method, o.url)).toEqual({ status: 401, code: 'TOOLEXEC_ERR_AUTH_MISSING' });
      expect(await request(o.method, o.url, 'not-a-real-token-at-all-0000')).toEqual({ status: 401, code: 'TOOLEXEC_ERR_AUTH_INVALID' });
      if (o.scope !== 'any') {
        const other = Object.entries(TOKENS).find(([scope]) => scope !== o.scope)![1];
        expect(await request(o.method, o.url, other)).toEqual({ status: 403, code: 'TOOLEXEC_ERR_AUTH_SCOPE' });
        // The right scope gets past authentication (whatever the route then says about "some-id").
        const right = (TOKENS as Record<string, string>)[o.scope!]!;
        const ok = await request(o.method, o.url, right);
        expect([401, 403]).not.toContain(ok.status);
      } else {
        expect((await request(o.method, o.url, TOKENS.read)).status).toBe(101);
      }
    });
  }
});

describe('open routes', () => {
  for (const o of ops.filter((x) => x.scope === null)) {
    it(`${o.method.toUpperCase()} ${o.path} answers without a token`, async () => {
      const r = await request(o.method, o.url);
      expect(r.status).toBeLessThan(400);
    });
  }
});

describe('one keep-alive connection', () => {
  /** Requests in order over a single socket; each answer's status and code. */
  async function onOneSocket(tokens: Array<string | undefined>): Promise<Array<{ status: number; code: string | undefined }>> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const out: Array<{ status: number; code: string | undefined }> = [];
    try {
      for (const token of tokens) {
        out.push(
          await new Promise((resolve, reject) => {
            const req = http.request(`${base}/tools`, { agent, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
              sockets.add(res.socket);
              let body = '';
              res.on('data', (b: Buffer) => (body += b.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, code: res.statusCode === 200 ? undefined : (JSON.parse(body) as { error: { code: string } }).error.code }));
            });
            req.on('error', reject);
            req.end();
          }),
        );
      }
    } finally {
      agent.destroy();
    }
    expect(sockets.size).toBe(1);
    return out;
  }

  it('digests a repeated token once, and still judges every other token it carries as a new one', async () => {
    const digests = t.app.authenticator.digests;
    // GET /tools needs the execute scope.
    const exec = TOKENS.execute;
    const results = await onOneSocket([
      exec,
      exec,
      exec,
      // The remembered token's neighbours: one character off, longer, shorter; none; another scope's.
      `${exec.slice(0, -1)}1`,
      `${exec}0`,
      exec.slice(0, -1),
      undefined,
      TOKENS.read,
      exec,
    ]);
    expect(results).toEqual([
      { status: 200, code: undefined },
      { status: 200, code: undefined },
      { status: 200, code: undefined },
      { status: 401, code: 'TOOLEXEC_ERR_AUTH_INVALID' },
      { status: 401, code: 'TOOLEXEC_ERR_AUTH_INVALID' },
      { status: 401, code: 'TOOLEXEC_ERR_AUTH_INVALID' },
      { status: 401, code: 'TOOLEXEC_ERR_AUTH_MISSING' },
      // The read-only token, now the connection's last valid one, lacks execute.
      { status: 403, code: 'TOOLEXEC_ERR_AUTH_SCOPE' },
      { status: 200, code: undefined },
    ]);
    // The first execute token, the three wrong ones, the read token and the execute token once more (no longer the last).
    expect(t.app.authenticator.digests - digests).toBe(6);
  });
});
