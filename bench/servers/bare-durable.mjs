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
import { hash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { MIGRATIONS } from '../../dist/storage/migrations.js';
import { serveBench } from './serve.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-durable-'));
const db = new Database(path.join(dir, 'durable.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.transaction(() => {
  for (const m of MIGRATIONS) db.exec(m.sql);
})();

const insertExecution = db.prepare(
  `INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, input, actor, created_at,
     decision, error_class, is_error, result_id, result_block, hook_messages, timings, finished_at, duration_ms, input_key)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insertAudit = db.prepare(
  `INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);

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

/**
 * Seven step timings, as toolexec records them (rounded to the microsecond):
 * seven distinct doubles, since V8 caches the string of a number it has just
 * converted and one value seven times would cost a seventh of the conversions.
 */
const us = (ms) => Math.round(ms * 1000) / 1000;
function timings(started) {
  return {
    lookup: us(performance.now() - started),
    parse: us(performance.now() - started),
    validate: us(performance.now() - started),
    pre_hooks: us(performance.now() - started),
    permission: us(performance.now() - started),
    call: us(performance.now() - started),
    post_hooks: us(performance.now() - started),
  };
}

let seq = 0;
const DECISION = { behavior: 'allow', reason: { type: 'rule', detail: 'Noop' } };
const app = Fastify({ logger: false });
app.post('/execute', async (req) => {
  const started = performance.now();
  const createdAt = Date.now();
  const use = req.body.tool_uses[0];
  const input = JSON.stringify(use.input);
  const digest = hash('sha256', input);
  seq += 1;
  const id = `ex_${seq.toString(36).padStart(11, '0')}${hash('sha256', `${createdAt}${seq}`).slice(0, 8)}`;
  const block = { type: 'tool_result', tool_use_id: use.id, content: 'ok' };
  const duration = performance.now() - started;
  const finishedAt = Date.now();
  await write(
    [
      seq,
      id,
      req.body.session_id,
      use.id,
      use.name,
      'succeeded',
      digest,
      input,
      'bench',
      createdAt,
      JSON.stringify({ ...DECISION, chain: [{ layer: 'tool', outcome: 'passthrough', detail: 'tool: passthrough' }, { layer: 'rules', outcome: 'allow', detail: 'Noop' }] }),
      null,
      0,
      null,
      JSON.stringify(block),
      null,
      JSON.stringify(timings(started)),
      finishedAt,
      duration,
      null,
    ],
    [finishedAt, req.body.session_id, use.id, id, use.name, 'allow', 'rule', 'Noop', 'bench', digest],
  );
  return {
    session_id: req.body.session_id,
    tool_results: [block],
    messages: [],
    executions: [
      {
        id,
        session_id: req.body.session_id,
        tool_use_id: use.id,
        tool: use.name,
        status: 'succeeded',
        decision: DECISION,
        duration_ms: +duration.toFixed(3),
        error_class: null,
        result_id: null,
      },
    ],
  };
});
await serveBench(app, () => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
