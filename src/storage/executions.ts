/**
 * Execution rows: one per tool use, inserted when the call starts (so that an
 * acknowledged `wait:false` call survives a crash) and completed when it ends.
 * Writes go through the group-commit writer; `finish` resolves once the row
 * (and every audit row queued before it) is committed.
 */
import type { Statement } from 'better-sqlite3';
import type { Db, GroupCommitWriter } from './db.js';

export interface ExecutionRow {
  id: string;
  session_id: string;
  tool_use_id: string;
  tool: string;
  status: string;
  input_digest: string;
  input: string | null;
  decision: string | null;
  error_class: string | null;
  is_error: number;
  result_id: string | null;
  result_block: string | null;
  preview: string | null;
  hook_messages: string | null;
  timings: string | null;
  actor: string | null;
  created_at: number;
  finished_at: number | null;
  duration_ms: number | null;
}

export interface ExecutionStart {
  id: string;
  sessionId: string;
  toolUseId: string;
  tool: string;
  status: string;
  inputDigest: string;
  input: string;
  actor: string | null;
  createdAt: number;
}

export interface ExecutionEnd {
  id: string;
  tool: string;
  status: string;
  decision: string | null;
  errorClass: string | null;
  isError: boolean;
  resultId: string | null;
  resultBlock: string;
  preview: string;
  hookMessages: string | null;
  timings: string;
  finishedAt: number;
  durationMs: number;
}

export interface ListFilter {
  sessionId?: string | undefined;
  status?: string | undefined;
  tool?: string | undefined;
  limit: number;
  /** created_at/id of the last row of the previous page. */
  before?: { createdAt: number; id: string } | undefined;
}

/** Input stored with an execution is capped; its digest always covers the whole. */
export const STORED_INPUT_MAX_CHARS = 64 * 1024;

export class ExecutionLog {
  private readonly insert: Statement;
  private readonly update: Statement;
  private readonly byId: Statement<[string]>;
  private readonly byToolUse: Statement<[string, string]>;
  private readonly interrupted: Statement<[number]>;
  private readonly interruptedRows: Statement<[]>;

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
  ) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO executions (id, session_id, tool_use_id, tool, status, input_digest, input, actor, created_at)
       VALUES (@id, @sessionId, @toolUseId, @tool, @status, @inputDigest, @input, @actor, @createdAt)`,
    );
    this.update = db.prepare(
      `UPDATE executions SET tool = @tool, status = @status, decision = @decision, error_class = @errorClass,
         is_error = @isError, result_id = @resultId, result_block = @resultBlock, preview = @preview,
         hook_messages = @hookMessages, timings = @timings, finished_at = @finishedAt, duration_ms = @durationMs
       WHERE id = @id`,
    );
    this.byId = db.prepare('SELECT * FROM executions WHERE id = ?');
    this.byToolUse = db.prepare('SELECT * FROM executions WHERE session_id = ? AND tool_use_id = ?');
    this.interruptedRows = db.prepare(
      `SELECT * FROM executions WHERE status IN ('queued','validating','awaiting_permission','running')`,
    );
    this.interrupted = db.prepare(
      `UPDATE executions SET status = 'cancelled', error_class = 'cancelled', is_error = 1, finished_at = ?,
         result_block = json_object('type','tool_result','tool_use_id',tool_use_id,'content','<tool_use_error>The call was interrupted: toolexec restarted before it finished.</tool_use_error>','is_error',json('true'))
       WHERE status IN ('queued','validating','awaiting_permission','running')`,
    );
  }

  start(s: ExecutionStart): void {
    const input = s.input.length > STORED_INPUT_MAX_CHARS ? s.input.slice(0, STORED_INPUT_MAX_CHARS) : s.input;
    this.writer.writeLater(() => this.insert.run({ ...s, input }));
  }

  /** Completes the row; resolves when it is committed. */
  finish(e: ExecutionEnd): Promise<void> {
    return this.writer.write(() => this.update.run({ ...e, isError: e.isError ? 1 : 0 }));
  }

  get(id: string): ExecutionRow | undefined {
    return this.byId.get(id) as ExecutionRow | undefined;
  }

  findByToolUse(sessionId: string, toolUseId: string): ExecutionRow | undefined {
    return this.byToolUse.get(sessionId, toolUseId) as ExecutionRow | undefined;
  }

  list(f: ListFilter): ExecutionRow[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (f.sessionId !== undefined) {
      where.push('session_id = ?');
      params.push(f.sessionId);
    }
    if (f.status !== undefined) {
      where.push('status = ?');
      params.push(f.status);
    }
    if (f.tool !== undefined) {
      where.push('tool = ?');
      params.push(f.tool);
    }
    if (f.before) {
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(f.before.createdAt, f.before.createdAt, f.before.id);
    }
    const sql = `SELECT * FROM executions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`;
    params.push(f.limit);
    return this.db.prepare(sql).all(...params) as ExecutionRow[];
  }

  /** At start-up: calls a previous process left unfinished are marked cancelled. */
  recoverInterrupted(): ExecutionRow[] {
    const rows = this.interruptedRows.all() as ExecutionRow[];
    if (rows.length > 0) this.interrupted.run(Date.now());
    return rows;
  }
}
