/**
 * Test helpers: temp directories, an app on a real SQLite file in a temp dir,
 * and small tools built with the real builder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { buildApp, type AppOptions } from '../src/app.js';
import type { ConfigInput } from '../src/config/schema.js';
import { buildTool } from '../src/tool/build-tool.js';
import type { AnyTool } from '../src/tool/types.js';

const dirs: string[] = [];

/**
 * Whether a process exists and is not a zombie. A process killed after its
 * parent died is reparented to pid 1, and where pid 1 does not reap (a CI
 * container's), it stays a zombie that kill(pid, 0) still finds.
 */
export function isAlive(pid: number): boolean {
  // A pid read from a file not written yet (NaN, 0) or a status without one
  // (undefined) would be "not alive", and pass every check that a process is gone.
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`isAlive: ${String(pid)} is not a process id`);
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export function tmpDir(prefix = 'toolexec-test-'): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

export function cleanupTmp(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export interface TestApp {
  app: FastifyInstance;
  workspace: string;
  dbPath: string;
  close(): Promise<void>;
}

/** An app with its workspace and database in a fresh temp dir. */
export async function makeApp(config: ConfigInput = {}, opts: Omit<AppOptions, 'config'> = {}): Promise<TestApp> {
  const root = tmpDir();
  const workspace = path.join(root, 'ws');
  fs.mkdirSync(workspace);
  const dbPath = path.join(root, 'data', 'toolexec.db');
  const app = await buildApp({
    logger: false,
    ...opts,
    config: {
      ...config,
      workspace: { root: workspace, ...(config.workspace ?? {}) },
      storage: { path: dbPath, ...(config.storage ?? {}) },
    },
  });
  return { app, workspace, dbPath, close: () => app.close() };
}

export interface ExecuteBody {
  session_id?: string;
  tool_uses: unknown;
  wait?: boolean;
}

export async function execute(app: FastifyInstance, body: ExecuteBody, headers: Record<string, string> = {}) {
  const res = await app.inject({ method: 'POST', url: '/execute', payload: body as object, headers });
  return { status: res.statusCode, body: res.json() as ExecuteResponse };
}

export interface ExecuteResponse {
  session_id: string;
  tool_results: Array<{ type: 'tool_result'; tool_use_id: string; content: unknown; is_error?: boolean }>;
  messages: Array<{ role: 'tool'; tool_call_id: string; content: string } | { type: 'function_call_output'; call_id: string; output: string }>;
  executions: Array<{
    id: string;
    tool_use_id: string;
    tool: string;
    status: string;
    decision: { behavior: string; reason: { type: string; detail: string } } | null;
    error_class: string | null;
    result_id: string | null;
    replayed?: boolean;
  }>;
  error?: { code: string; message: string };
}

export function use(name: string, input: unknown, id = `toolu_${Math.random().toString(36).slice(2, 10)}`) {
  return { type: 'tool_use' as const, id, name, input };
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { type: string; text?: string }) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
  return String(content);
}

/** A tool that records when it ran, sleeps `ms`, and echoes its input. */
export function sleepTool(opts: { name?: string; safe: boolean; log?: Array<{ id: string; start: number; end: number }> }): AnyTool {
  return buildTool({
    name: opts.name ?? (opts.safe ? 'SafeSleep' : 'UnsafeSleep'),
    description: 'Sleeps for ms milliseconds and echoes its tag',
    inputSchema: z.strictObject({ ms: z.number().int().nonnegative(), tag: z.string() }),
    maxResultSizeChars: 100_000,
    mayBeReadOnly: opts.safe,
    isConcurrencySafe: () => opts.safe,
    isReadOnly: () => opts.safe,
    checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
    call: async (input, ctx) => {
      const start = performance.now();
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, input.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
        });
      });
      opts.log?.push({ id: input.tag, start, end: performance.now() });
      return { data: `slept ${input.ms} ms: ${input.tag}` };
    },
  });
}

/** A tool whose checks and call are observable. */
export function probeTool(opts: {
  name?: string;
  aliases?: string[];
  calls?: unknown[];
  validations?: unknown[];
  invalid?: (input: { value: string }) => string | undefined;
  output?: (input: { value: string }) => string;
  readOnly?: boolean;
  permission?: 'allow' | 'passthrough';
}): AnyTool {
  return buildTool({
    name: opts.name ?? 'Probe',
    aliases: opts.aliases ?? [],
    description: 'A probe tool for tests',
    inputSchema: z.strictObject({ value: z.string(), count: z.number().int().optional() }),
    maxResultSizeChars: 100_000,
    mayBeReadOnly: opts.readOnly ?? false,
    isReadOnly: () => opts.readOnly ?? false,
    isConcurrencySafe: () => opts.readOnly ?? false,
    validateInput: async (input) => {
      opts.validations?.push(input);
      const msg = opts.invalid?.(input);
      return msg ? { ok: false, message: msg, code: 7 } : { ok: true };
    },
    checkPermissions: async () =>
      opts.permission === 'allow' ? { behavior: 'allow', type: 'tool', detail: 'probe allows' } : { behavior: 'passthrough' },
    call: async (input) => {
      opts.calls?.push(input);
      return { data: opts.output ? opts.output(input) : `value=${input.value}` };
    },
  });
}

/** Makes the app listen on 127.0.0.1 at a port the system picks (for websocket, streaming and /mcp tests), and returns that port. */
export async function listenLocalApp(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}

/** A pino destination that keeps what the service logs, read back as parsed JSON lines. */
export function logCapture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}
