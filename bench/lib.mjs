// Shared helpers for the benchmarks: child servers, autocannon runs, reports.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const benchDir = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(benchDir, '..');
export const quick = process.env.BENCH_QUICK === '1';

/** Starts `node file args` and resolves once it prints `LISTENING <port>`. */
export async function startServer(file, args = [], env = {}) {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (b) => {
      buf += b.toString();
      const m = /LISTENING (\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
  let buf = '';
  child.stdout.on('data', (b) => (buf += b.toString()));
  return {
    port,
    child,
    /** Microseconds of CPU the server has used (user + system). */
    async cpu() {
      return (await this.cpuSplit()).total;
    },
    /** Microseconds of CPU the server has used: in all, in user mode, in the kernel (system calls). */
    async cpuSplit() {
      const before = buf.length;
      child.kill('SIGUSR2');
      for (let i = 0; i < 200; i++) {
        const m = /CPU (\d+)(?: (\d+) (\d+))?/.exec(buf.slice(before));
        if (m) return { total: Number(m[1]), user: Number(m[2] ?? m[1]), system: Number(m[3] ?? 0) };
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error('the server did not report its CPU time');
    },
    async stop() {
      child.kill('SIGTERM');
      // A child already gone (exitCode, or signalCode when a signal ended it) sends no more 'exit'.
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', r)));
    },
  };
}

/** Starts `toolexec serve --config cfg` from dist/ on a free port; resolves with the child and its base URL once it listens. */
export async function startCli(cfg, env = process.env) {
  const child = spawn(process.execPath, [path.join(root, 'dist/cli.js'), 'serve', '--config', cfg, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env });
  const port = await new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (b) => {
      err += b;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (c) => reject(new Error(`exited ${c}: ${err}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

export function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ ...opts }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

export function summarise(r) {
  return {
    requests: r.requests.total,
    rps: Math.round(r.requests.average),
    // autocannon records whole milliseconds, so its percentiles and mean say
    // little below 1 ms; with a closed loop of N connections the mean latency
    // is N / throughput (Little's law), which is exact whatever the rounding.
    mean_ms: +((1000 * r.connections) / r.requests.average).toFixed(3),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    errors: r.errors + r.timeouts + (r.non2xx ?? 0),
  };
}

export function writeResult(name, data) {
  fs.mkdirSync(path.join(benchDir, 'results'), { recursive: true });
  const file = path.join(benchDir, 'results', `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ name, at: new Date().toISOString(), node: process.version, quick, ...data }, null, 2) + '\n');
  return file;
}

export function table(rows) {
  const cols = Object.keys(rows[0] ?? {});
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (vals) => vals.map((v, i) => String(v).padEnd(widths[i])).join('  ');
  console.log(line(cols));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(cols.map((c) => r[c])));
}
