/**
 * Retention: pruning what the database keeps forever otherwise.
 *
 * - `retention.auditMaxAgeDays`: audit rows, and with them the rows of
 *   finished executions and answered permission requests of the same age
 *   (an execution row holds the input and decision the audit row vouches
 *   for; keeping one without the other helps nobody). An execution pruned is
 *   forgotten by idempotency too: its tool_use id could run again.
 * - `retention.resultsMaxAgeDays`: stored large results (their chunks go by
 *   ON DELETE CASCADE).
 * - `retention.resultsMaxBytes`: past this total (the stored text's UTF-8
 *   bytes, not the file's size), the oldest results go first.
 *
 * Nothing a running call refers to is touched: rows of executions live in
 * the registry are skipped, and nothing younger than MIN_AGE_MS goes,
 * whatever the configuration says. Work is done in small transactions (at
 * most `batchRows` rows, or CHUNK_BUDGET result chunks) with a turn of the
 * event loop between them, so calls keep being served while a large backlog
 * is pruned. Freed pages are reused by SQLite; the file does not shrink.
 */
import type { Statement } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Db } from './db.js';

export interface RetentionConfig {
  auditMaxAgeDays?: number | undefined;
  resultsMaxAgeDays?: number | undefined;
  resultsMaxBytes?: number | undefined;
  intervalMs: number;
}

export interface RetentionOptions extends RetentionConfig {
  /** Whether an execution is still running here (its rows must stay). */
  isLive(executionId: string): boolean;
  log: Logger;
  batchRows?: number | undefined;
  /** First run after start (default: the interval, at most a minute). */
  firstRunMs?: number | undefined;
}

export interface PruneReport {
  audit: number;
  executions: number;
  permissionRequests: number;
  resultsByAge: number;
  resultsBySize: number;
  bytesFreed: number;
}

const DAY_MS = 86_400_000;
/** Never pruned, whatever the configuration: rows a call may still be writing or reading. */
export const MIN_AGE_MS = 5 * 60_000;
export const DEFAULT_BATCH_ROWS = 500;
/** Result chunks (64 K characters each) deleted per transaction at most. */
const CHUNK_BUDGET = 1000;
const TERMINAL = new Set(['succeeded', 'failed', 'denied', 'cancelled']);

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Keyset pagination over (ts, id), oldest first: the audit_ts index holds
 * both (an index ends with the rowid). Written as a row value so that SQLite
 * walks the index from the last row of the previous batch and stops after a
 * batch: the same condition spelt `ts > ? OR (ts = ? AND id > ?)` became a
 * MULTI-INDEX OR whose rows were gathered and sorted in a temporary B-tree,
 * every old row of the backlog on every batch (a pass over n old rows cost
 * n²/batch, with the event loop blocked for each sort: 38 ms per batch with
 * 100,000 old rows).
 */
export const AUDIT_BATCH_SQL = 'SELECT id, ts, execution_id FROM audit WHERE (ts, id) > (?, ?) AND ts < ? ORDER BY ts, id LIMIT ';
/** The same over results, by (created_at, rowid): results_created holds both (their id is a text key). */
export const RESULTS_BATCH_SQL = `SELECT rowid AS rid, id, execution_id, total_bytes, chunk_count, created_at FROM results
         WHERE (created_at, rowid) > (?, ?) AND created_at < ? ORDER BY created_at, rowid LIMIT `;

interface ResultRef {
  rid: number;
  id: string;
  execution_id: string | null;
  total_bytes: number;
  chunk_count: number;
  created_at: number;
}

export class Retention {
  private readonly batch: number;
  private readonly q: {
    audit: Statement<[number, number, number]>;
    deleteAudit: Statement<[number]>;
    executions: Statement<[number, number]>;
    deleteExecution: Statement<[number]>;
    permissionRequests: Statement<[number, number]>;
    results: Statement<[number, number, number]>;
    deleteResult: Statement<[string]>;
    resultBytes: Statement<[]>;
  };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PruneReport> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly opts: RetentionOptions,
  ) {
    this.batch = opts.batchRows ?? DEFAULT_BATCH_ROWS;
    this.q = {
      audit: db.prepare(AUDIT_BATCH_SQL + this.batch),
      deleteAudit: db.prepare('DELETE FROM audit WHERE id = ?'),
      // seq grows with time (a row is appended when its call starts or ends: in created_at order to within a
      // call's duration), so the scan stops at the first young row; a row out of order waits for a later pass.
      executions: db.prepare('SELECT seq, id, status, created_at FROM executions WHERE seq > ? ORDER BY seq LIMIT ?'),
      deleteExecution: db.prepare('DELETE FROM executions WHERE seq = ?'),
      permissionRequests: db.prepare(
        `DELETE FROM permission_requests WHERE rowid IN (
           SELECT rowid FROM permission_requests WHERE created_at < ? AND status != 'pending' ORDER BY created_at LIMIT ?)`,
      ),
      results: db.prepare(RESULTS_BATCH_SQL + this.batch),
      deleteResult: db.prepare('DELETE FROM results WHERE id = ?'),
      resultBytes: db.prepare('SELECT COALESCE(SUM(total_bytes), 0) AS n FROM results'),
    };
  }

  get enabled(): boolean {
    const o = this.opts;
    return o.auditMaxAgeDays !== undefined || o.resultsMaxAgeDays !== undefined || o.resultsMaxBytes !== undefined;
  }

  /** Starts the timer (unref'd) when anything is configured. */
  start(): void {
    if (!this.enabled || this.timer || this.stopped) return;
    this.schedule(this.opts.firstRunMs ?? Math.min(this.opts.intervalMs, 60_000));
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runOnce()
        .then((r) => {
          const total = r.audit + r.executions + r.permissionRequests + r.resultsByAge + r.resultsBySize;
          if (total > 0) this.opts.log.info({ retention: r }, 'pruned old records');
        })
        .catch((e: unknown) => this.opts.log.error({ err: e }, 'retention run failed'))
        .finally(() => {
          if (!this.stopped) this.schedule(this.opts.intervalMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** One pass over everything configured; concurrent callers share it. */
  runOnce(now = Date.now()): Promise<PruneReport> {
    this.running ??= this.pass(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the timer and waits for a pass in progress to end (between two batches). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  private cutoff(now: number, days: number | undefined): number | undefined {
    if (days === undefined) return undefined;
    return Math.min(now - days * DAY_MS, now - MIN_AGE_MS);
  }

  private async pass(now: number): Promise<PruneReport> {
    const r: PruneReport = { audit: 0, executions: 0, permissionRequests: 0, resultsByAge: 0, resultsBySize: 0, bytesFreed: 0 };
    const auditCutoff = this.cutoff(now, this.opts.auditMaxAgeDays);
    if (auditCutoff !== undefined) {
      r.audit = await this.pruneAudit(auditCutoff);
      r.executions = await this.pruneExecutions(auditCutoff);
      r.permissionRequests = await this.prunePermissionRequests(auditCutoff);
    }
    const resultsCutoff = this.cutoff(now, this.opts.resultsMaxAgeDays);
    if (resultsCutoff !== undefined) {
      const { count, bytes } = await this.pruneResults(resultsCutoff, Number.POSITIVE_INFINITY);
      r.resultsByAge = count;
      r.bytesFreed += bytes;
    }
    if (this.opts.resultsMaxBytes !== undefined && !this.stopped) {
      const total = (this.q.resultBytes.get() as { n: number }).n;
      const excess = total - this.opts.resultsMaxBytes;
      if (excess > 0) {
        const { count, bytes } = await this.pruneResults(now - MIN_AGE_MS, excess);
        r.resultsBySize = count;
        r.bytesFreed += bytes;
      }
    }
    return r;
  }

  private async pruneAudit(cutoff: number): Promise<number> {
    let n = 0;
    let after = { ts: Number.NEGATIVE_INFINITY, id: 0 };
    while (!this.stopped) {
      const rows = this.q.audit.all(after.ts, after.id, cutoff) as Array<{ id: number; ts: number; execution_id: string }>;
      if (rows.length === 0) break;
      this.db.transaction(() => {
        for (const row of rows) {
          if (this.opts.isLive(row.execution_id)) continue;
          n += this.q.deleteAudit.run(row.id).changes;
        }
      })();
      const last = rows[rows.length - 1]!;
      after = { ts: last.ts, id: last.id };
      if (rows.length < this.batch) break;
      await turn();
    }
    return n;
  }

  private async pruneExecutions(cutoff: number): Promise<number> {
    let n = 0;
    let afterSeq = 0;
    while (!this.stopped) {
      const rows = this.q.executions.all(afterSeq, this.batch) as Array<{ seq: number; id: string; status: string; created_at: number }>;
      if (rows.length === 0) break;
      let reachedYoung = false;
      this.db.transaction(() => {
        for (const row of rows) {
          if (row.created_at >= cutoff) {
            reachedYoung = true;
            break;
          }
          if (!TERMINAL.has(row.status) || this.opts.isLive(row.id)) continue;
          n += this.q.deleteExecution.run(row.seq).changes;
        }
      })();
      if (reachedYoung || rows.length < this.batch) break;
      afterSeq = rows[rows.length - 1]!.seq;
      await turn();
    }
    return n;
  }

  private async prunePermissionRequests(cutoff: number): Promise<number> {
    let n = 0;
    while (!this.stopped) {
      const changes = this.q.permissionRequests.run(cutoff, this.batch).changes;
      n += changes;
      if (changes < this.batch) break;
      await turn();
    }
    return n;
  }

  /** Oldest first, created before `cutoff`, until `maxBytes` are freed (Infinity: all of them). */
  private async pruneResults(cutoff: number, maxBytes: number): Promise<{ count: number; bytes: number }> {
    let count = 0;
    let bytes = 0;
    let after = { created: Number.NEGATIVE_INFINITY, rid: 0 };
    while (!this.stopped && bytes < maxBytes) {
      const rows = this.q.results.all(after.created, after.rid, cutoff) as ResultRef[];
      if (rows.length === 0) break;
      let chunks = 0;
      let consumed = 0;
      this.db.transaction(() => {
        for (const row of rows) {
          if (bytes >= maxBytes || (chunks > 0 && chunks + row.chunk_count > CHUNK_BUDGET)) break;
          consumed++;
          if (row.execution_id !== null && this.opts.isLive(row.execution_id)) continue;
          if (this.q.deleteResult.run(row.id).changes > 0) {
            count++;
            bytes += row.total_bytes;
            chunks += row.chunk_count;
          }
        }
      })();
      if (consumed === 0) break;
      const last = rows[consumed - 1]!;
      after = { created: last.created_at, rid: last.rid };
      if (consumed === rows.length && rows.length < this.batch) break;
      await turn();
    }
    return { count, bytes };
  }
}
