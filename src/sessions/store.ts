/**
 * Sessions are created on first use, kept in memory (least recently used
 * first out, never one with calls running) and persisted to SQLite, so that a
 * restart keeps each session's mode, working directory and todo list. The
 * FileStateCache is memory only: after a restart or an eviction, Edit asks for
 * a new Read, which is the safe direction.
 */
import { maskValue } from '../observability/logging.js';
import type { Statement } from 'better-sqlite3';
import { PermissionMode } from '../config/schema.js';
import { FILE_STATE_GLOBAL_MAX_BYTES, FileStateBudget } from '../file-state/cache.js';
import { ToolexecError } from '../errors.js';
import type { Db, GroupCommitWriter } from '../storage/db.js';
import { Session, type SessionRecord } from './session.js';
import { ToolUseIndex } from './tool-use-index.js';

export const MAX_SESSIONS_IN_MEMORY = 1000;

/**
 * Rows of a session's history read into its idempotency index per turn of
 * the event loop. Read whole, 500,000 rows held the event loop for 1.8 s at
 * the session's first call after a start (or after it was evicted): every
 * other session's requests waited too. A chunk is a few ms.
 */
export const TOOL_USE_LOAD_ROWS = 2000;

/** A page of a session's tool uses, oldest first, after the row `afterSeq`. */
export type ToolUsePage = (sessionId: string, afterSeq: number, limit: number) => Array<{ seq: number; tool_use_id: string; id: string }>;

interface Row {
  id: string;
  mode: string;
  cwd: string;
  todos: string;
  created_at: number;
  updated_at: number;
}

export class SessionStore {
  private readonly live = new Map<string, Session>();
  /**
   * The session last put at the end of `live`: getting it again moves
   * nothing (a Map delete and set per call measured 0.3 µs). Only new
   * objects are added to `live`, so one that left it never comes back as this.
   */
  private newest: Session | undefined;
  /**
   * Indexes being read, one chunk of one of them per turn, in turn: fifty
   * long sessions resumed at once after a restart then cost a turn what one
   * does, not fifty chunks.
   */
  private readonly loading: Array<() => boolean> = [];
  private readonly getRow: Statement<[string]>;
  private readonly upsert: Statement<[string, string, string, string, number, number]>;

  constructor(
    db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly defaults: { mode: PermissionMode; cwd: string; allowBypass: boolean },
    /** Reads a session's tool_use ids (idempotency) when it comes back into memory. */
    private readonly loadToolUses: ToolUsePage = () => [],
    private readonly maxInMemory = MAX_SESSIONS_IN_MEMORY,
    /** Shared by every session's FileStateCache. */
    private readonly budget = new FileStateBudget(FILE_STATE_GLOBAL_MAX_BYTES),
    /**
     * A session's calls whose rows are not written yet (held while the
     * database refuses writes; ExecutionLog.heldOf): read into the index
     * after its rows, or a session evicted meanwhile and made again ran a
     * repeat of such a call a second time.
     */
    private readonly heldToolUses: (sessionId: string) => Iterable<{ tool_use_id: string; id: string }> = () => [],
    /** Masks the service's secrets (pipeline/mask.ts) in the todo list as stored: the model's text, but no place for a token. */
    private readonly mask?: ((text: string) => string) | undefined,
  ) {
    this.getRow = db.prepare('SELECT * FROM sessions WHERE id = ?');
    this.upsert = db.prepare(
      `INSERT INTO sessions (id, mode, cwd, todos, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET mode = excluded.mode, cwd = excluded.cwd, todos = excluded.todos, updated_at = excluded.updated_at`,
    );
  }

  private readonly persist = (s: Session): void => {
    this.writer.writeLater(() => {
      const r = s.toRecord();
      this.upsert.run(r.id, r.mode, r.cwd, JSON.stringify(this.mask ? maskValue(r.todos, this.mask) : r.todos), r.created_at, r.updated_at);
      s.clean();
    });
  };

  /** The session, created with the defaults when it does not exist yet. */
  get(id: string): Session {
    const hit = this.live.get(id);
    if (hit) {
      // Moved to the end (the most recently used) unless it is there already: a client's calls come in one session.
      if (hit !== this.newest) {
        this.live.delete(id);
        this.live.set(id, hit);
        this.newest = hit;
      }
      return hit;
    }
    return this.load(id, this.getRow.get(id) as Row | undefined);
  }

  /** A mode the configuration allows now: a session stored in bypass mode comes back in the default one when bypass is no longer allowed. */
  private allowedMode(stored: string): { mode: PermissionMode; changed: boolean } {
    const known = PermissionMode.safeParse(stored);
    if (!known.success) return { mode: this.defaults.mode, changed: true };
    if (known.data === 'bypassPermissions' && !this.defaults.allowBypass) return { mode: this.defaults.mode, changed: true };
    return { mode: known.data, changed: false };
  }

  private load(id: string, row: Row | undefined): Session {
    let s: Session;
    if (row) {
      const { mode, changed } = this.allowedMode(row.mode);
      s = new Session(
        {
          id: row.id,
          mode,
          cwd: row.cwd,
          todos: safeJsonArray(row.todos),
          created_at: row.created_at,
          updated_at: row.updated_at,
        },
        this.persist,
        this.toolUseMap(row.id),
        this.budget,
      );
      if (changed) s.touch();
    } else {
      const now = Date.now();
      const rec: SessionRecord = {
        id,
        mode: this.defaults.mode,
        cwd: this.defaults.cwd,
        todos: [],
        created_at: now,
        updated_at: now,
      };
      // A session unknown to the sessions table may still have calls (its row is written behind).
      s = new Session(rec, this.persist, this.toolUseMap(id), this.budget);
      s.touch();
    }
    this.live.set(id, s);
    this.newest = s;
    this.evict();
    return s;
  }

  /**
   * The session with its idempotency index complete: a session whose history
   * is still being read (a chunk per turn) is waited for, while other
   * sessions are served. The executor needs this before it starts a call.
   */
  async ready(id: string): Promise<Session> {
    for (;;) {
      const s = this.get(id);
      if (s.toolUses.loaded) return s;
      try {
        await s.toolUses.whenLoaded;
      } catch (e) {
        // Read afresh at the next call.
        if (this.live.get(id) === s) this.live.delete(id);
        throw new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `The history of session ${id} could not be read: ${(e as Error).message}`);
      }
      // Evicted meanwhile (the index then reads again): look again.
    }
  }

  /**
   * A session's index, from its rows in the database: a short history at
   * once (one query, as for a new session), a long one a chunk per turn of
   * the event loop (`loaded` false until then).
   */
  private toolUseMap(id: string): ToolUseIndex {
    const m = new ToolUseIndex();
    let after = 0;
    const chunk = (): boolean => {
      const rows = this.loadToolUses(id, after, TOOL_USE_LOAD_ROWS);
      for (const r of rows) m.set(r.tool_use_id, r.id);
      if (rows.length < TOOL_USE_LOAD_ROWS) {
        // The newest last: rows still waiting to be written (a row written meanwhile is set once).
        for (const r of this.heldToolUses(id)) m.set(r.tool_use_id, r.id);
        return true;
      }
      after = rows[rows.length - 1]!.seq;
      return false;
    };
    if (chunk()) return m;
    m.loaded = false;
    m.whenLoaded = new Promise<void>((resolve, reject) => {
      // True once this index is done with (read whole, or failed).
      this.loading.push(() => {
        try {
          if (!chunk()) return false;
          m.loaded = true;
          resolve();
        } catch (e) {
          reject(e);
        }
        return true;
      });
      if (this.loading.length === 1) setImmediate(this.pump);
    });
    // Nobody may be waiting (a GET of the session's mode): the failure is reported to those who are.
    m.whenLoaded.catch(() => {});
    return m;
  }

  /** One chunk of the index first in line, which then goes to the back of the line (or out, once read). */
  private readonly pump = (): void => {
    const next = this.loading.shift();
    if (next === undefined) return;
    if (!next()) this.loading.push(next);
    if (this.loading.length > 0) setImmediate(this.pump);
  };

  /** A session with the defaults that is neither kept nor persisted (dry runs). */
  ephemeral(id: string): Session {
    const now = Date.now();
    return new Session({ id, mode: this.defaults.mode, cwd: this.defaults.cwd, todos: [], created_at: now, updated_at: now }, () => {});
  }

  /** The session if it was ever used, without creating it. */
  find(id: string): Session | undefined {
    if (this.live.has(id)) return this.get(id);
    const row = this.getRow.get(id) as Row | undefined;
    return row ? this.load(id, row) : undefined;
  }

  private evict(): void {
    if (this.live.size <= this.maxInMemory) return;
    for (const [id, s] of this.live) {
      if (this.live.size <= this.maxInMemory) return;
      // Nor one whose history is being read: its calls wait for it, and a read started again would make them wait longer.
      if (s.active > 0 || !s.toolUses.loaded) continue;
      this.live.delete(id);
      // Its remembered file content no longer counts against the shared budget.
      s.fileState.clear();
    }
  }

  get size(): number {
    return this.live.size;
  }
}

function safeJsonArray(s: string): unknown[] {
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}
