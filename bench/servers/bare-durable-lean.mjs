// The cheapest in-thread way found to make bare.mjs's requests durable with
// the same rows as bare-durable.mjs (durable-rows.mjs builds them the same
// way): per turn of the event loop, one transaction of multi-row INSERTs
// (sqlite-rows.mjs: statements of up to 8 rows, prepared once per size)
// instead of one INSERT per row, and one promise per turn instead of one per
// request. FLOOR_EXCLUSIVE=1 also takes WAL's exclusive locking mode (no
// shared-memory index, no file locks per commit; it shuts out every other
// connection, so toolexec's checkpointer thread and readers could not open
// the database). Checkpoints are SQLite's automatic ones, on this thread, as
// in bare-durable.mjs.
import path from 'node:path';
import Fastify from 'fastify';
import { benchDir, requestRows } from './durable-rows.mjs';
import { openRows } from './sqlite-rows.mjs';
import { turnBatcher } from './turn-batch.mjs';
import { serveBench } from './serve.mjs';

const tmp = benchDir('toolexec-bench-lean-');
const { db, insert } = openRows(path.join(tmp.dir, 'durable.db'), { exclusive: process.env.FLOOR_EXCLUSIVE === '1' });
// FLOOR_NOWRITE=1: the rows built and batched, and nothing written (not durable: the floor
// under every variant, what building the rows and waiting a turn cost without making them durable).
const write = process.env.FLOOR_NOWRITE !== '1';
const queue = turnBatcher((b, done) => {
  if (!write) return done();
  try {
    insert(b.executions, b.audits);
  } catch (e) {
    return done(e);
  }
  done();
});

const app = Fastify({ logger: false });
app.post('/execute', async (req) => {
  const r = requestRows(req.body);
  await queue(r.seq, r.execution, r.audit);
  return r.answer;
});
await serveBench(app, () => {
  db.close();
  tmp.remove();
});
