// What observability costs a call, and what a scrape costs.
// 1. record(): the per-call aggregate update, ns per call (no allocation once a tool is known).
// 2. The in-process pipeline with the statistics subscriber attached and detached, interleaved
//    rounds on one machine, median µs per call (the difference is the subscriber's cost).
// 3. GET /stats and /metrics bodies for 10 and 1,000 tools, ms per scrape.
// 4. lazyChild() against a pino child per call.
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { Config } from '../dist/config/schema.js';
import { CallStats } from '../dist/observability/call-stats.js';
import { lazyChild } from '../dist/observability/logging.js';
import { ServiceMetrics } from '../dist/observability/metrics.js';
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

function call(tool, i) {
  return {
    status: i % 10 === 0 ? 'failed' : 'succeeded',
    tool: { name: tool },
    errorClass: i % 10 === 0 ? 'io' : null,
    durationMs: 0.05 + (i % 1000) * 0.37,
    decision: { behavior: 'allow', reason: { type: 'rule', detail: '' } },
  };
}

function nsPer(n, fn) {
  const t0 = process.hrtime.bigint();
  fn(n);
  return Number(process.hrtime.bigint() - t0) / n;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function makeServices() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-obs-bench-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  const config = Config.parse({ workspace: { root: path.join(dir, 'ws') }, storage: { path: path.join(dir, 'db.sqlite') }, permissions: { allow: ['Noop'] } });
  const svc = createServices({ config, logger: pino({ level: 'silent' }), extraTools: [noop] });
  return { svc, dir };
}

async function perCall(svc, n, concurrent) {
  const session = svc.sessions.get('bench');
  const signal = new AbortController().signal;
  // One signal for every call in flight (a request's is shared by its batch only): each running call listens to it, so Node's
  // leak warning (more than 10 listeners) would be printed in the middle of the bench's table.
  setMaxListeners(0, signal);
  const run = (i) => runToolUse({ id: `t_${i}_${Math.random()}`, name: 'Noop', input: { n: i }, format: 'anthropic' }, session, svc.deps, { executionId: svc.executions.newId(), signal, actor: null });
  const t0 = process.hrtime.bigint();
  if (concurrent) {
    for (let i = 0; i < n; i += 100) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 100); j++) batch.push(run(j));
      await Promise.all(batch);
    }
  } else {
    for (let i = 0; i < n; i++) await run(i);
  }
  return Number(process.hrtime.bigint() - t0) / 1e3 / n;
}

export async function observabilityBench() {
  const rows = [];

  // 1. record()
  const stats = new CallStats();
  const calls = Array.from({ length: 1000 }, (_, i) => call(`Tool${i % 10}`, i));
  nsPer(200_000, (n) => { for (let i = 0; i < n; i++) stats.record(calls[i % 1000]); });
  rows.push({ what: 'CallStats.record (10 tools)', value: +nsPer(quick ? 1e6 : 5e6, (n) => { for (let i = 0; i < n; i++) stats.record(calls[i % 1000]); }).toFixed(1), unit: 'ns/call' });

  // 2. pipeline with and without the subscriber
  const withObs = makeServices();
  const without = makeServices();
  without.svc.observability.close();
  const n = quick ? 5000 : 20_000;
  const seqN = quick ? 500 : 2000;
  await perCall(withObs.svc, 2000, true);
  await perCall(without.svc, 2000, true);
  const res = { on: { c: [], s: [] }, off: { c: [], s: [] } };
  for (let round = 0; round < (quick ? 5 : 9); round++) {
    for (const [key, svc] of round % 2 === 0 ? [['on', withObs.svc], ['off', without.svc]] : [['off', without.svc], ['on', withObs.svc]]) {
      res[key].c.push(await perCall(svc, n, true));
      res[key].s.push(await perCall(svc, seqN, false));
    }
  }
  rows.push({ what: 'pipeline concurrent, subscriber off', value: +median(res.off.c).toFixed(2), unit: 'µs/call' });
  rows.push({ what: 'pipeline concurrent, subscriber on', value: +median(res.on.c).toFixed(2), unit: 'µs/call' });
  rows.push({ what: 'pipeline sequential, subscriber off', value: +median(res.off.s).toFixed(2), unit: 'µs/call' });
  rows.push({ what: 'pipeline sequential, subscriber on', value: +median(res.on.s).toFixed(2), unit: 'µs/call' });
  for (const { svc, dir } of [withObs, without]) {
    await svc.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  // 3. scrapes
  for (const tools of [10, 1000]) {
    const s = new CallStats();
    for (let i = 0; i < tools * 100; i++) s.record(call(`mcp__srv__tool_${i % tools}`, i));
    const m = new ServiceMetrics({ stats: s, pendingPermissionRequests: () => 0, executionsInFlight: () => 0, websocketConnections: () => 0 });
    await m.text();
    const k = tools === 10 ? 200 : 10;
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < k; i++) await m.text();
    rows.push({ what: `/metrics body, ${tools} tools`, value: +(Number(process.hrtime.bigint() - t0) / 1e6 / k).toFixed(3), unit: 'ms/scrape' });
    t0 = process.hrtime.bigint();
    for (let i = 0; i < k; i++) JSON.stringify({ tools: s.view(), decisions: s.decisionView() });
    rows.push({ what: `/stats body, ${tools} tools`, value: +(Number(process.hrtime.bigint() - t0) / 1e6 / k).toFixed(3), unit: 'ms/request' });
  }

  // 4. a call's logger
  const base = pino({ level: 'info' }, { write() {} });
  let sink;
  nsPer(100_000, (k) => { for (let i = 0; i < k; i++) sink = lazyChild(base, { execution_id: `ex_${i}`, tool: 'Read' }); });
  rows.push({ what: 'lazyChild (never used)', value: +nsPer(1e6, (k) => { for (let i = 0; i < k; i++) sink = lazyChild(base, { execution_id: `ex_${i}`, tool: 'Read' }); }).toFixed(1), unit: 'ns/call' });
  rows.push({ what: 'pino child per call', value: +nsPer(2e5, (k) => { for (let i = 0; i < k; i++) sink = base.child({ execution_id: `ex_${i}`, tool: 'Read' }); }).toFixed(1), unit: 'ns/call' });
  void sink;

  console.log('\nObservability costs');
  table(rows);
  writeResult('observability', { rows });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await observabilityBench();
