/**
 * One service per database file. Execution ids are row numbers handed out
 * by the process (ExecutionLog.newId) and rows are upserted on them, and a
 * service closes at start-up the calls it finds unfinished: a second service
 * on the same file wrote its rows over the first's (a session's replay
 * answered another session's output; the other's call ran and its result
 * was withheld) and marked the first's running calls cancelled, even when
 * it then failed to listen on a port already taken.
 *
 * The lock is SQLite's own (fcntl) lock on a file beside the database, held
 * by an exclusive transaction that is never committed: the kernel drops it
 * when the process ends, however it ends, so a crash leaves nothing stale to
 * clean up; SQLite keeps it between the connections of one process too. The
 * database itself stays open to readers (the CLI's read-only copies, the
 * checkpointer's connection).
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { ToolexecError } from '../errors.js';

export interface DatabaseLock {
  release(): void;
}

/**
 * The lock file of a database: beside the file the path leads to, so that a
 * database reached through a link to it (data/toolexec.db -> /srv/x.db) and
 * by its own path share one lock, as they share the database.
 */
function lockFileOf(dbPath: string): string {
  let real = dbPath;
  try {
    real = fs.realpathSync(dbPath);
  } catch {
    /* not made yet: its own path */
  }
  return `${real}.lock`;
}

/** Takes the lock of the database at `dbPath` (an absolute path), or throws TOOLEXEC_ERR_STORAGE_UNAVAILABLE naming the lock file. */
export function lockDatabase(dbPath: string): DatabaseLock {
  const file = lockFileOf(dbPath);
  let conn: Database.Database | undefined;
  try {
    conn = new Database(file);
    conn.pragma('busy_timeout = 0');
    // Nothing is ever written to it: no -journal file beside it either.
    conn.pragma('journal_mode = MEMORY');
    conn.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    conn?.close();
    const busy = (e as { code?: unknown }).code === 'SQLITE_BUSY';
    throw new ToolexecError(
      'TOOLEXEC_ERR_STORAGE_UNAVAILABLE',
      busy
        ? `the database ${dbPath} is in use by another toolexec service (it holds ${file}); stop that one first, or give this one its own database with storage.path or --data-dir`
        : `cannot lock the database ${dbPath} through ${file}: ${(e as Error).message}`,
    );
  }
  const held = conn;
  return {
    release: () => {
      if (held.open) held.close();
    },
  };
}
