/**
 * Sessions are created on first use, kept in memory (least recently used
 * first out, never one with calls running) and persisted to SQLite, so that a
 * restart keeps each session's mode, working directory and todo list. The
 * FileStateCache is memory only: after a restart or an eviction, Edit asks for
 * a new Read, which is the safe direction.
 */
import type { Statement } from 'better-sqlite3';
import { PermissionMode } from '../config/schema.js';
import { FILE_STATE_GLOBAL_MAX_BYTES, FileStateBudget } from '../file-state/cache.js';
import type { Db, GroupCommitWriter } from '../storage/db.js';
import { Session, type SessionRecord } from './session.js';
import { ToolUseIndex } from './tool-use-index.js';

export const MAX_SESSIONS_IN_MEMORY = 1000;

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
  private readonly getRow: Statement<[string]>;
  private readonly upsert: Statement<[string, string, string, string, number, number]>;

  constructor(
    db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly defaults: { mode: PermissionMode; cwd: string; allowBypass: boolean },
    /** Loads a session's tool_use ids (idempotency) when it comes back into memory. */
    private readonly loadToolUses: (sessionId: string) => Iterable<{ tool_use_id: string; id: string }> = () => [],
    private readonly maxInMemory = MAX_SESSIONS_IN_MEMORY,
    /** Shared by every session's FileStateCache. */
    private readonly budget = new FileStateBudget(FILE_STATE_GLOBAL_MAX_BYTES),
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
      this.upsert.run(r.id, r.mode, r.cwd, JSON.stringify(r.todos), r.created_at, r.updated_at);
      s.clean();
    });
  };

  /** The session, created with the defaults when it does not exist yet. */
  get(id: string): Session {
    const hit = this.live.get(id);
    if (hit) {
      this.live.delete(id);
      this.live.set(id, hit);
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
    this.evict();
    return s;
  }

  private toolUseMap(id: string): ToolUseIndex {
    const m = new ToolUseIndex();
    for (const r of this.loadToolUses(id)) m.set(r.tool_use_id, r.id);
    return m;
  }

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
      if (s.active > 0) continue;
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
