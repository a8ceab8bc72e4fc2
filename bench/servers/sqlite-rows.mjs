// The SQLite side of the floor bench's durable variants: toolexec's schema
// (its migrations from dist/), WAL with synchronous=NORMAL as toolexec opens
// it, and a batch insert that writes n rows with multi-row INSERT statements
// of up to CHUNK rows each (one prepared statement per size, made on first
// use), as toolexec's MultiRowWriter does with sizes 8, 4, 2, 1. Used on the
// main thread (bare-durable-lean.mjs) and in a worker (sqlite-worker.mjs).
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../dist/storage/migrations.js';
import { AUDIT_COLUMNS, EXECUTION_COLUMNS } from './durable-rows.mjs';

/** Rows per statement at most; toolexec measured 8 as the cheapest per row. */
const CHUNK = Number(process.env.FLOOR_CHUNK ?? 8);

function multiRow(db, table, columns, width) {
  const statements = [];
  const params = [];
  const row = `(${new Array(width).fill('?').join(', ')})`;
  return (rows) => {
    let i = 0;
    while (i < rows.length) {
      const n = Math.min(CHUNK, rows.length - i);
      let st = statements[n];
      if (st === undefined) {
        st = statements[n] = db.prepare(`INSERT INTO ${table} (${columns}) VALUES ${new Array(n).fill(row).join(', ')}`);
        params[n] = new Array(n * width);
      }
      const p = params[n];
      for (let j = 0; j < n; j++) {
        const r = rows[i + j];
        for (let k = 0; k < width; k++) p[j * width + k] = r[k];
      }
      st.run(p);
      i += n;
    }
  };
}

/**
 * Opens (and migrates) the database; `insert(executions, audits)` writes both
 * lists of parameter arrays in one transaction. `exclusive` takes WAL's
 * exclusive locking mode: the WAL index lives in this connection's heap
 * rather than in the shared-memory file, and a commit takes no file locks,
 * but no other connection (a reader, a checkpointer) can open the database.
 */
export function openRows(file, { exclusive = false } = {}) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  if (exclusive) db.pragma('locking_mode = EXCLUSIVE');
  const version = db.pragma('user_version', { simple: true });
  if (version === 0) {
    db.transaction(() => {
      for (const m of MIGRATIONS) db.exec(m.sql);
      db.pragma(`user_version = ${MIGRATIONS.at(-1).version}`);
    })();
  }
  const executions = multiRow(db, 'executions', EXECUTION_COLUMNS, 20);
  const audit = multiRow(db, 'audit', AUDIT_COLUMNS, 10);
  const insert = db.transaction((ex, au) => {
    executions(ex);
    audit(au);
  });
  return { db, insert };
}
