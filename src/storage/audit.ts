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

/** The key of the queued write that inserts the rows recorded since the last commit. */
const AUDIT_KEY = 'audit';

export class AuditLog {
  private readonly insert: Statement;
  private readonly rows: MultiRowWriter<AuditEntry>;
  /** Rows recorded since the last commit began, written by one queued write. */
  private batch: AuditEntry[] | undefined = undefined;

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
  ) {
    this.insert = db.prepare(insertSql(1));
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

  query(f: AuditFilter): AuditRow[] {
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
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    params.push(f.limit);
    return this.db.prepare(sql).all(...params) as AuditRow[];
  }
}
