// The floor under POST /execute's ratio to bare (http.bench.mjs): how cheap
// can making each request durable be, whatever toolexec does besides? The
// bare route of servers/bare.mjs against variants of it that make each
// request's execution row and audit row durable before answering, all with
// the same rows (servers/durable-rows.mjs) in toolexec's schema:
//
//   rows-only      the rows built and the answer held for a turn, nothing
//                  written (not durable: the part every variant shares)
//   durable        servers/bare-durable.mjs: one INSERT per row, one
//                  transaction per turn of the event loop (the http bench's)
//   lean           servers/bare-durable-lean.mjs: multi-row INSERTs, one
//                  promise per turn, same thread
//   lean-1row      the same with one row per INSERT (what multi-row saves)
//   lean-excl      lean with WAL's exclusive locking mode
//   worker         servers/bare-worker.mjs: rows posted to a worker thread,
//                  answered once it committed them
//   journal        servers/bare-journal.mjs: one append to a journal file per
//                  turn, answered after it; a worker inserts the rows behind
//   journal-rec    journal with a line per request that is its record, JSON
//                  columns still objects (one serialization on the main
//                  thread); the worker makes the rows
//   journal-only   the journal without the worker (rows not in SQLite: not a
//                  design, the cost of the append alone)
//
// 10 connections. The machine is shared and its load drifts, so each variant
// is measured between two runs of bare, and its ratio is to their mean; the
// order of the variants rotates from round to round, and the table gives the
// median of the rounds. CPU is the whole process's (all threads) per request;
// main_cpu_us is the main thread's alone (/proc/PID/task/PID/stat): with a
// worker thread, what the main thread is left, which bounds the throughput
// where the load generator leaves the second core's time to the worker.
// Each triple waits (up to FLOOR_QUIET_S, default 10 s) for a second in which
// the machine is quiet, and is taken again (up to 3 times) if the rest of the
// machine used more than FLOOR_MAX_FOREIGN cores (default 0.25) during it;
// foreign_max in the table is the worst kept sample's, in cores: with much of
// it, the ratios say little (measured: any ratio from 0.2 to 4.8 at 1.5-1.9
// cores of other work) and floor-cost.mjs's in-process CPU figures say more.
// gen_cpu_us is the load generator's (this process's) CPU per request: it
// shares the two cores with the server, and with its worker thread if any.
// FLOOR_ROUNDS (default 3), FLOOR_SECONDS per run (default 3, 1 with
// BENCH_QUICK=1), FLOOR_ONLY=name,name to measure some variants only.
// Not part of `npm run bench`: several minutes, and only meaningful on a
// machine otherwise idle. Run: node bench/floor.bench.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir, cannon, quick, startServer, summarise, table, writeResult } from './lib.mjs';

const rounds = Number(process.env.FLOOR_ROUNDS ?? 3);
const duration = Number(process.env.FLOOR_SECONDS ?? (quick ? 1 : 3));
const connections = 10;
const body = JSON.stringify({ session_id: 'bench', tool_uses: [{ type: 'tool_use', id: 'toolu_[<id>]', name: 'Noop', input: {} }] });
const TICK_US = 1e6 / 100; // USER_HZ: /proc's CPU times are in 1/100 s on Linux

const VARIANTS = [
  ['bare', 'servers/bare.mjs', {}],
  ['rows-only', 'servers/bare-durable-lean.mjs', { FLOOR_NOWRITE: '1' }],
  ['durable', 'servers/bare-durable.mjs', {}],
  ['lean', 'servers/bare-durable-lean.mjs', {}],
  ['lean-1row', 'servers/bare-durable-lean.mjs', { FLOOR_CHUNK: '1' }],
  ['lean-excl', 'servers/bare-durable-lean.mjs', { FLOOR_EXCLUSIVE: '1' }],
  ['worker', 'servers/bare-worker.mjs', {}],
  ['journal', 'servers/bare-journal.mjs', {}],
  ['journal-rec', 'servers/bare-journal.mjs', { FLOOR_RECORDS: '1' }],
  ['journal-only', 'servers/bare-journal.mjs', { FLOOR_NO_SQLITE: '1' }],
];

/** Busy and total jiffies of the whole machine (/proc/stat). */
function machineTicks() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
}

/** How long to wait for a quiet machine (FLOOR_QUIET_S, default 10 s), and how much other work a kept triple may see (FLOOR_MAX_FOREIGN, cores, default 0.25). */
const QUIET_S = Number(process.env.FLOOR_QUIET_S ?? 10);
const MAX_FOREIGN = Number(process.env.FLOOR_MAX_FOREIGN ?? 0.25);

/** Waits (at most QUIET_S) for a second in which the machine used less than MAX_FOREIGN cores: other work on a shared machine skews a run. */
async function quiet() {
  for (let i = 0; i < QUIET_S; i++) {
    const a = machineTicks();
    await new Promise((r) => setTimeout(r, 1000));
    const b = machineTicks();
    if (((b.busy - a.busy) / (b.total - a.total)) * os.cpus().length < MAX_FOREIGN) return;
  }
}

/** The main thread's CPU time in µs (its tid is the pid). */
function mainThreadCpu(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/**
 * One autocannon run. `foreign` is the CPU the rest of the machine used meanwhile (other
 * processes than the server and this driver, autocannon's own), in cores: a run with much
 * of it measured a machine shared with other work.
 */
async function run(server, seconds) {
  const cpu0 = await server.cpu();
  const main0 = mainThreadCpu(server.child.pid);
  const own0 = process.cpuUsage();
  const m0 = machineTicks();
  const t0 = performance.now();
  const r = summarise(
    await cannon({
      url: `http://127.0.0.1:${server.port}/execute`,
      method: 'POST',
      connections,
      duration: seconds,
      idReplacement: true,
      headers: { 'content-type': 'application/json' },
      body,
    }),
  );
  const m1 = machineTicks();
  const wall = (performance.now() - t0) * 1000;
  const own = process.cpuUsage(own0);
  const cpu1 = await server.cpu();
  const main1 = mainThreadCpu(server.child.pid);
  const n = Math.max(1, r.requests);
  const foreign = ((m1.busy - m0.busy) * TICK_US - (cpu1 - cpu0) - own.user - own.system) / wall;
  return {
    rps: r.rps,
    cpu_us: +((cpu1 - cpu0) / n).toFixed(1),
    main_cpu_us: +((main1 - main0) / n).toFixed(1),
    gen_cpu_us: +((own.user + own.system) / n).toFixed(1),
    foreign: +foreign.toFixed(2),
    errors: r.errors,
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function floorBench() {
  const only = process.env.FLOOR_ONLY?.split(',');
  const variants = VARIANTS.filter(([name]) => name === 'bare' || !only || only.includes(name));
  const servers = [];
  try {
    for (const [name, file, env] of variants) servers.push({ name, server: await startServer(path.join(benchDir, file), [], env) });
    for (const s of servers) await run(s.server, 2); // warm up (JIT, SQLite's first pages)
    const bareServer = servers.find((s) => s.name === 'bare');
    const others = servers.filter((s) => s !== bareServer);
    const samples = new Map(servers.map((s) => [s.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = others.map((_, i) => others[(i + round) % others.length]);
      const line = [];
      for (const s of order) {
        // bare, the variant, bare again, taken again (up to 3 times) while other work on the machine used more than MAX_FOREIGN during one of them.
        let got;
        for (let attempt = 0; attempt < 3; attempt++) {
          await quiet();
          const before = await run(bareServer.server, duration);
          const r = await run(s.server, duration);
          const after = await run(bareServer.server, duration);
          got = { before, r, after, foreign: Math.max(before.foreign, r.foreign, after.foreign) };
          if (got.foreign <= MAX_FOREIGN) break;
        }
        const { before, r, after } = got;
        const ratio = r.rps / ((before.rps + after.rps) / 2);
        samples.get('bare').push({ ...before, ratio: 1 }, { ...after, ratio: 1 });
        samples.get(s.name).push({ ...r, ratio, foreign: got.foreign });
        line.push(`${s.name} ${r.rps}/s ${ratio.toFixed(2)}x ${r.cpu_us}µs (foreign ${got.foreign})`);
      }
      console.error(`round ${round + 1}/${rounds}: ${line.join(', ')}`);
    }
    const rows = servers.map(({ name }) => {
      const xs = samples.get(name);
      return {
        server: name,
        rps: Math.round(median(xs.map((x) => x.rps))),
        ratio: +median(xs.map((x) => x.ratio)).toFixed(3),
        ratio_min: +Math.min(...xs.map((x) => x.ratio)).toFixed(3),
        ratio_max: +Math.max(...xs.map((x) => x.ratio)).toFixed(3),
        cpu_us: +median(xs.map((x) => x.cpu_us)).toFixed(1),
        main_cpu_us: +median(xs.map((x) => x.main_cpu_us)).toFixed(1),
        gen_cpu_us: +median(xs.map((x) => x.gen_cpu_us)).toFixed(1),
        foreign_max: Math.max(...xs.map((x) => x.foreign)),
        errors: xs.reduce((a, x) => a + x.errors, 0),
      };
    });
    console.log(`\nDurable variants of the bare route, ${connections} connections, ${rounds} rounds of ${duration} s (${os.cpus().length} CPUs); ratio = rps / mean of the two bare runs around it (median of the rounds, min, max)`);
    table(rows);
    writeResult('floor', { connections, rounds, seconds: duration, rows });
    return rows;
  } finally {
    for (const s of servers) await s.server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await floorBench();
