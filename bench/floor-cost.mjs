// In-process companion of floor.bench.mjs: the CPU per request of each way of
// making the rows durable, without HTTP, at fixed batch sizes (the requests
// one turn of the event loop gathers). CPU time of this thread (and of the
// worker's part, run here in line): steadier than throughput on a shared
// machine, and it splits what the main thread must do from what a worker
// could take. Run: node bench/floor-cost.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../dist/storage/migrations.js';
import { requestRecord, requestRows, rowsOf } from './servers/durable-rows.mjs';
import { openRows } from './servers/sqlite-rows.mjs';
import { table } from './lib.mjs';

const N = Number(process.env.FLOOR_COST_N ?? 40000);
const body = { session_id: 'bench', tool_uses: [{ type: 'tool_use', id: 'toolu_0123456789abcdefghijkl-0000000001', name: 'Noop', input: {} }] };

function cpu(fn) {
  const t = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / N;
}

/** bare-durable.mjs's way: one INSERT per row, one transaction per batch. */
function singleRow(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.transaction(() => {
    for (const m of MIGRATIONS) db.exec(m.sql);
  })();
  const ex = db.prepare(`INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, input, actor, created_at,
     decision, error_class, is_error, result_id, result_block, hook_messages, timings, finished_at, duration_ms, input_key)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const au = db.prepare(`INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insert = db.transaction((e, a) => {
    for (let i = 0; i < e.length; i++) {
      ex.run(e[i]);
      au.run(a[i]);
    }
  });
  return { db, insert };
}

const rows = [];
for (const batch of [1, 4, 8]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-floor-cost-'));
  let k = 0;
  const file = () => path.join(dir, `d${k++}.db`);
  const turns = N / batch;
  // The rows, built in advance for the parts that only write them.
  const built = Array.from({ length: N }, () => requestRows(body));
  const recs = Array.from({ length: N }, () => requestRecord(body));
  const batches = (xs) => Array.from({ length: turns }, (_, i) => xs.slice(i * batch, (i + 1) * batch));
  const rowBatches = batches(built).map((b) => ({ e: b.map((r) => r.execution), a: b.map((r) => r.audit) }));
  const single = singleRow(file());
  const lean = openRows(file());
  const excl = openRows(file(), { exclusive: true });
  const worker = openRows(file());
  const fd = fs.openSync(path.join(dir, 'journal'), 'a');
  const lines = [];
  const recLines = [];
  const row = {
    batch,
    build_rows: cpu(() => {
      for (let i = 0; i < N; i++) requestRows(body);
    }),
    build_record: cpu(() => {
      for (let i = 0; i < N; i++) requestRecord(body);
    }),
    single_row_tx: cpu(() => {
      for (const b of rowBatches) single.insert(b.e, b.a);
    }),
    multi_row_tx: cpu(() => {
      for (const b of rowBatches) lean.insert(b.e, b.a);
    }),
    multi_row_excl: cpu(() => {
      for (const b of rowBatches) excl.insert(b.e, b.a);
    }),
    journal_append: cpu(() => {
      for (const b of rowBatches) {
        let text = '';
        for (let i = 0; i < b.e.length; i++) text += `${JSON.stringify([b.e[i], b.a[i]])}\n`;
        fs.writeSync(fd, text);
        lines.push(text);
      }
    }),
    journal_rec_append: cpu(() => {
      for (const b of batches(recs)) {
        let text = '';
        for (const r of b) text += `${JSON.stringify(r.record)}\n`;
        fs.writeSync(fd, text);
        recLines.push(text);
      }
    }),
    worker_parse_insert: cpu(() => {
      for (const text of lines) {
        const e = [];
        const a = [];
        for (const l of text.split('\n')) {
          if (l === '') continue;
          const [x, y] = JSON.parse(l);
          e.push(x);
          a.push(y);
        }
        worker.insert(e, a);
      }
    }),
    worker_rec_parse_insert: cpu(() => {
      const w = openRows(file());
      for (const text of recLines) {
        const e = [];
        const a = [];
        for (const l of text.split('\n')) {
          if (l === '') continue;
          const r = rowsOf(JSON.parse(l));
          e.push(r.execution);
          a.push(r.audit);
        }
        w.insert(e, a);
      }
      w.db.close();
    }),
  };
  for (const key of Object.keys(row)) if (key !== 'batch') row[key] = +row[key].toFixed(1);
  rows.push(row);
  fs.closeSync(fd);
  for (const d of [single, lean, excl, worker]) d.db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`CPU µs per request (${N} requests, batch = requests per commit/append); the writes exclude building the rows`);
table(rows);
