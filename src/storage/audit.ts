/**
 * The audit log: one row per permission decision, with its reason type and
 * detail (which rule, which hook, which approver), the actor (the token that
 * executed or approved) and a digest of the exact input judged.
 */
import type { Statement } from 'better-sqlite3';
import type { Db, GroupCommitWriter } from './db.js';

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

export class AuditLog {
  private readonly insert: Statement;

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
  ) {
    this.insert = db.prepare(
      `INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /** Queues the row; it commits before (or with) the execution's final row. */
  record(e: AuditEntry): void {
    this.writer.writeLater(() => {
      this.insertEntry(e);
    });
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
