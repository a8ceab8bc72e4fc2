/**
 * A session: the unit an agent works in. It holds the permission mode, the
 * working directory Bash persists, the FileStateCache, TodoWrite's list, the
 * rules remembered for the session, and the auto-mode denial counters.
 */
import type { PermissionMode } from '../config/schema.js';
import { FileStateCache, type FileStateBudget } from '../file-state/cache.js';
import type { SessionView } from '../tool/types.js';
import { ToolUseIndex } from './tool-use-index.js';

export interface SessionRecord {
  id: string;
  mode: PermissionMode;
  cwd: string;
  todos: unknown[];
  created_at: number;
  updated_at: number;
}

export class Session implements SessionView {
  readonly id: string;
  mode: PermissionMode;
  cwd: string;
  todos: unknown[];
  readonly fileState: FileStateCache;
  readonly createdAt: number;
  updatedAt: number;
  /** Auto mode: classifier denials in a row and in all. */
  classifierDenials = { consecutive: 0, total: 0 };
  /** Calls running now (a session is never evicted while it has some). */
  active = 0;
  /**
   * tool_use id → execution id of every call of this session: idempotency is
   * checked here, not through a database index (see storage/migrations.ts).
   */
  readonly toolUses: ToolUseIndex;
  private dirty = false;

  constructor(
    rec: SessionRecord,
    private readonly onTouch: (s: Session) => void,
    toolUses: ToolUseIndex = new ToolUseIndex(),
    budget: FileStateBudget | undefined = undefined,
  ) {
    this.fileState = new FileStateCache(undefined, undefined, budget);
    this.toolUses = toolUses;
    this.id = rec.id;
    this.mode = rec.mode;
    this.cwd = rec.cwd;
    this.todos = rec.todos;
    this.createdAt = rec.created_at;
    this.updatedAt = rec.updated_at;
  }

  touch(): void {
    this.updatedAt = Date.now();
    if (!this.dirty) {
      this.dirty = true;
      this.onTouch(this);
    }
  }

  /** Called by the store once the change is written. */
  clean(): void {
    this.dirty = false;
  }

  toRecord(): SessionRecord {
    return {
      id: this.id,
      mode: this.mode,
      cwd: this.cwd,
      todos: this.todos,
      created_at: this.createdAt,
      updated_at: this.updatedAt,
    };
  }
}
