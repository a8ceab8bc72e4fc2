/**
 * Helpers for the MCP tests: the real servers from npm and this repository's
 * fixture servers, apps with a short reconnect backoff, polling with a bound,
 * and process checks for orphans.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { AppOptions } from '../src/app.js';
import type { ConfigInput } from '../src/config/schema.js';
import type { ServerStatus } from '../src/mcp/manager.js';
import type { ExecutionEvent } from '../src/executions/registry.js';
import { makeApp, type TestApp } from './helpers.js';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export const EVERYTHING = here('../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = here('../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const FIXTURE = here('./fixtures/mcp/fixture-server.mjs');
export const EVERYTHING_HTTP = here('./fixtures/mcp/everything-http.mjs');
export const EVERYTHING_SSE = here('./fixtures/mcp/everything-sse.mjs');

export const everythingStdio = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
export const fixtureStdio = (...args: string[]) => ({ command: process.execPath, args: [FIXTURE, ...args] });
export const filesystemStdio = (root: string) => ({ command: process.execPath, args: [FILESYSTEM, root] });

/** Fast reconnects, so that crash tests stay short. */
export const FAST_MCP = { reconnect: { initialDelayMs: 100, maxDelayMs: 500 }, connectTimeoutMs: 20_000 };

export async function makeMcpApp(config: ConfigInput, opts: Omit<AppOptions, 'config'> = {}): Promise<TestApp> {
  return makeApp(config, { mcp: FAST_MCP, ...opts });
}

/** Polls `fn` until it returns something truthy; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function serverStatus(app: FastifyInstance, name: string): ServerStatus {
  const s = app.toolexec.mcp.status().find((x) => x.name === name);
  if (!s) throw new Error(`no MCP server ${name}`);
  return s;
}

export async function waitConnected(app: FastifyInstance, names: string[], timeoutMs = 30_000): Promise<void> {
  await waitFor(
    () => names.every((n) => serverStatus(app, n).state === 'connected'),
    `MCP servers ${names.join(', ')} to connect (${JSON.stringify(app.toolexec.mcp.status().map((s) => [s.name, s.state, s.last_error]))})`,
    timeoutMs,
  );
}

export { isAlive } from './helpers.js';

/** Records the registry's events (execution started/progress/finished) in order. */
export function recordEvents(app: FastifyInstance): { events: ExecutionEvent[]; stop(): void } {
  const events: ExecutionEvent[] = [];
  const stop = app.toolexec.registry.subscribe((e) => events.push(e));
  return { events, stop };
}

export interface HttpFixture {
  port: number;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a fixture HTTP server script that prints its port, on 127.0.0.1. */
export async function startHttpFixture(script: string, env: NodeJS.ProcessEnv = {}): Promise<HttpFixture> {
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`fixture did not start: ${stderr}`)), 20_000);
    child.stdout!.once('data', (d: Buffer) => {
      clearTimeout(t);
      resolve(Number(String(d).trim()));
    });
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}: ${stderr}`)));
  });
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** The JSON lines a fixture server wrote to its FIXTURE_LOG. */
export function fixtureLog(file: string): Array<{ event: string; tool: string; tag?: string; pid: number }> {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; tool: string; tag?: string; pid: number });
}
