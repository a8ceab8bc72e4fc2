// Bash calls (`echo hi`) through POST /execute with commands started by the
// spawn helper against the same service forking each command itself
// (execution.spawner "direct"), in the same run. Beside the Bash load, no-op
// calls measure what the other requests pay while commands start: a direct
// fork holds the service's event loop while it copies the page tables.
import path from 'node:path';
import { benchDir, cannon, quick, startServer, summarise, table, writeResult } from './lib.mjs';

const TOKEN = 'bench-token-0123456789abcdef';
const duration = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10));
const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
const bashBody = JSON.stringify({ session_id: 'bench-bash', tool_uses: [{ type: 'tool_use', id: 'toolu_[<id>]', name: 'Bash', input: { command: 'echo hi' } }] });
const noopBody = JSON.stringify({ session_id: 'bench-noop', tool_uses: [{ type: 'tool_use', id: 'toolu_[<id>]', name: 'Noop', input: {} }] });

async function run(spawner) {
  const server = await startServer(path.join(benchDir, 'servers/toolexec.mjs'), [], { BENCH_SPAWNER: spawner, BENCH_ALLOW_BASH: '1' });
  try {
    const url = `http://127.0.0.1:${server.port}/execute`;
    const bashLoad = (d) => cannon({ url, method: 'POST', connections: 4, duration: d, idReplacement: true, headers, body: bashBody });
    await bashLoad(1); // warm-up
    // Bash calls alone: their rate and the service's CPU per call.
    const cpu0 = await server.cpu();
    const b = summarise(await bashLoad(duration));
    const cpu1 = await server.cpu();
    // Then beside no-op calls: what the other requests get meanwhile.
    const [besideBash, noop] = await Promise.all([bashLoad(duration), cannon({ url, method: 'POST', connections: 4, duration, idReplacement: true, headers, body: noopBody })]);
    const n = summarise(noop);
    return {
      spawner,
      bash_calls_per_s: b.rps,
      service_cpu_ms_per_bash_call: +((cpu1 - cpu0) / 1000 / Math.max(1, b.requests)).toFixed(2),
      bash_p99_ms: b.p99_ms,
      bash_calls_per_s_beside: summarise(besideBash).rps,
      noop_rps_beside: n.rps,
      noop_p99_ms_beside: n.p99_ms,
      errors: b.errors + n.errors,
    };
  } finally {
    await server.stop();
  }
}

export async function spawnBench() {
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 2));
  const rows = [];
  // Alternating, so that a noisy stretch of the machine does not favour one.
  for (let i = 0; i < rounds; i++) for (const s of ['direct', 'helper']) rows.push(await run(s));
  const mean = (s, k) => rows.filter((r) => r.spawner === s).reduce((a, r) => a + r[k], 0) / rounds;
  const summary = {
    cpu_ratio: +(mean('direct', 'service_cpu_ms_per_bash_call') / mean('helper', 'service_cpu_ms_per_bash_call')).toFixed(2),
    bash_rate_ratio: +(mean('helper', 'bash_calls_per_s') / mean('direct', 'bash_calls_per_s')).toFixed(2),
    noop_rate_ratio: +(mean('helper', 'noop_rps_beside') / mean('direct', 'noop_rps_beside')).toFixed(2),
  };
  console.log('\nBash `echo hi` (4 conn.) beside no-op calls (4 conn.): spawn helper vs direct fork');
  table(rows);
  console.log(`service CPU per Bash call, direct / helper: ${summary.cpu_ratio}×; Bash calls/s, helper / direct: ${summary.bash_rate_ratio}×; no-op calls/s beside them, helper / direct: ${summary.noop_rate_ratio}×`);
  writeResult('spawn', { rows, ...summary });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await spawnBench();
