// npm run soak: a bounded soak (SOAK_SECONDS, default 120) of a real service
// process under a steady mix of calls — Read, Glob, Grep, Bash (with a
// background child it leaves behind), a large result, a PreToolUse hook, a
// denial — sampling its memory, open file descriptors and child processes.
// Fails when they keep growing after the warm-up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCli, table, writeResult } from './lib.mjs';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 120);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);

// Every process the service starts inherits this variable (child environments
// keep everything but the service's own TOOLEXEC_* variables and secrets), so
// processes it leaked are found even once reparented to init, which a
// parent-pid scan (pgrep -P) would miss.
const MARK = `SOAK_MARK=${process.pid}-${Date.now()}`;

/** Live processes (other than the service) whose environment carries MARK. */
function marked(servicePid) {
  let n = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === servicePid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(MARK)) n++;
    } catch {
      // gone, or not ours to read
    }
  }
  return n;
}

/** Size of a file in MB, 0 when it does not exist. */
function mb(file) {
  try {
    return +(fs.statSync(file).size / 1048576).toFixed(1);
  } catch {
    return 0;
  }
}

function sample(pid, db) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  // The WAL must start over now and then (storage/checkpointer.ts), not grow with the calls.
  return { rss_mb: +rss.toFixed(1), fds, children: marked(pid), db_mb: mb(db), wal_mb: mb(`${db}-wal`) };
}

export async function soak() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-soak-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(ws, 'src', `f${i}.txt`), `line ${i}\nneedle ${i}\n`.repeat(20));
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(
    cfg,
    JSON.stringify({
      workspace: { root: './ws' },
      storage: { path: './db.sqlite' },
      logging: { level: 'warn' },
      permissions: { allow: ['Read', 'Glob', 'Grep', 'Bash(echo:*)', 'Bash(sleep:*)', 'Bash(head:*)'], deny: ['Bash(rm:*)'] },
      hooks: { PreToolUse: [{ matcher: 'Grep', hooks: [{ type: 'command', command: 'cat > /dev/null' }] }] },
    }),
  );
  const db = path.join(dir, 'db.sqlite');
  const [markName, markValue] = MARK.split('=');
  const { child, base } = await startCli(cfg, { ...process.env, [markName]: markValue });
  const mix = [
    { name: 'Read', input: { file_path: 'src/f1.txt' } },
    { name: 'Glob', input: { pattern: 'src/*.txt' } },
    { name: 'Grep', input: { pattern: 'needle 4', output_mode: 'content' } },
    { name: 'Bash', input: { command: 'echo hi && (sleep 30 &) ' } },
    { name: 'Bash', input: { command: 'head -c 300000 /dev/zero | tr "\\0" "x"' } },
    { name: 'Bash', input: { command: 'rm -rf src' } },
  ];
  let n = 0;
  let errors = 0;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const m = mix[n % mix.length];
      const id = `s${n++}`;
      try {
        const r = await fetch(`${base}/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ session_id: `soak-${n % 20}`, tool_uses: [{ type: 'tool_use', id, name: m.name, input: m.input }] }),
        });
        if (r.status !== 200) errors++;
        await r.arrayBuffer();
      } catch {
        errors++;
      }
    }
  };
  const workers = Array.from({ length: CONCURRENCY }, worker);
  const samples = [];
  const t0 = Date.now();
  while (Date.now() - t0 < SECONDS * 1000) {
    await new Promise((r) => setTimeout(r, Math.min(5000, (SECONDS * 1000) / 12)));
    samples.push({ t_s: Math.round((Date.now() - t0) / 1000), calls: n, ...sample(child.pid, db) });
  }
  stop = true;
  await Promise.all(workers);
  await new Promise((r) => setTimeout(r, 1500));
  const settled = sample(child.pid, db);
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });

  // Compare the second quarter (after warm-up) with the end.
  const warm = samples[Math.floor(samples.length / 4)] ?? samples[0];
  const last = samples[samples.length - 1];
  const growth = {
    rss_mb: +(last.rss_mb - warm.rss_mb).toFixed(1),
    fds: settled.fds - warm.fds,
    children_after_idle: settled.children,
    wal_max_mb: Math.max(...samples.map((x) => x.wal_mb)),
  };
  console.log(`\nSoak: ${SECONDS} s, ${CONCURRENCY} clients, ${n} calls, ${errors} non-200 answers`);
  table(samples);
  console.log(
    `growth after warm-up: RSS ${growth.rss_mb} MB, file descriptors ${growth.fds}; children once idle: ${growth.children_after_idle}; largest WAL ${growth.wal_max_mb} MB`,
  );
  writeResult('soak', { seconds: SECONDS, calls: n, errors, samples, growth });
  // journal_size_limit truncates the WAL to 64 MB when it starts over, and it grows past that between
  // checkpoints (with this mix, ~10 MB of large results a second): far more means it stopped starting over.
  const ok = growth.rss_mb < 64 && growth.fds <= 5 && growth.children_after_idle === 0 && growth.wal_max_mb <= 200 && errors === 0;
  if (!ok) {
    console.error('soak: resources grew, or calls failed');
    process.exitCode = 1;
  }
  return { ok, growth };
}

if (import.meta.url === `file://${process.argv[1]}`) await soak();
