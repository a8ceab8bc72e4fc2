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
 * in one transaction at the next turn of the event loop, and each caller awaits
 * the commit that holds its rows. One transaction per batch instead of one per
 * row is what keeps auditing cheap under load (bench/pipeline.bench).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

export interface OpenOptions {
  path: string;
  readonly?: boolean;
}

export function openDatabase(opts: OpenOptions): Db {
  if (opts.path !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(opts.path)), { recursive: true });
  const db = new Database(opts.path, { readonly: opts.readonly ?? false });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  // Keep the WAL from growing without bound under sustained writes.
  db.pragma('journal_size_limit = 67108864');
  if (!opts.readonly) migrate(db);
  return db;
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
type Entry = { op: WriteOp; resolve?: () => void; reject?: (e: unknown) => void; firstFailedAt?: number };

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

/** Queues writes and commits them together; see the file comment. */
export class GroupCommitWriter {
  private queue: Entry[] = [];
  /** Writes of failed batches, tried again first (bounded). */
  private retry: Entry[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private lastCommit = 0;
  private lastError: unknown = undefined;
  private readonly runBatch: (ops: Entry[]) => Array<() => void>;
  private readonly runOne: (op: WriteOp) => void | (() => void);

  /**
   * @param windowMs under load, commits are at least this far apart, so that a
   * commit carries the calls of the whole window: a commit's cost is mostly
   * per page written, not per row (measured: 75 µs of CPU for a commit of one
   * call, 24 µs per call for ten). Idle, a write commits at the next turn of
   * the event loop.
   */
  constructor(
    db: Db,
    private readonly windowMs = Number(process.env.TOOLEXEC_COMMIT_WINDOW_MS ?? 2),
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

  /** Queues a write whose commit nobody waits for (it still commits in order). */
  writeLater(op: WriteOp): void {
    this.queue.push({ op });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const since = performance.now() - this.lastCommit;
    if (since >= this.windowMs) setImmediate(this.flushNow);
    else setTimeout(this.flushNow, this.windowMs - since);
  }

  readonly flushNow = (): void => {
    this.scheduled = false;
    if (this.retry.length > 0) this.runRetries();
    const entries = this.queue;
    if (entries.length === 0) return;
    this.queue = [];
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
  private runRetries(): void {
    const pending = this.retry.splice(0);
    const now = Date.now();
    for (const x of pending) {
      try {
        const cb = this.runOne(x.op);
        if (typeof cb === 'function') cb();
      } catch (e) {
        if (!isConstraintError(e) && now - (x.firstFailedAt ?? now) < MAX_RETRY_AGE_MS) this.retry.push(x);
        else this.dropped += 1;
      }
    }
    this.armRetry();
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
