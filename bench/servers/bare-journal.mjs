// bare.mjs made durable by an append-only journal, with the rows put into
// SQLite behind it by a worker thread. Per turn of the event loop, the rows of
// every request of the turn (durable-rows.mjs, the same as bare-durable.mjs's)
// go as one JSON line each, `[execution, audit]`, into one fs.writeSync on the
// journal; the requests are answered once it returned. A write() into the page
// cache survives a SIGKILL of this process as a WAL commit with
// synchronous=NORMAL does (both are lost only with the machine). The same text
// is posted to the worker (sqlite-worker.mjs, 'journal' mode), which parses it
// and inserts the rows with multi-row INSERTs, and stores the last committed
// seq in shared memory; nothing comes back to the main thread.
//
// What a full design would add, not measured here:
// - Read your writes: GET /executions and GET /audit must see every row whose
//   POST was answered. A GET takes the last seq journaled at its start and
//   waits (Atomics.waitAsync on the shared seq) until the worker committed it:
//   no cost to the POSTs, and a GET under load waits for the batch in flight,
//   one worker commit (a fraction of a millisecond to a few), idle not at all.
// - Recovery: at start, replay the journal's lines whose seq is above the
//   database's highest (the audit rows need their id in the line, so that a
//   replay is idempotent), before listening.
// - Segments: the journal is cut into segments of SEGMENT_BYTES; a segment
//   whose last seq is committed is deleted (done here, so that a long run does
//   not fill the disk).
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { benchDir, requestRecord, requestRows } from './durable-rows.mjs';
import { turnBatcher } from './turn-batch.mjs';
import { serveBench } from './serve.mjs';

const SEGMENT_BYTES = 16 * 1024 * 1024;
// FLOOR_NO_SQLITE=1: the journal alone, nothing sent to the worker (how much of the cost is the journal's).
const sqlite = process.env.FLOOR_NO_SQLITE !== '1';
// FLOOR_RECORDS=1: a line is the request's record with its JSON columns as objects, serialized
// once here; the worker makes the rows (sqlite-worker.mjs 'records' mode).
const records = process.env.FLOOR_RECORDS === '1';
const tmp = benchDir('toolexec-bench-journal-');
const shared = new SharedArrayBuffer(4);
const committed = new Int32Array(shared);
const worker = new Worker(new URL('./sqlite-worker.mjs', import.meta.url), {
  workerData: { file: path.join(tmp.dir, 'durable.db'), mode: records ? 'records' : 'journal', shared },
});
worker.on('message', (m) => {
  if (m?.error) console.error(`journal worker: ${m.error}`);
});

let segment = 0;
let fd = fs.openSync(path.join(tmp.dir, `journal.${segment}`), 'a');
let bytes = 0;
/** Closed segments not yet all committed: [file, last seq]. */
const closed = [];

const queue = turnBatcher((b, done) => {
  let text = '';
  if (records) for (let i = 0; i < b.executions.length; i++) text += `${JSON.stringify(b.executions[i])}\n`;
  else for (let i = 0; i < b.executions.length; i++) text += `${JSON.stringify([b.executions[i], b.audits[i]])}\n`;
  try {
    bytes += fs.writeSync(fd, text);
  } catch (e) {
    return done(e);
  }
  done();
  if (sqlite) worker.postMessage(text);
  const upto = b.seqs.at(-1);
  if (bytes >= SEGMENT_BYTES) {
    fs.closeSync(fd);
    closed.push([path.join(tmp.dir, `journal.${segment}`), upto]);
    segment += 1;
    fd = fs.openSync(path.join(tmp.dir, `journal.${segment}`), 'a');
    bytes = 0;
  }
  while (closed.length > 0 && (!sqlite || closed[0][1] <= Atomics.load(committed, 0))) fs.unlinkSync(closed.shift()[0]);
});

const app = Fastify({ logger: false });
app.post('/execute', async (req) => {
  if (records) {
    const r = requestRecord(req.body);
    await queue(r.seq, r.record, undefined);
    return r.answer;
  }
  const r = requestRows(req.body);
  await queue(r.seq, r.execution, r.audit);
  return r.answer;
});
await new Promise((resolve) => worker.once('online', resolve));
await serveBench(app, () => {
  fs.closeSync(fd);
  tmp.remove();
});
