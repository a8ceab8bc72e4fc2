/**
 * Execution rows: one per tool use, written when the call starts (so that an
 * acknowledged `wait:false` call survives a crash) and completed when it ends.
 * Writes go through the group-commit writer; `finish` resolves once the row
 * (and every audit row queued before it) is committed.
 *
 * Rows are written behind: `start` and `finish` update a pending snapshot and
 * the next group commit upserts each pending row once. A call that starts and
 * ends between two commits (most calls) costs one row write instead of an
 * insert and an update.
 */
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db, GroupCommitWriter } from './db.js';

export interface ExecutionRow {
  seq: number;
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
  /** seq of the last row of the previous page. */
  beforeSeq?: number | undefined;
}

/** Input stored with an execution is capped; its digest always covers the whole. */
export const STORED_INPUT_MAX_CHARS = 16 * 1024;

const NOOP = (): void => {};
const PROCESS_TAG = randomBytes(3).toString('hex');
let counter = 0;

/**
 * Execution ids grow with time (ms in base 36, then a per-process counter and
 * tag), so that the rows and their indexes are appended to, never inserted in
 * the middle; they are unique across processes and restarts.
 */
export function newExecutionId(): string {
  counter = (counter + 1) % 0x1000000;
  return `ex_${Date.now().toString(36).padStart(9, '0')}${counter.toString(36).padStart(5, '0')}${PROCESS_TAG}`;
}

type Pending = ExecutionStart & Partial<ExecutionEnd> & { version: number };

export class ExecutionLog {
  private readonly upsert: Statement;
  private readonly byId: Statement<[string]>;
  private readonly byToolUse: Statement<[string, string]>;
  private readonly sessionToolUses: Statement<[string]>;
  private readonly interrupted: Statement<[number]>;
  private readonly interruptedRows: Statement<[]>;
  private pending = new Map<string, Pending>();
  private flushQueued = false;

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly onRowError: (id: string, e: unknown) => void = () => {},
  ) {
    this.upsert = db.prepare(
      `INSERT INTO executions (id, session_id, tool_use_id, tool, status, input_digest, input, actor, created_at,
         decision, error_class, is_error, result_id, result_block, hook_messages, timings, finished_at, duration_ms)
       VALUES (@id, @sessionId, @toolUseId, @tool, @status, @inputDigest, @input, @actor, @createdAt,
         @decision, @errorClass, @isError, @resultId, @resultBlock, @hookMessages, @timings, @finishedAt, @durationMs)
       ON CONFLICT(id) DO UPDATE SET tool = excluded.tool, status = excluded.status, decision = excluded.decision,
         error_class = excluded.error_class, is_error = excluded.is_error, result_id = excluded.result_id,
         result_block = excluded.result_block, hook_messages = excluded.hook_messages,
         timings = excluded.timings, finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
    );
    this.byId = db.prepare('SELECT * FROM executions WHERE id = ?');
    this.byToolUse = db.prepare('SELECT * FROM executions WHERE session_id = ? AND tool_use_id = ? ORDER BY seq LIMIT 1');
    this.sessionToolUses = db.prepare('SELECT tool_use_id, id FROM executions WHERE session_id = ? ORDER BY seq');
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
    this.pending.set(s.id, { ...s, input, version: 0 });
    this.queueFlush();
  }

  /** Completes the row; resolves when it is committed. */
  finish(e: ExecutionEnd): Promise<void> {
    const p = this.pending.get(e.id);
    if (p) {
      Object.assign(p, e);
      p.version += 1;
    } else {
      // Already written as started: the upsert completes it.
      const row = this.get(e.id);
      if (!row) return Promise.reject(new Error(`execution ${e.id} was never started`));
      this.pending.set(e.id, {
        ...e,
        sessionId: row.session_id,
        toolUseId: row.tool_use_id,
        inputDigest: row.input_digest,
        input: row.input ?? '',
        actor: row.actor,
        createdAt: row.created_at,
        version: 1,
      });
    }
    this.queueFlush();
    // Resolves with the commit that holds the queued flush (queued before this).
    return this.writer.write(NOOP);
  }

  private queueFlush(): void {
    if (!this.flushQueued) {
      this.flushQueued = true;
      this.writer.writeLater(this.flushPending);
    }
  }

  /**
   * Writes every pending row once (inside a group commit). Rows leave the
   * pending set only after the commit, and only if not changed since, so a
   * failed transaction loses nothing.
   */
  private readonly flushPending = (): (() => void) | undefined => {
    this.flushQueued = false;
    if (this.pending.size === 0) return undefined;
    const written: Array<[string, number]> = [];
    for (const r of this.pending.values()) {
      try {
        this.upsert.run({
          id: r.id,
          sessionId: r.sessionId,
          toolUseId: r.toolUseId,
          tool: r.tool,
          status: r.status,
          inputDigest: r.inputDigest,
          input: r.input,
          actor: r.actor,
          createdAt: r.createdAt,
          decision: r.decision ?? null,
          errorClass: r.errorClass ?? null,
          isError: r.isError ? 1 : 0,
          resultId: r.resultId ?? null,
          resultBlock: r.resultBlock ?? null,
          hookMessages: r.hookMessages ?? null,
          timings: r.timings ?? null,
          finishedAt: r.finishedAt ?? null,
          durationMs: r.durationMs ?? null,
        });
      } catch (e) {
        // One bad row must not take the others down: only its statement rolled back.
        this.onRowError(r.id, e);
      }
      written.push([r.id, r.version]);
    }
    return () => {
      for (const [id, v] of written) if (this.pending.get(id)?.version === v) this.pending.delete(id);
    };
  };

  get(id: string): ExecutionRow | undefined {
    return this.byId.get(id) as ExecutionRow | undefined;
  }

  /** The first execution of a tool use in a session (not on the hot path: sessions keep a map). */
  findByToolUse(sessionId: string, toolUseId: string): ExecutionRow | undefined {
    return this.byToolUse.get(sessionId, toolUseId) as ExecutionRow | undefined;
  }

  /** tool_use id → execution id for a session, oldest first (loads a session's idempotency map). */
  toolUsesOf(sessionId: string): Array<{ tool_use_id: string; id: string }> {
    return this.sessionToolUses.all(sessionId) as Array<{ tool_use_id: string; id: string }>;
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
    if (f.beforeSeq !== undefined) {
      where.push('seq < ?');
      params.push(f.beforeSeq);
    }
    const sql = `SELECT * FROM executions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
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
