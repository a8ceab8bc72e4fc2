/**
 * The audit log: one row per permission decision, with its reason type and
 * detail (which rule, which hook, which approver), the actor (the token that
 * executed or approved) and a digest of the exact input judged.
 */
import type { Statement } from 'better-sqlite3';
import { MultiRowWriter, type Db, type GroupCommitWriter } from './db.js';

const COLUMNS = 10;

function insertSql(rows: number): string {
  const row = `(${new Array<string>(COLUMNS).fill('?').join(', ')})`;
  return `INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
       VALUES ${new Array<string>(rows).fill(row).join(', ')}`;
}

export interface AuditEntry {
  ts: number;
  sessionId: string;
  toolUseId: string;
  executionId: string;
  tool: string;
  behavior: string;
  reasonType: string;
  reasonDetail: string | null;
  actor: string | null;
  inputDigest: string;
}

export interface AuditRow {
  id: number;
  ts: number;
  session_id: string;
  tool_use_id: string;
  execution_id: string;
  tool: string;
  behavior: string;
  reason_type: string;
  reason_detail: string | null;
  actor: string | null;
  input_digest: string;
}

export interface AuditFilter {
  sessionId?: string | undefined;
  tool?: string | undefined;
  behavior?: string | undefined;
  reason?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  executionId?: string | undefined;
  /** Rows with id below this (the cursor). */
  beforeId?: number | undefined;
  limit: number;
}

function bindRow(p: unknown[], i: number, e: AuditEntry): void {
  p[i] = e.ts;
  p[i + 1] = e.sessionId;
  p[i + 2] = e.toolUseId;
  p[i + 3] = e.executionId;
  p[i + 4] = e.tool;
  p[i + 5] = e.behavior;
  p[i + 6] = e.reasonType;
  p[i + 7] = e.reasonDetail;
  p[i + 8] = e.actor;
  p[i + 9] = e.inputDigest;
}

/**
 * Rows one page of GET /audit examines at most when it filters on columns
 * no index leads with (tool, behavior, reason, since, until). Indexes for
 * those would cost every call's commit more pages (README, Benchmarks); a
 * scan instead, unbounded, blocked the event loop for as long as a rare
 * filter took to walk a long history (a whole 1M-row table for a reason
 * no row has). A page may therefore hold fewer entries than asked, even
 * none, with a next_cursor to go on from.
 */
export const AUDIT_SCAN_ROWS = 20_000;

export interface AuditPage {
  rows: AuditRow[];
  /** Where the next page starts (rows with id below it), or undefined after the last one. */
  next: number | undefined;
}

/** The key of the queued write that inserts the rows recorded since the last commit. */
const AUDIT_KEY = 'audit';

export class AuditLog {
  private readonly insert: Statement;
  private readonly floor: Statement<[number, number]>;
  private readonly floorInSession: Statement<[string, number, number]>;
  private readonly sinceProbe: Statement<[number, number, number]>;
  private readonly rows: MultiRowWriter<AuditEntry>;
  /** Rows recorded since the last commit began, written by one queued write. */
  private batch: AuditEntry[] | undefined = undefined;

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
  ) {
    this.insert = db.prepare(insertSql(1));
    this.floor = db.prepare(AUDIT_FLOOR_SQL);
    this.floorInSession = db.prepare(AUDIT_SESSION_FLOOR_SQL);
    this.sinceProbe = db.prepare(AUDIT_SINCE_PROBE_SQL);
    // Several rows per statement (storage/db.ts MultiRowWriter). A constraint
    // failure loses that row only; anything else fails the commit, and the
    // rows are tried again with the batch.
    this.rows = new MultiRowWriter<AuditEntry>(db, insertSql, COLUMNS, bindRow, () => {});
  }

  /**
   * Queues the row; it commits before (or with) the execution's final row.
   * The rows recorded before a commit share one queued write (a closure and a
   * queue entry per batch rather than per row), which owns them: a failed
   * commit retries the same rows.
   */
  record(e: AuditEntry): void {
    let rows = this.batch;
    // After a failed commit the last batch's write waits for a retry: new rows
    // start a new write in the batch that commits next.
    if (rows === undefined || !this.writer.isQueued(AUDIT_KEY)) {
      const batch: AuditEntry[] = [];
      rows = batch;
      this.batch = batch;
      this.writer.writeLater(() => {
        if (this.batch === batch) this.batch = undefined;
        this.rows.write(batch);
      }, AUDIT_KEY);
    }
    rows.push(e);
  }

  private insertEntry(e: AuditEntry): void {
    this.insert.run(e.ts, e.sessionId, e.toolUseId, e.executionId, e.tool, e.behavior, e.reasonType, e.reasonDetail, e.actor, e.inputDigest);
  }

  /** Writes the row and resolves once it is committed. */
  recordNow(e: AuditEntry): Promise<void> {
    return this.writer.write(() => {
      this.insertEntry(e);
    });
  }

  /**
   * A page of entries, newest first, at most `f.limit`. Filters an index
   * serves (session, execution, none) are read straight from it. Any other
   * filter is checked on a window of at most `scanRows` rows below the
   * cursor, in the order of the index the query walks: the window's lower end
   * is found by stepping over that many entries of that index (no filter
   * evaluated, no row returned), and the page ends there if it is not full.
   */
  page(f: AuditFilter, scanRows = AUDIT_SCAN_ROWS): AuditPage {
    const residual = f.tool !== undefined || f.behavior !== undefined || f.reason !== undefined || f.since !== undefined || f.until !== undefined;
    if (!residual) {
      const rows = this.query({ ...f, limit: f.limit + 1 });
      return rows.length > f.limit ? { rows: rows.slice(0, f.limit), next: rows[f.limit - 1]!.id } : { rows, next: undefined };
    }
    const before = f.beforeId ?? Number.MAX_SAFE_INTEGER;
    // The id of the scanRows-th row below the cursor, in the driving index (audit_session, or the table's own key).
    const ends = (
      f.executionId !== undefined
        ? []
        : f.sessionId !== undefined
          ? this.floorInSession.all(f.sessionId, before, scanRows - 1)
          : this.floor.all(before, scanRows - 1)
    ) as Array<{ id: number }>;
    const floor = ends[0]?.id;
    const rows = this.query({ ...f, atLeastId: floor, limit: f.limit + 1 });
    if (rows.length > f.limit) return { rows: rows.slice(0, f.limit), next: rows[f.limit - 1]!.id };
    // The window held fewer than a page: go on below it, if anything older is there and may match.
    if (floor === undefined || ends.length < 2 || !this.mayMatchBelow(f, floor, scanRows)) return { rows, next: undefined };
    return { rows, next: floor };
  }

  /**
   * Whether rows below `id` can match a since filter: rows with ts >= since
   * are found through audit_ts, at most `scanRows` index entries looked at
   * (past them, the answer is a conservative yes). A page for "the last
   * hour" then ends once its window passed the hour's oldest row, instead
   * of offering a cursor through the rest of the history.
   */
  private mayMatchBelow(f: AuditFilter, id: number, scanRows: number): boolean {
    if (f.since === undefined) return true;
    const r = this.sinceProbe.get(id, f.since, scanRows) as { n: number; below: number };
    return r.below > 0 || r.n >= scanRows;
  }

  query(f: AuditQuery): AuditRow[] {
    const { sql, params } = auditSelect(f);
    return this.db.prepare(sql).all(...params) as AuditRow[];
  }
}

export type AuditQuery = AuditFilter & { atLeastId?: number | undefined };

/** The SELECT behind a page (exported for the tests that check its query plan). */
export function auditSelect(f: AuditQuery): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const eq = (col: string, v: unknown): void => {
    if (v === undefined) return;
    where.push(`${col} = ?`);
    params.push(v);
  };
  eq('session_id', f.sessionId);
  eq('tool', f.tool);
  eq('behavior', f.behavior);
  eq('reason_type', f.reason);
  eq('execution_id', f.executionId);
  if (f.since !== undefined) {
    where.push('ts >= ?');
    params.push(f.since);
  }
  if (f.until !== undefined) {
    where.push('ts <= ?');
    params.push(f.until);
  }
  if (f.beforeId !== undefined) {
    where.push('id < ?');
    params.push(f.beforeId);
  }
  if (f.atLeastId !== undefined) {
    where.push('id >= ?');
    params.push(f.atLeastId);
  }
  // The index the page walks, newest first (a time range through audit_ts would be gathered and sorted whole).
  const from = f.executionId !== undefined ? 'audit INDEXED BY audit_execution' : f.sessionId !== undefined ? 'audit INDEXED BY audit_session' : 'audit NOT INDEXED';
  params.push(f.limit);
  return { sql: `SELECT * FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`, params };
}

/** The id scanRows index entries below the cursor (the lower end of a page's window), and the one below it if any. */
export const AUDIT_FLOOR_SQL = 'SELECT id FROM audit WHERE id < ? ORDER BY id DESC LIMIT 2 OFFSET ?';
export const AUDIT_SESSION_FLOOR_SQL = 'SELECT id FROM audit WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT 2 OFFSET ?';
/** Whether rows with ts >= since lie below an id (at most LIMIT index entries looked at). */
export const AUDIT_SINCE_PROBE_SQL = 'SELECT COUNT(*) AS n, COALESCE(SUM(id < ?), 0) AS below FROM (SELECT id FROM audit INDEXED BY audit_ts WHERE ts >= ? LIMIT ?)';
