// The second baseline: the bare Fastify route of bare.mjs that also makes
// each request durable the way toolexec must (contract: an execution's audit
// row is committed before the answer). Per request it writes an execution row
// and an audit row like the ones toolexec writes for the no-op tool (same
// tables, columns and indexes: toolexec's own migrations from dist/), in a
// WAL database with synchronous=NORMAL as toolexec opens it, commits the rows
// of every request that arrived in one turn of the event loop together
// (setImmediate, one transaction), and answers once that commit returned.
// What it leaves out is toolexec's own work: auth, the pipeline, permission
// rules, metrics, idempotency. Its CPU per request minus bare.mjs's is the
// cost of durability; toolexec's minus this one's is toolexec's own.
//
// Checkpoints are SQLite's automatic ones (wal_autocheckpoint 1000 pages,
// on this thread), as a plain application would have them; toolexec runs
// them on a worker thread (src/storage/checkpointer.ts). Both count in the
// process's CPU time, which is what the bench compares.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { MIGRATIONS } from '../../dist/storage/migrations.js';
import { AUDIT_COLUMNS, EXECUTION_COLUMNS, requestRows } from './durable-rows.mjs';
import { serveBench } from './serve.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-durable-'));
const db = new Database(path.join(dir, 'durable.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.transaction(() => {
  for (const m of MIGRATIONS) db.exec(m.sql);
})();

const insertExecution = db.prepare(`INSERT INTO executions (${EXECUTION_COLUMNS}) VALUES (${Array(20).fill('?').join(', ')})`);
const insertAudit = db.prepare(`INSERT INTO audit (${AUDIT_COLUMNS}) VALUES (${Array(10).fill('?').join(', ')})`);

let queue = [];
const commit = db.transaction((rows) => {
  for (const r of rows) {
    insertExecution.run(r.execution);
    insertAudit.run(r.audit);
  }
});
function flush() {
  const rows = queue;
  queue = [];
  try {
    commit(rows);
    for (const r of rows) r.resolve();
  } catch (e) {
    for (const r of rows) r.reject(e);
  }
}
/** Resolves once the rows are committed with those of every request of this turn of the event loop. */
function write(execution, audit) {
  return new Promise((resolve, reject) => {
    if (queue.length === 0) setImmediate(flush);
    queue.push({ execution, audit, resolve, reject });
  });
}

// The rows and the answer are built in durable-rows.mjs, which the floor bench's variants share.
const app = Fastify({ logger: false });
app.post('/execute', async (req) => {
  const { execution, audit, answer } = requestRows(req.body);
  await write(execution, audit);
  return answer;
});
await serveBench(app, () => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
