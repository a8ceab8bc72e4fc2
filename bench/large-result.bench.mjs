// A 100 MB result: the service's peak RSS growth while a Bash command prints
// it (streamed into SQLite chunks), the time to store it, and the time to
// serve it whole over GET /results/:id — beside baselines measured in the same
// run: the same command writing to /dev/null, and reading the same bytes
// from a file.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { quick, startCli, table, writeResult } from './lib.mjs';

const MB = quick ? 25 : 100;
const command = `head -c ${MB * 1024 * 1024} /dev/zero | tr '\\0' 'a' | fold -w 99`;

function rssKb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

export async function largeResultBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(cfg, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './db.sqlite' }, logging: { level: 'warn' }, permissions: { allow: ['Bash'] } }));
  const { child, base } = await startCli(cfg);
  // Warm up the path once with a small output.
  await fetch(`${base}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'warm', name: 'Bash', input: { command: 'echo warm' } }] }) });
  global.gc?.();
  const before = rssKb(child.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb(child.pid))), 10);
  const t0 = performance.now();
  const res = await fetch(`${base}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'big', name: 'Bash', input: { command } }] }),
  });
  const body = await res.json();
  const storeMs = performance.now() - t0;
  const resultId = body.executions[0].result_id;
  const t1 = performance.now();
  const r = await fetch(`${base}/results/${resultId}`);
  let bytes = 0;
  for await (const chunk of r.body) bytes += chunk.length;
  const serveMs = performance.now() - t1;
  clearInterval(sampler);
  peak = Math.max(peak, rssKb(child.pid));
  child.kill('SIGTERM');
  await new Promise((r2) => child.on('exit', r2));

  // Baselines in the same run.
  const b0 = performance.now();
  execFileSync('bash', ['-c', `${command} > /dev/null`]);
  const produceMs = performance.now() - b0;
  const file = path.join(dir, 'copy.txt');
  execFileSync('bash', ['-c', `${command} > ${file}`]);
  const b1 = performance.now();
  let fileBytes = 0;
  for await (const chunk of fs.createReadStream(file)) fileBytes += chunk.length;
  const readMs = performance.now() - b1;
  fs.rmSync(dir, { recursive: true, force: true });

  const row = {
    size_mb: MB,
    served_bytes: bytes,
    rss_growth_mb: +((peak - before) / 1024).toFixed(1),
    store_ms: Math.round(storeMs),
    produce_baseline_ms: Math.round(produceMs),
    store_vs_baseline: +(storeMs / produceMs).toFixed(2),
    serve_ms: Math.round(serveMs),
    read_file_baseline_ms: Math.round(readMs),
    serve_vs_baseline: +(serveMs / readMs).toFixed(2),
  };
  if (bytes !== fileBytes) throw new Error(`served ${bytes} bytes, expected ${fileBytes}`);
  console.log(`\nA ${MB} MB Bash result: peak RSS growth, time to store and to serve (target: ≤ 64 MB growth)`);
  table([row]);
  writeResult('large-result', { target: 'rss_growth_mb <= 64', rows: [row] });
  return row;
}

if (import.meta.url === `file://${process.argv[1]}`) await largeResultBench();
