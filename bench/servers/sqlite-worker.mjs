// The worker thread of bare-worker.mjs and bare-journal.mjs: it owns the
// database connection and inserts the rows it is sent, in one transaction per
// turn of its own event loop (the messages that arrived meanwhile together).
// After each commit it stores the highest committed seq in the shared
// Int32Array (`committed[0]`), which is what a read barrier waits on, and, in
// 'rows' mode only, tells the main thread (which answers then).
//
// Modes (workerData.mode):
// - 'rows': a message is { executions, audits, upto }: the parameter arrays
//   themselves (structured clone), upto the batch's last seq.
// - 'journal': a message is the text just appended to the journal, one JSON
//   line `[execution, audit]` per request; the rows are parsed here, off the
//   main thread.
// - 'records': as 'journal', but a line is a request's record
//   (durable-rows.mjs requestRecord, its JSON columns still objects) and the
//   rows are made here (rowsOf), so the main thread serializes once.
import { parentPort, workerData } from 'node:worker_threads';
import { rowsOf } from './durable-rows.mjs';
import { openRows } from './sqlite-rows.mjs';

const { db, insert } = openRows(workerData.file);
const committed = new Int32Array(workerData.shared);
const journal = workerData.mode === 'journal' || workerData.mode === 'records';
const records = workerData.mode === 'records';
let executions = [];
let audits = [];
let upto = 0;
let scheduled = false;

function commit() {
  scheduled = false;
  const ex = executions;
  const au = audits;
  executions = [];
  audits = [];
  try {
    insert(ex, au);
  } catch (e) {
    // A bench server: a failed commit is a broken run, not a case to handle.
    parentPort.postMessage({ error: String(e?.message ?? e) });
    return;
  }
  Atomics.store(committed, 0, upto);
  Atomics.notify(committed, 0);
  if (!journal) parentPort.postMessage(upto);
}

parentPort.on('message', (m) => {
  if (m === 'stop') {
    if (executions.length > 0) commit();
    db.close();
    parentPort.postMessage('stopped');
    return;
  }
  if (journal) {
    let at = 0;
    for (;;) {
      const nl = m.indexOf('\n', at);
      if (nl < 0) break;
      const line = JSON.parse(m.slice(at, nl));
      const { execution, audit } = records ? rowsOf(line) : { execution: line[0], audit: line[1] };
      executions.push(execution);
      audits.push(audit);
      at = nl + 1;
    }
    upto = executions.at(-1)[0];
  } else {
    for (const e of m.executions) executions.push(e);
    for (const a of m.audits) audits.push(a);
    upto = m.upto;
  }
  if (!scheduled) {
    scheduled = true;
    setImmediate(commit);
  }
});
