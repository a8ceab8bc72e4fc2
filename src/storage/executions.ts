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
import { MultiRowWriter, NOOP_OP, type Db, type GroupCommitWriter } from './db.js';
import type { ToolResultBlock } from '../tool/types.js';

export interface ExecutionRow {
  seq: number;
  id: string;
  session_id: string;
  tool_use_id: string;
  tool: string;
  status: string;
  input_digest: string;
  input: string | null;
  /**
   * For an input stored cut or masked, the digest of its JSON with keys
   * sorted: a retry whose keys come back in another order (a conversation
   * kept in a database that sorts them) is still the same call, which
   * input_digest, of the JSON as sent, cannot tell. Null for an input shorter
   * than STORED_INPUT_MAX_CHARS stored as sent.
   */
  input_key: string | null;
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

/**
 * The tool_result block a row stores, or undefined when it holds none that
 * can be answered (no block, not JSON, or not a block's shape: a damaged or
 * hand-edited row). Read as it was, a block whose content was a number or
 * an object made a replay of the call, and GET /executions/:id, answer 500.
 */
export function storedBlock(r: Pick<ExecutionRow, 'result_block'>): ToolResultBlock | undefined {
  if (r.result_block === null) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(r.result_block);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const b = v as { type?: unknown; tool_use_id?: unknown; content?: unknown };
  if (b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') return undefined;
  const c = b.content;
  const blocks = Array.isArray(c) && c.every((x) => typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string' && ((x as { type: string }).type !== 'text' || typeof (x as { text?: unknown }).text === 'string'));
  return typeof c === 'string' || blocks ? (v as ToolResultBlock) : undefined;
}

export interface ExecutionStart {
  id: string;
  sessionId: string;
  toolUseId: string;
  tool: string;
  status: string;
  inputDigest: string;
  input: string;
  /**
   * The digest of the input's keys-sorted JSON, given when the input is STORED_INPUT_MAX_CHARS long or
   * longer (it may be stored cut) or is stored masked (pipeline/mask.ts): a retry is compared by it.
   */
  inputKey?: string | undefined;
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

/**
 * Rows one page of GET /executions examines at most when it filters on a
 * column no index leads with (status, tool): see AUDIT_SCAN_ROWS
 * (storage/audit.ts) for why a bounded window rather than an index.
 */
export const EXECUTIONS_SCAN_ROWS = 20_000;

/** The seq scanRows rows below the cursor (the lower end of a page's window), and the one below it if any. */
export const EXECUTIONS_FLOOR_SQL = 'SELECT seq FROM executions WHERE seq < ? ORDER BY seq DESC LIMIT 2 OFFSET ?';
export const EXECUTIONS_SESSION_FLOOR_SQL = 'SELECT seq FROM executions WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT 2 OFFSET ?';

export interface ExecutionPage {
  rows: ExecutionRow[];
  /** Where the next page starts (rows with seq below it), or undefined after the last one. */
  next: number | undefined;
}

/** The SELECT behind a page (exported for the tests that check its query plan). */
export function executionsSelect(f: ListFilter & { atLeastSeq?: number | undefined }): { sql: string; params: unknown[] } {
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
  if (f.atLeastSeq !== undefined) {
    where.push('seq >= ?');
    params.push(f.atLeastSeq);
  }
  // Newest first along the key, or along executions_session for a session.
  const from = f.sessionId !== undefined ? 'executions INDEXED BY executions_session' : 'executions NOT INDEXED';
  params.push(f.limit);
  return { sql: `SELECT * FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`, params };
}

/** Input stored with an execution is capped; its digest always covers the whole. */
export const STORED_INPUT_MAX_CHARS = 16 * 1024;

/**
 * Whether an input's JSON (as sent, or as stored) may be stored cut: such an input is recorded with
 * its input key (pipeline/digest.ts inputKey), and a retry is compared by that key, not by value.
 */
export function inputMayBeCut(json: string): boolean {
  return json.length >= STORED_INPUT_MAX_CHARS;
}


const COLUMNS = 20;

function upsertSql(rows: number): string {
  const row = `(${new Array<string>(COLUMNS).fill('?').join(', ')})`;
  return `INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, input, actor, created_at,
         decision, error_class, is_error, result_id, result_block, hook_messages, timings, finished_at, duration_ms, input_key)
       VALUES ${new Array<string>(rows).fill(row).join(', ')}
       ON CONFLICT(seq) DO UPDATE SET tool = excluded.tool, status = excluded.status, decision = excluded.decision,
         error_class = excluded.error_class, is_error = excluded.is_error, result_id = excluded.result_id,
         result_block = excluded.result_block, hook_messages = excluded.hook_messages,
         timings = excluded.timings, finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`;
}

function bindRow(p: unknown[], i: number, r: Pending): void {
  p[i] = r.seq;
  p[i + 1] = r.id;
  p[i + 2] = r.sessionId;
  p[i + 3] = r.toolUseId;
  p[i + 4] = r.tool;
  p[i + 5] = r.status;
  p[i + 6] = r.inputDigest;
  p[i + 7] = r.input;
  p[i + 8] = r.actor;
  p[i + 9] = r.createdAt;
  p[i + 10] = r.decision ?? (r.decisionLater ? r.decisionLater() : null);
  p[i + 11] = r.errorClass;
  p[i + 12] = r.isError;
  p[i + 13] = r.resultId;
  p[i + 14] = r.resultBlock;
  p[i + 15] = r.hookMessages;
  p[i + 16] = r.timings;
  p[i + 17] = r.finishedAt;
  p[i + 18] = r.durationMs;
  p[i + 19] = r.inputKey;
}

/** Characters of base 36 for seq in an id: 36^11 rows is enough. */
const SEQ_DIGITS = 11;

/** The row number an execution id carries, or undefined for an id this service did not issue. */
export function seqOfId(id: string): number | undefined {
  if (!/^ex_[0-9a-z]{11}[A-Za-z0-9_-]{8}$/.test(id)) return undefined;
  const n = parseInt(id.slice(3, 3 + SEQ_DIGITS), 36);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * A row waiting for the next group commit. A class with every field set in
 * the constructor keeps one hidden class: copying the end fields onto a
 * spread object with Object.assign measured at 16 µs per call.
 */
/** The key of the queued write that flushes the pending rows (GroupCommitWriter.isQueued). */
const FLUSH_KEY = 'executions';

class Pending {
  tool: string;
  status: string;
  decision: string | null = null;
  /** The decision of a call still running, serialised only if the row is written before the call ends. */
  decisionLater: (() => string) | null = null;
  errorClass: string | null = null;
  isError = 0;
  resultId: string | null = null;
  resultBlock: string | null = null;
  hookMessages: string | null = null;
  timings: string | null = null;
  finishedAt: number | null = null;
  durationMs: number | null = null;
  version = 0;
  readonly seq: number;
  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly toolUseId: string,
    readonly inputDigest: string,
    readonly input: string,
    readonly inputKey: string | null,
    readonly actor: string | null,
    readonly createdAt: number,
    tool: string,
    status: string,
    seq: number,
  ) {
    this.tool = tool;
    this.status = status;
    this.seq = seq;
  }

  end(e: ExecutionEnd): void {
    this.tool = e.tool;
    this.status = e.status;
    this.decision = e.decision;
    this.errorClass = e.errorClass;
    this.isError = e.isError ? 1 : 0;
    this.resultId = e.resultId;
    this.resultBlock = e.resultBlock;
    this.hookMessages = e.hookMessages;
    this.timings = e.timings;
    this.finishedAt = e.finishedAt;
    this.durationMs = e.durationMs;
    this.version += 1;
  }
}

export class ExecutionLog {
  private readonly rows: MultiRowWriter<Pending>;
  private readonly bySeq: Statement<[number]>;
  private nextSeq: number;
  private readonly tag = randomBytes(6).toString('base64url');
  /** The id newId issued last, and its row number. */
  private issuedId: string | undefined = undefined;
  private issuedSeq = 0;
  private readonly byToolUse: Statement<[string, string]>;
  private readonly sessionToolUses: Statement<[string, number, number]>;
  private readonly interrupted: Statement<[number]>;
  private readonly interruptedRows: Statement<[]>;
  private readonly setDecision: Statement<[string, number]>;
  private readonly floor: Statement<[number, number]>;
  private readonly floorInSession: Statement<[string, number, number]>;
  private pending = new Map<string, Pending>();
  /** Calls started here and not finished yet: the writes that could still join a commit. */
  private readonly open = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly onRowError: (id: string, e: unknown) => void = () => {},
  ) {
    // Positional parameters: binding a named-parameter object per row costs more.
    // A bad row (a constraint) must not take the others down: only its
    // statement rolled back. Anything else means the database is not taking
    // writes: the whole commit fails and the rows stay pending.
    this.rows = new MultiRowWriter<Pending>(db, upsertSql, COLUMNS, bindRow, (r, e) => this.onRowError(r.id, e));
    this.bySeq = db.prepare('SELECT * FROM executions WHERE seq = ?');
    this.floor = db.prepare(EXECUTIONS_FLOOR_SQL);
    this.floorInSession = db.prepare(EXECUTIONS_SESSION_FLOOR_SQL);
    const max = db.prepare('SELECT MAX(seq) AS m FROM executions').get() as { m: number | null };
    this.nextSeq = (max.m ?? 0) + 1;
    this.byToolUse = db.prepare('SELECT * FROM executions WHERE session_id = ? AND tool_use_id = ? ORDER BY seq LIMIT 1');
    this.sessionToolUses = db.prepare('SELECT seq, tool_use_id, id FROM executions WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?');
    // By seq, the primary key: the id has no index of its own.
    this.setDecision = db.prepare('UPDATE executions SET decision = ? WHERE seq = ? AND finished_at IS NULL');
    this.interruptedRows = db.prepare(
      `SELECT * FROM executions WHERE finished_at IS NULL AND status IN ('queued','validating','awaiting_permission','running')`,
    );
    this.interrupted = db.prepare(
      `UPDATE executions SET status = 'cancelled', error_class = 'cancelled', is_error = 1, finished_at = ?,
         result_block = json_object('type','tool_result','tool_use_id',tool_use_id,'content','<tool_use_error>The call was interrupted: toolexec restarted before it finished.</tool_use_error>','is_error',json('true'))
       WHERE finished_at IS NULL AND status IN ('queued','validating','awaiting_permission','running')`,
    );
  }

  start(s: ExecutionStart): void {
    const input = s.input.length > STORED_INPUT_MAX_CHARS ? s.input.slice(0, STORED_INPUT_MAX_CHARS) : s.input;
    this.open.add(s.id);
    this.pending.set(s.id, new Pending(s.id, s.sessionId, s.toolUseId, s.inputDigest, input, s.inputKey ?? null, s.actor, s.createdAt, s.tool, s.status, this.seqOf(s.id)));
    this.queueFlush();
  }

  /**
   * Whether the row of this execution is still waiting to be written (a call
   * that ran while the database refused writes). An id mapped by a session
   * but neither written nor held was pruned by retention.
   */
  isHeld(id: string): boolean {
    return this.pending.has(id);
  }

  /**
   * Records the permission decision of a call still running, with the audit
   * row that says the same: GET /executions lists it while the call runs, and
   * a call interrupted by a crash keeps it after the restart (recovery marks
   * the row cancelled and leaves the decision).
   */
  decide(id: string, decision: () => string): void {
    if (!this.open.has(id)) return;
    const p = this.pending.get(id);
    if (p) {
      // The row is queued: it carries the decision if it is written before the call ends (finish sets it anyway).
      p.decisionLater = decision;
      p.version += 1;
      this.queueFlush();
      return;
    }
    // Already written as started: set the decision unless the call has finished since.
    const seq = seqOfId(id);
    if (seq === undefined) return;
    this.writer.writeLater(() => {
      this.setDecision.run(decision(), seq);
    });
  }

  /** Completes the row; resolves when it is committed. */
  finish(e: ExecutionEnd): Promise<void> {
    this.open.delete(e.id);
    let p = this.pending.get(e.id);
    if (!p) {
      // Already written as started: the upsert completes it.
      const row = this.get(e.id);
      if (!row) return Promise.reject(new Error(`execution ${e.id} was never started`));
      p = new Pending(row.id, row.session_id, row.tool_use_id, row.input_digest, row.input ?? '', row.input_key, row.actor, row.created_at, e.tool, e.status, row.seq);
      this.pending.set(e.id, p);
    }
    p.end(e);
    this.queueFlush();
    // Resolves with the commit that holds the queued flush (queued before this).
    const committed = this.writer.write(NOOP_OP);
    // Every call started here now waits for this commit: nothing would join it by waiting out the window.
    if (this.open.size === 0) this.writer.expedite();
    return committed;
  }

  private queueFlush(): void {
    if (!this.writer.isQueued(FLUSH_KEY)) this.writer.writeLater(this.flushPending, FLUSH_KEY);
  }

  /**
   * Writes every pending row once (inside a group commit). Rows leave the
   * pending set only after the commit, and only if not changed since, so a
   * failed transaction loses nothing.
   */
  private readonly flushPending = (): (() => void) | undefined => {
    if (this.pending.size === 0) return undefined;
    const written: Array<[string, number]> = [];
    const rows: Pending[] = [];
    for (const r of this.pending.values()) {
      written.push([r.id, r.version]);
      rows.push(r);
    }
    this.rows.write(rows);
    return () => {
      for (const [id, v] of written) if (this.pending.get(id)?.version === v) this.pending.delete(id);
    };
  };

  /** The row number of an id: read straight from one this process issued (a regexp test per call measured 1% of a request). */
  private seqOf(id: string): number {
    // The id just issued (start follows newId): its number is known, not parsed back (0.2-0.3 µs a call).
    if (id === this.issuedId) return this.issuedSeq;
    if (id.length === 3 + SEQ_DIGITS + this.tag.length && id.endsWith(this.tag) && id.startsWith('ex_')) {
      const n = parseInt(id.slice(3, 3 + SEQ_DIGITS), 36);
      if (Number.isSafeInteger(n)) return n;
    }
    return seqOfId(id) ?? 0;
  }

  /**
   * A new execution id: `ex_` + the row number in base 36 + 8 characters
   * drawn once per process (so ids differ across databases and restarts;
   * drawing them per call cost 8% of the pipeline). Row numbers are handed
   * out here, so one process owns a database file.
   */
  newId(): string {
    const seq = this.nextSeq++;
    const id = `ex_${seq.toString(36).padStart(SEQ_DIGITS, '0')}${this.tag}`;
    this.issuedId = id;
    this.issuedSeq = seq;
    return id;
  }

  get(id: string): ExecutionRow | undefined {
    const seq = seqOfId(id);
    if (seq === undefined) return undefined;
    const row = this.bySeq.get(seq) as ExecutionRow | undefined;
    return row && row.id === id ? row : undefined;
  }

  /**
   * A session's executions whose rows are still waiting to be written, oldest
   * first: a few between two commits, every call since while the database
   * refuses writes. Read when a session comes back into memory (rare), so a
   * scan of the waiting rows.
   */
  heldOf(sessionId: string): Array<{ tool_use_id: string; id: string }> {
    const out: Array<{ tool_use_id: string; id: string }> = [];
    for (const p of this.pending.values()) if (p.sessionId === sessionId) out.push({ tool_use_id: p.toolUseId, id: p.id });
    return out;
  }

  /** The first execution of a tool use in a session (not on the hot path: sessions keep a map). */
  findByToolUse(sessionId: string, toolUseId: string): ExecutionRow | undefined {
    return this.byToolUse.get(sessionId, toolUseId) as ExecutionRow | undefined;
  }

  /**
   * tool_use id → execution id for a session, oldest first, a page after the
   * row `afterSeq` (loads a session's idempotency map through
   * executions_session). A page at a time: a long history loads into its
   * bounded index without every row of it held at once (500,000 rows were
   * +158 MB of RSS as one array), nor the event loop for all of it.
   */
  toolUsesOf(sessionId: string, afterSeq: number, limit: number): Array<{ seq: number; tool_use_id: string; id: string }> {
    return this.sessionToolUses.all(sessionId, afterSeq, limit) as Array<{ seq: number; tool_use_id: string; id: string }>;
  }

  list(f: ListFilter & { atLeastSeq?: number | undefined }): ExecutionRow[] {
    const { sql, params } = executionsSelect(f);
    return this.db.prepare(sql).all(...params) as ExecutionRow[];
  }

  /**
   * A page of rows, newest first, at most `f.limit`. A session's rows and
   * the unfiltered list are read straight from their index; a status or
   * tool filter is checked on a window of at most `scanRows` rows below the
   * cursor (its lower end found by stepping over that many index entries,
   * no filter evaluated), and the page ends there if it is not full.
   */
  page(f: ListFilter, scanRows = EXECUTIONS_SCAN_ROWS): ExecutionPage {
    if (f.status === undefined && f.tool === undefined) {
      const rows = this.list({ ...f, limit: f.limit + 1 });
      return rows.length > f.limit ? { rows: rows.slice(0, f.limit), next: rows[f.limit - 1]!.seq } : { rows, next: undefined };
    }
    const before = f.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const ends = (f.sessionId !== undefined ? this.floorInSession.all(f.sessionId, before, scanRows - 1) : this.floor.all(before, scanRows - 1)) as Array<{ seq: number }>;
    const floor = ends[0]?.seq;
    const rows = this.list({ ...f, atLeastSeq: floor, limit: f.limit + 1 });
    if (rows.length > f.limit) return { rows: rows.slice(0, f.limit), next: rows[f.limit - 1]!.seq };
    return { rows, next: floor !== undefined && ends.length === 2 ? floor : undefined };
  }

  /** At start-up: calls a previous process left unfinished are marked cancelled. */
  recoverInterrupted(): ExecutionRow[] {
    const rows = this.interruptedRows.all() as ExecutionRow[];
    if (rows.length > 0) this.interrupted.run(Date.now());
    return rows;
  }
}
