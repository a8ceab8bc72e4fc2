/**
 * The SQLite database: one file, WAL, versioned migrations, and a group-commit
 * writer.
 *
 * Durability: WAL with synchronous=NORMAL makes every commit durable against a
 * crash of this process (the WAL frames are in the OS before COMMIT returns);
 * only a power loss can drop the last transactions. The contract asks for the
 * former: an audit row is committed before the result that depends on it is
 * sent.
 *
 * Group commit: writes from concurrent calls are queued and committed together
 * in one transaction, and each caller awaits the commit that holds its rows.
 * One transaction per batch instead of one per row is what keeps auditing
 * cheap under load (bench/pipeline.bench): a commit costs 50-100 µs of CPU
 * whatever it carries (about 7 WAL frames, two write() calls each, and the
 * WAL locks), a row 2-5 µs.
 *
 * When to commit: at the next turn of the event loop if the last commit is
 * older than the window (TOOLEXEC_COMMIT_WINDOW_MS, default 2 ms), else at the
 * window's end — unless every call started here is already waiting for the
 * commit (ExecutionLog calls expedite()): then nothing would join it by
 * waiting, and it is made at the next turn. Measured (no-op tool, 2 cores,
 * CPU µs per POST /execute and requests/s; pipeline µs per call):
 *
 *   fixed window          1 conn        10 conns      100 conns     pipeline sequential / 100 concurrent
 *   0 ms                  266 (2740/s)  97-103 (10k)  79-84 (13k)   70 / 18-22
 *   1 ms                  355-439 (690) 120-130 (6k)  75-81 (13k)   1220 / 19-22
 *   2 ms                  401-414 (670) 106-129 (6k)  75-95 (10-14k) 1245 / 19-26
 *   2 ms + expedite       276 (2720/s)  98 (10k)      68 (15k)      72-76 / 19-21
 *
 * A fixed window makes a lone caller wait it out (1.2 ms per sequential call)
 * and, idle between requests, costs more CPU per request, not less; with
 * expedite a lone or fully-finished batch commits at once, and the window
 * still gathers the commits of calls that finish while slower ones run.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database, { type Statement } from 'better-sqlite3';
import { ToolexecError } from '../errors.js';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

export interface OpenOptions {
  path: string;
  readonly?: boolean;
}

/**
 * Why the database file cannot be opened, in words an operator can act on:
 * SQLite's own "unable to open database file" names neither the file nor
 * the cause.
 */
function openFailure(file: string, e: unknown): ToolexecError {
  const dir = path.dirname(file);
  const code = (e as NodeJS.ErrnoException).code;
  let why: string;
  if (isDirectory(file)) why = `it is a directory; storage.path names the database file (such as ${path.join(file, 'toolexec.db')}), or give the directory as --data-dir`;
  else if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') why = `cannot create its directory ${dir} (${code}); choose a writable place with storage.path or --data-dir`;
  else if (code === 'ENOTDIR' || code === 'EEXIST') why = `a part of ${dir} is a file, not a directory; choose another place with storage.path or --data-dir`;
  else why = `${(e as Error).message} (the file and its directory ${dir} must be writable by this user; choose another place with storage.path or --data-dir)`;
  return new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `cannot open the database ${file}: ${why}`);
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

const GITIGNORE = '# Made by toolexec with its database (audit log, stored tool output): not for version control.\n*\n';

/**
 * The page cache, in KiB as SQLite takes it (negative). better-sqlite3 builds
 * SQLite with 16 MB; the writes here append (executions, audit, result
 * chunks) and the reads walk an index range, so a few MB hold every hot page.
 * A 100 MB result streamed into chunks otherwise fills all 16 MB with pages
 * it never reads again, and keeps them (bench/large-result: peak RSS growth
 * about 71 MB with 16 MB, see the README's figures for this size).
 */
export const PAGE_CACHE_KIB = -4000;

/** Makes the directory of a database file, if missing, with a .gitignore; throws as openDatabase does. */
export function makeDatabaseDir(file: string): void {
  if (file === ':memory:') return;
  const dir = path.dirname(path.resolve(file));
  try {
    // A directory made here (.toolexec/ in a project, by default) is kept out of git: a `git add -A`
    // would otherwise commit the audit log and every stored tool output.
    if (fs.mkdirSync(dir, { recursive: true }) !== undefined) fs.writeFileSync(path.join(dir, '.gitignore'), GITIGNORE);
  } catch (e) {
    throw openFailure(path.resolve(file), e);
  }
}

export function openDatabase(opts: OpenOptions): Db {
  let db: Db;
  makeDatabaseDir(opts.path);
  try {
    db = new Database(opts.path, { readonly: opts.readonly ?? false });
  } catch (e) {
    throw openFailure(path.resolve(opts.path), e);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    // Keep the WAL from growing without bound under sustained writes.
    db.pragma('journal_size_limit = 67108864');
    db.pragma(`cache_size = ${PAGE_CACHE_KIB}`);
    if (!opts.readonly) migrate(db);
  } catch (e) {
    db.close();
    throw unusable(path.resolve(opts.path), e);
  }
  return db;
}

/**
 * Why an opened database cannot be used, naming the file: SQLite's own
 * "file is not a database" or "database is locked" named neither it nor
 * what to do, and was all `toolexec serve` printed.
 */
function unusable(file: string, e: unknown): ToolexecError {
  const code = (e as { code?: unknown }).code;
  const sqlite = (e as Error).message;
  let why: string;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') why = `it is not an SQLite database, or it is damaged (${sqlite}); move it aside, or choose another place with storage.path or --data-dir`;
  else if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') why = `another process holds a lock on it (${sqlite}); stop that process, or choose another place with storage.path or --data-dir`;
  else why = sqlite;
  return new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `cannot open the database ${file}: ${why}`);
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const pending = MIGRATIONS.filter((m) => m.version > current).sort((a, b) => a.version - b.version);
  for (const m of pending) {
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}

/**
 * A queued write. It may return a function to run once its transaction has
 * committed (write-behind caches use it to forget what is now durable).
 */
export type WriteOp = () => void | (() => void);
type Entry = { op: WriteOp; resolve?: () => void; reject?: (e: unknown) => void; firstFailedAt?: number; key?: string };

/** A write that only waits for the commit; not worth keeping when a batch fails. */
export const NOOP_OP: WriteOp = () => {};
/** Failed writes kept for a retry at most (a database that stays full must not eat the memory). */
const MAX_RETRY = 100_000;
const RETRY_MS = 1000;
const MAX_RETRY_AGE_MS = 10 * 60_000;

/** A constraint violation is one bad row; anything else means the database is not taking writes. */
export function isConstraintError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}

/** The commit window from TOOLEXEC_COMMIT_WINDOW_MS: milliseconds from 0 to 1000, else the default of 2. */
export function commitWindowMs(v: string | undefined): number {
  const n = v === undefined || v.trim() === '' ? Number.NaN : Number(v);
  return Number.isFinite(n) && n >= 0 && n <= 1000 ? n : 2;
}

/** Queues writes and commits them together; see the file comment. */
export class GroupCommitWriter {
  private queue: Entry[] = [];
  private queuedKeys = new Set<string>();
  /** Writes of failed batches, tried again first (bounded). */
  private retry: Entry[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private scheduled = false;
  /** Set while a commit waits for the end of its window. */
  private windowTimer: NodeJS.Timeout | undefined = undefined;
  private lastCommit = 0;
  private lastError: unknown = undefined;
  /** Set while the checkpointer asks for no commit (storage/checkpointer.ts). */
  private held = false;
  /** A scheduled commit came due while held. */
  private deferred = false;
  private readonly runBatch: (ops: Entry[]) => Array<() => void>;
  private readonly runOne: (op: WriteOp) => void | (() => void);

  /**
   * @param windowMs while calls are still running, commits are at least this
   * far apart, so that a commit carries the calls of the whole window: a
   * commit's cost is mostly per page written, not per row (measured: 75 µs of
   * CPU for a commit of one call, 24 µs per call for ten). Idle, or when every
   * call waits for it (expedite), a write commits at the next turn of the
   * event loop. See the file comment for the measured choice of 2 ms.
   */
  constructor(
    db: Db,
    private readonly windowMs = commitWindowMs(process.env.TOOLEXEC_COMMIT_WINDOW_MS),
  ) {
    this.runBatch = db.transaction((entries: Entry[]) => {
      const after: Array<() => void> = [];
      for (const e of entries) {
        const cb = e.op();
        if (typeof cb === 'function') after.push(cb);
      }
      return after;
    });
    this.runOne = db.transaction((op: WriteOp) => op());
  }

  /** Queues one write; the promise settles when its transaction commits. */
  write(op: WriteOp): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Queues a write whose commit nobody waits for (it still commits in order).
   * A `key` names a write that gathers rows until it runs (the execution rows,
   * the audit rows): `isQueued(key)` tells its owner whether such a write is
   * in the batch about to commit, so that rows recorded after a failed
   * commit go into a new write of the next batch rather than into one that
   * was moved aside for a retry.
   */
  writeLater(op: WriteOp, key?: string): void {
    this.queue.push(key === undefined ? { op } : { op, key });
    if (key !== undefined) this.queuedKeys.add(key);
    this.schedule();
  }

  /** Whether a write with this key is in the batch that has not committed yet. */
  isQueued(key: string): boolean {
    return this.queuedKeys.has(key);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const since = performance.now() - this.lastCommit;
    if (since >= this.windowMs) setImmediate(this.flushScheduled);
    else this.windowTimer = setTimeout(this.flushScheduled, this.windowMs - since);
  }

  /**
   * Holds the scheduled commits until release(): the checkpointer copies the
   * last frames back meanwhile, so that the next commit starts the WAL over.
   * Writes still queue; flushNow() (shutdown, tests) commits regardless.
   */
  hold(): void {
    this.held = true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    if (this.deferred) {
      this.deferred = false;
      setImmediate(this.flushNow);
    }
  }

  private readonly flushScheduled = (): void => {
    if (!this.held) return this.flushNow();
    if (this.windowTimer !== undefined) {
      clearTimeout(this.windowTimer);
      this.windowTimer = undefined;
    }
    this.deferred = true;
  };

  /**
   * Commits at the next turn of the event loop rather than at the end of the
   * window: the caller knows that nothing else will join this commit (every
   * call in flight is waiting for it, storage/executions.ts), so waiting
   * would only add latency.
   */
  expedite(): void {
    const t = this.windowTimer;
    if (t === undefined) return;
    this.windowTimer = undefined;
    clearTimeout(t);
    setImmediate(this.flushScheduled);
  }

  readonly flushNow = (): void => {
    this.scheduled = false;
    if (this.windowTimer !== undefined) {
      clearTimeout(this.windowTimer);
      this.windowTimer = undefined;
    }
    const retryFailure = this.retry.length > 0 ? this.runRetries() : undefined;
    const entries = this.queue;
    if (entries.length === 0) return;
    this.queue = [];
    this.queuedKeys.clear();
    // Rows held from a failed batch that still do not commit: this batch's
    // callers must not be told their rows are durable when theirs could be
    // among those (an audit row recorded before the failure).
    if (retryFailure !== undefined) {
      this.lastError = retryFailure;
      this.failBatch(entries, retryFailure);
      return;
    }
    this.lastCommit = performance.now();
    try {
      const after = this.runBatch(entries);
      this.lastError = undefined;
      for (const cb of after) cb();
      for (const e of entries) e.resolve?.();
      return;
    } catch (e) {
      this.lastError = e;
      if (!isConstraintError(e) || entries.length === 1) {
        this.failBatch(entries, e);
        return;
      }
    }
    // A constraint failure is one bad write: it must not take the others down
    // with it, so they are retried one by one.
    let failed: unknown = undefined;
    for (const e of entries) {
      try {
        const cb = this.runOne(e.op);
        if (typeof cb === 'function') cb();
        e.resolve?.();
      } catch (err) {
        failed = err;
        if (isConstraintError(err)) e.reject?.(err);
        else this.failBatch([e], err);
      }
    }
    this.lastError = failed;
  };

  /**
   * The database did not take the batch (full, read-only, I/O error): every
   * waiter learns it (their answers are withheld: a 503), and the writes are
   * kept and tried again with the next commit, so that the rows of calls that
   * did run are not lost once the database takes writes again.
   */
  private failBatch(entries: Entry[], e: unknown): void {
    const now = Date.now();
    for (const x of entries) x.reject?.(e);
    const keep = entries.filter((x) => x.op !== NOOP_OP).map((x) => ({ op: x.op, firstFailedAt: x.firstFailedAt ?? now }));
    this.retry.push(...keep);
    if (this.retry.length > MAX_RETRY) this.dropped += this.retry.splice(0, this.retry.length - MAX_RETRY).length;
    this.armRetry();
  }

  private armRetry(): void {
    if (this.retryTimer || this.retry.length === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.schedule();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  /**
   * Failed writes, each in a transaction of its own (one that keeps failing
   * must not fail the new writes with it), given up after MAX_RETRY_AGE_MS.
   * They do not decide readiness: the new writes' commit does.
   */
  private runRetries(): unknown {
    const pending = this.retry.splice(0);
    const now = Date.now();
    let failure: unknown = undefined;
    for (const x of pending) {
      try {
        const cb = this.runOne(x.op);
        if (typeof cb === 'function') cb();
      } catch (e) {
        if (!isConstraintError(e) && now - (x.firstFailedAt ?? now) < MAX_RETRY_AGE_MS) {
          this.retry.push(x);
          failure ??= e;
        } else this.dropped += 1;
      }
    }
    this.armRetry();
    return failure;
  }

  /** Writes given up after failing for too long (or beyond the retry bound). */
  dropped = 0;

  /** The last commit's failure, if the last commit failed (readiness). */
  get failing(): unknown {
    return this.lastError;
  }

  get pending(): number {
    return this.queue.length + this.retry.length;
  }
}

/**
 * Statement sizes for writing many rows: a batch of n rows is written as
 * statements of 8, 4, 2 and 1 rows. A statement's fixed cost (binding, the
 * VDBE program's start) is shared by its rows. Measured for an execution row
 * and its audit row, 100 calls per commit: 17.1 µs per call at 1 row per
 * statement, 14.8 at 4, 13.5-14.0 at 8, 14.8 at 16, 17.3 at 32 (longer
 * statements cost more to bind than they save).
 */
const ROW_CHUNKS = [8, 4, 2, 1] as const;

/**
 * Writes rows with multi-row INSERT statements (storage/executions.ts,
 * storage/audit.ts). A constraint failure rolls back its statement only: the
 * rows are then written one by one and the bad one is reported; any other
 * failure is thrown (the database is not taking writes: the commit fails).
 */
export class MultiRowWriter<R> {
  private readonly statements: Statement[];
  private readonly params: unknown[][];

  constructor(
    db: Db,
    sql: (rows: number) => string,
    private readonly columns: number,
    private readonly bind: (params: unknown[], at: number, row: R) => void,
    private readonly onRowError: (row: R, e: unknown) => void,
  ) {
    this.statements = ROW_CHUNKS.map((n) => db.prepare(sql(n)));
    this.params = ROW_CHUNKS.map((n) => new Array<unknown>(n * columns).fill(null));
  }

  write(rows: readonly R[]): void {
    let i = 0;
    for (let k = 0; k < ROW_CHUNKS.length; k++) {
      const n = ROW_CHUNKS[k]!;
      if (rows.length - i < n) continue;
      const p = this.params[k]!;
      try {
        for (; rows.length - i >= n; i += n) {
          for (let j = 0; j < n; j++) this.bind(p, j * this.columns, rows[i + j]!);
          try {
            this.statements[k]!.run(p);
          } catch (e) {
            if (!isConstraintError(e)) throw e;
            if (n === 1) this.onRowError(rows[i]!, e);
            else for (let j = 0; j < n; j++) this.writeOne(rows[i + j]!);
          }
        }
      } finally {
        // The reused parameters must not keep the rows' strings alive.
        p.fill(null);
      }
    }
  }

  private writeOne(row: R): void {
    const k = ROW_CHUNKS.length - 1;
    const p = this.params[k]!;
    this.bind(p, 0, row);
    try {
      this.statements[k]!.run(p);
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      this.onRowError(row, e);
    } finally {
      p.fill(null);
    }
  }
}
