/**
 * Helpers for the hook, classifier, websocket and rules suites: shell
 * scripts in temp dirs, the fixtures under test/fixtures/hooks, a real local
 * HTTP server that records what it receives, and readers for what an
 * execution recorded (hook messages, the decision chain).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HooksConfig } from '../src/config/schema.js';
import type { HookMessage } from '../src/hooks/types.js';
import type { ChainStep } from '../src/permissions/types.js';
import { execute, textOf, use, type TestApp } from './helpers.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hooks');

export function fixture(name: string): string {
  return path.join(FIXTURES, name);
}

/** An executable /bin/sh script in `dir`. */
export function script(dir: string, name: string, body: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return p;
}

/** A PreToolUse configuration of one command hook (under `matcher`, when given; `extra` adds fields such as timeout or async). */
export const pre = (command: string, matcher?: string, extra: Record<string, unknown> = {}): HooksConfig => ({
  PreToolUse: [{ ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: 'command', command, ...extra }] }],
});

/** A hook command that prints `json` on stdout (after reading its stdin) and exits `code`. */
export function printing(dir: string, name: string, json: unknown, code = 0): string {
  const out = path.join(dir, `${name}.out`);
  fs.writeFileSync(out, typeof json === 'string' ? json : JSON.stringify(json));
  return script(dir, name, `cat >/dev/null; cat '${out}'; exit ${code}`);
}

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LocalServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export type Handler = (req: Recorded, res: http.ServerResponse) => void | Promise<void>;

/**
 * Listens on 127.0.0.1 (a free port) and gives the address and a close that
 * also ends the connections still open (a keep-alive client would hold it).
 */
export async function listenLocal(server: http.Server): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A real HTTP server on 127.0.0.1 that records every request and answers with `handler`. */
export async function localServer(handler: Handler): Promise<LocalServer> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(rec);
      Promise.resolve(handler(rec, res)).catch(() => {
        res.statusCode = 599;
        res.end();
      });
    });
  });
  const { url, close } = await listenLocal(server);
  return { url, requests, close };
}

export function json(res: http.ServerResponse, body: unknown, status = 200): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

/** One call through POST /execute: its result text, execution summary, recorded hook messages and chain. */
export async function run(t: TestApp, name: string, input: Record<string, unknown>, session = 's') {
  const r = await execute(t.app, { session_id: session, tool_uses: [use(name, input)] });
  if (r.status !== 200) throw new Error(`POST /execute answered ${r.status}: ${JSON.stringify(r.body)}`);
  const exec = r.body.executions[0]!;
  const row = t.app.toolexec.executions.get(exec.id);
  const messages = row?.hook_messages ? (JSON.parse(row.hook_messages) as HookMessage[]) : [];
  const chain = row?.decision ? (JSON.parse(row.decision).chain as ChainStep[]) : [];
  const block = r.body.tool_results[0]!;
  return { exec, block, text: textOf(block.content), messages, chain };
}

/** The newest audit row. */
export function lastAudit(t: TestApp) {
  return t.app.toolexec.audit.query({ limit: 1 })[0];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
