// bare.mjs made durable by a worker thread alone (no journal): per turn of the
// event loop the requests' rows (durable-rows.mjs, the same as
// bare-durable.mjs's) are posted to a worker (sqlite-worker.mjs, 'rows' mode)
// that inserts them with multi-row INSERTs and commits; the requests are
// answered when it says the batch is committed. The main thread is left the
// structured clone of the rows and the reply; the SQLite work moves to the
// worker, which on 2 cores competes with the load generator for the second.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { benchDir, requestRows } from './durable-rows.mjs';
import { turnBatcher } from './turn-batch.mjs';
import { serveBench } from './serve.mjs';

const tmp = benchDir('toolexec-bench-worker-');
const shared = new SharedArrayBuffer(4);
const worker = new Worker(new URL('./sqlite-worker.mjs', import.meta.url), {
  workerData: { file: path.join(tmp.dir, 'durable.db'), mode: 'rows', shared },
});
/** Batches posted and not yet committed, oldest first: [upto, done]. */
const waiting = [];
worker.on('message', (m) => {
  if (typeof m === 'number') {
    while (waiting.length > 0 && waiting[0][0] <= m) waiting.shift()[1]();
  } else if (m?.error) {
    for (const [, done] of waiting.splice(0)) done(new Error(m.error));
  }
});
const queue = turnBatcher((b, done) => {
  const upto = b.seqs.at(-1);
  waiting.push([upto, done]);
  worker.postMessage({ executions: b.executions, audits: b.audits, upto });
});

const app = Fastify({ logger: false });
app.post('/execute', async (req) => {
  const r = requestRows(req.body);
  await queue(r.seq, r.execution, r.audit);
  return r.answer;
});
await new Promise((resolve) => worker.once('online', resolve));
await serveBench(app, () => tmp.remove());
