// Parallel orchestration: N concurrency-safe calls of a fixed duration run
// together (at most maxConcurrency at once) against N times that duration
// (what running them one by one would take), in the same run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { Config } from '../dist/config/schema.js';
import { createServices } from '../dist/services.js';
import { buildTool } from '../dist/tool/build-tool.js';
import { quick, table, writeResult } from './lib.mjs';

const MS = 100;
const wait = buildTool({
  name: 'Wait',
  description: 'Waits a fixed time',
  inputSchema: z.strictObject({ i: z.number().int() }),
  maxResultSizeChars: 1000,
  mayBeReadOnly: true,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: () => new Promise((r) => setTimeout(() => r({ data: 'ok' }), MS)),
});

export async function orchestrationBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  const config = Config.parse({ workspace: { root: path.join(dir, 'ws') }, storage: { path: path.join(dir, 'db.sqlite') }, permissions: { allow: ['Wait'] } });
  const svc = createServices({ config, logger: pino({ level: 'silent' }), extraTools: [wait] });
  const rows = [];
  let n0 = 0;
  // Warm-up: the first calls pay for compiling the pipeline's code paths.
  await Promise.all(svc.executor.start(svc.sessions.get('warm'), Array.from({ length: 20 }, (_, i) => ({ id: `w${i}`, name: 'Wait', input: { i }, format: 'anthropic' })), null, undefined).map((x) => x.done));
  for (const n of quick ? [10, 30] : [10, 30, 100]) {
    const session = svc.sessions.get(`orch-${n}`);
    const uses = Array.from({ length: n }, (_, i) => ({ id: `t${n0++}`, name: 'Wait', input: { i }, format: 'anthropic' }));
    const t0 = performance.now();
    await Promise.all(svc.executor.start(session, uses, null, undefined).map((x) => x.done));
    const wall = performance.now() - t0;
    const serial = n * MS;
    const ideal = Math.ceil(n / config.execution.maxConcurrency) * MS;
    rows.push({ calls: n, call_ms: MS, serial_ms: serial, ideal_ms: ideal, wall_ms: Math.round(wall), speedup: +(serial / wall).toFixed(2), efficiency: +(ideal / wall).toFixed(3) });
  }
  await svc.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`\nParallel orchestration: N concurrency-safe calls of ${MS} ms (maxConcurrency ${10}) vs N × ${MS} ms`);
  table(rows);
  writeResult('orchestration', { rows });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await orchestrationBench();
