// POST /execute with a no-op tool (auth, audit and metrics on) against a bare
// Fastify route returning the same JSON, in the same run, at 1, 10 and 100
// connections. Ratios matter, not absolute figures: the machine is shared.
// A second baseline, servers/bare-durable.mjs, is the bare route that also
// commits an execution row and an audit row per request before answering, as
// toolexec must: toolexec against it is toolexec's own overhead, it against
// bare the cost of durability. The target (ratio) stays the one against bare.
import path from 'node:path';
import { benchDir, cannon, quick, startServer, summarise, table, writeResult } from './lib.mjs';

const TOKEN = 'bench-token-0123456789abcdef';
const duration = quick ? 3 : 10;
const body = JSON.stringify({ session_id: 'bench', tool_uses: [{ type: 'tool_use', id: 'toolu_[<id>]', name: 'Noop', input: {} }] });

async function run(server, connections, auth) {
  const cpu0 = await server.cpuSplit();
  const r = summarise(
    await cannon({
      url: `http://127.0.0.1:${server.port}/execute`,
      method: 'POST',
      connections,
      duration,
      idReplacement: true,
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}) },
      body,
    }),
  );
  const cpu1 = await server.cpuSplit();
  const per = (k) => +((cpu1[k] - cpu0[k]) / Math.max(1, r.requests)).toFixed(1);
  r.cpu_us_per_request = per('total');
  // The kernel's share (socket reads and writes, epoll) apart: it is mostly the same for both servers.
  r.sys_us_per_request = per('system');
  return r;
}

export async function httpBench() {
  const bare = await startServer(path.join(benchDir, 'servers/bare.mjs'));
  const durable = await startServer(path.join(benchDir, 'servers/bare-durable.mjs'));
  const tx = await startServer(path.join(benchDir, 'servers/toolexec.mjs'));
  const rows = [];
  try {
    for (const c of quick ? [10] : [1, 10, 100]) {
      // Warm all three, then measure them back to back.
      await run(bare, c, false);
      await run(durable, c, false);
      await run(tx, c, true);
      const b = await run(bare, c, false);
      const d = await run(durable, c, false);
      const t = await run(tx, c, true);
      rows.push({
        connections: c,
        bare_rps: b.rps,
        toolexec_rps: t.rps,
        ratio: +(t.rps / b.rps).toFixed(3),
        durable_rps: d.rps,
        ratio_vs_durable: +(t.rps / d.rps).toFixed(3),
        bare_cpu_us: b.cpu_us_per_request,
        durable_cpu_us: d.cpu_us_per_request,
        toolexec_cpu_us: t.cpu_us_per_request,
        cpu_ratio: +(b.cpu_us_per_request / t.cpu_us_per_request).toFixed(3),
        cpu_ratio_vs_durable: +(d.cpu_us_per_request / t.cpu_us_per_request).toFixed(3),
        bare_sys_us: b.sys_us_per_request,
        durable_sys_us: d.sys_us_per_request,
        toolexec_sys_us: t.sys_us_per_request,
        bare_mean_ms: b.mean_ms,
        bare_p50_ms: b.p50_ms,
        bare_p99_ms: b.p99_ms,
        toolexec_mean_ms: t.mean_ms,
        toolexec_p50_ms: t.p50_ms,
        toolexec_p99_ms: t.p99_ms,
        durable_mean_ms: d.mean_ms,
        durable_p50_ms: d.p50_ms,
        durable_p99_ms: d.p99_ms,
        errors: b.errors + d.errors + t.errors,
      });
    }
  } finally {
    await bare.stop();
    await durable.stop();
    await tx.stop();
  }
  console.log('\nPOST /execute (no-op tool, auth + audit + metrics) vs bare Fastify route, and vs the bare route with the same two durable rows');
  table(rows);
  writeResult('http-execute', { target: 'ratio >= 0.6', rows });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await httpBench();
