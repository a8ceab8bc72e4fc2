// The in-process pipeline per call against calling the tool directly, with 0
// and 3 PreToolUse command hooks. Figures are µs per call; "concurrent" issues
// calls 100 at a time, so the group commit is amortised as under load. Each
// call gets its own CallAbort, as the executor gives it (a shared AbortSignal
// would add an 'abort' listener per call that the service never pays).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { Config } from '../dist/config/schema.js';
import { CallAbort } from '../dist/pipeline/cancel.js';
import { runToolUse } from '../dist/pipeline/run-tool-use.js';
import { createServices } from '../dist/services.js';
import { buildTool } from '../dist/tool/build-tool.js';
import { quick, table, writeResult } from './lib.mjs';

const noop = buildTool({
  name: 'Noop',
  description: 'Does nothing',
  inputSchema: z.strictObject({ n: z.number().int() }),
  maxResultSizeChars: 1000,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  call: async () => ({ data: 'ok' }),
});

function services(hooks) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  const config = Config.parse({
    workspace: { root: path.join(dir, 'ws') },
    storage: { path: path.join(dir, 'db.sqlite') },
    permissions: { allow: ['Noop', 'Bash(git status:*)', 'Bash(npm test:*)', 'Read(./src/**)', 'WebFetch(domain:example.com)'], deny: ['Bash(rm:*)', 'Read(./.env)', 'Edit(./secrets/**)'], ask: ['Bash(git push:*)'] },
    hooks: hooks > 0 ? { PreToolUse: [{ matcher: 'Noop', hooks: Array.from({ length: hooks }, (_, i) => ({ type: 'command', command: `exit 0 # ${i}` })) }] } : {},
  });
  const svc = createServices({ config, logger: pino({ level: 'silent' }), extraTools: [noop] });
  return { svc, dir };
}

async function timeIt(n, fn) {
  const t0 = process.hrtime.bigint();
  await fn(n);
  return Number(process.hrtime.bigint() - t0) / 1e3 / n;
}

export async function pipelineBench() {
  const N = quick ? 20_000 : 100_000;
  const rows = [];
  for (const hooks of [0, 3]) {
    const n = hooks === 0 ? N : quick ? 100 : 400;
    const { svc, dir } = services(hooks);
    const session = svc.sessions.get('bench');
    const use = (i) => ({ id: `t${hooks}_${i}_${Math.random()}`, name: 'Noop', input: { n: i }, format: 'anthropic' });
    const ctx = { signal: new AbortController().signal };
    const direct = async (k) => {
      for (let i = 0; i < k; i++) {
        const r = await noop.call({ n: i }, ctx);
        noop.mapToolResultToToolResultBlockParam(r.data, 'x');
      }
    };
    const sequential = async (k) => {
      for (let i = 0; i < k; i++) {
        await runToolUse(use(i), session, svc.deps, { executionId: svc.executions.newId(), abort: new CallAbort(), actor: null });
      }
    };
    const concurrent = async (k) => {
      for (let i = 0; i < k; i += 100) {
        const batch = [];
        for (let j = i; j < Math.min(k, i + 100); j++) batch.push(runToolUse(use(j), session, svc.deps, { executionId: svc.executions.newId(), abort: new CallAbort(), actor: null }));
        await Promise.all(batch);
      }
    };
    await direct(1000);
    await concurrent(Math.min(n, 2000));
    const d = await timeIt(n, direct);
    const s = await timeIt(Math.min(n, hooks === 0 ? 20_000 : n), sequential);
    const c = await timeIt(n, concurrent);
    rows.push({
      hooks,
      calls: n,
      direct_us: +d.toFixed(2),
      pipeline_sequential_us: +s.toFixed(2),
      pipeline_concurrent_us: +c.toFixed(2),
      overhead_concurrent_us: +(c - d).toFixed(2),
      overhead_sequential_us: +(s - d).toFixed(2),
    });
    svc.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log('\nIn-process pipeline per call (µs) vs a direct call; auditing on, 8 rules');
  table(rows);
  writeResult('pipeline', { target: 'overhead_concurrent_us <= 10 with 0 hooks', rows });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await pipelineBench();
