/**
 * What a session has read (contract §7): per file, the content, its
 * modification time (floored to ms) and whether the read was partial. A bounded
 * LRU, like Claude Code's READ_FILE_STATE_CACHE (100 entries, 25 MB of content).
 * Edit and Write consult it to refuse files not read or changed since.
 *
 * The file tools key entries by the file's canonical path (`fileStateKey`),
 * so a read through a symlink or another spelling counts for the file itself.
 */
import path from 'node:path';
import type { Workspace } from '../workspace.js';

/** The key the file tools use: the canonical path (symlinks followed, Unicode and case folded). */
export function fileStateKey(workspace: Workspace, absPath: string): string {
  return workspace.canonical(absPath);
}

export interface FileState {
  content: string;
  /** floor(mtimeMs) at the time of the read. */
  timestamp: number;
  offset: number | undefined;
  limit: number | undefined;
  isPartialView: boolean;
  /**
   * The identity (device and inode) of the file read or written, when known. The key is a folded
   * path: two files whose names differ only in Unicode normalisation (or case, on a case-sensitive
   * directory of a folding volume) share one, and a file moved over a name keeps its older mtime.
   * Without it, a Write creating `cle\u0301.env` counted as a read of the Read-denied `cl\u00e9.env`
   * beside it, and Edit then showed that file's lines in its snippet.
   */
  identity?: string | undefined;
}

/** How a cached read relates to the file on disk now. */
export type Freshness = 'unread' | 'partial' | 'stale' | 'fresh';

/**
 * Claude Code's checks: no entry, or a partial view → unread/partial; a
 * modification time after the read → stale, unless `contentFallback` is on,
 * the read was complete (no offset/limit) and the content is unchanged
 * (Edit's fallback for file systems that touch mtimes without writing).
 * The mtime counts only for the file read: another file now under the name
 * (`identity` differs) is stale, whatever its mtime, unless its content is the one read.
 */
export function freshness(
  state: FileState | undefined,
  mtimeMs: number,
  currentContent: string | undefined,
  contentFallback: boolean,
  identity?: string,
): Freshness {
  if (!state) return 'unread';
  if (state.isPartialView) return 'partial';
  const sameFile = state.identity === undefined || identity === undefined || state.identity === identity;
  if (sameFile && Math.floor(mtimeMs) <= state.timestamp) return 'fresh';
  const fullRead = state.offset === undefined && state.limit === undefined;
  if (contentFallback && fullRead && currentContent !== undefined && currentContent === state.content) return 'fresh';
  return 'stale';
}

export const FILE_STATE_MAX_ENTRIES = 100;
export const FILE_STATE_MAX_BYTES = 25 * 1024 * 1024;

/**
 * A byte budget shared by every session's cache: sessions come and go, and
 * 25 MB each must not add up without bound. A cache that pushes the total
 * past the budget gives up its own oldest entries (an active session pays
 * for what it reads; others keep theirs).
 */
export class FileStateBudget {
  bytes = 0;
  constructor(readonly maxBytes: number) {}
}

/** The default shared budget: 256 MB of remembered file content in all. */
export const FILE_STATE_GLOBAL_MAX_BYTES = 256 * 1024 * 1024;

export class FileStateCache {
  private readonly map = new Map<string, { state: FileState; bytes: number }>();
  private bytes = 0;

  constructor(
    readonly maxEntries = FILE_STATE_MAX_ENTRIES,
    readonly maxBytes = FILE_STATE_MAX_BYTES,
    private readonly budget: FileStateBudget | undefined = undefined,
  ) {}

  private account(delta: number): void {
    this.bytes += delta;
    if (this.budget) this.budget.bytes += delta;
  }

  /** Gives every entry up (the session leaves memory): the shared budget gets its bytes back. */
  clear(): void {
    this.account(-this.bytes);
    this.map.clear();
  }

  private static key(p: string): string {
    return path.normalize(p);
  }

  get(p: string): FileState | undefined {
    const k = FileStateCache.key(p);
    const hit = this.map.get(k);
    if (!hit) return undefined;
    // Refresh recency: Map iteration order is insertion order.
    this.map.delete(k);
    this.map.set(k, hit);
    return hit.state;
  }

  has(p: string): boolean {
    return this.map.has(FileStateCache.key(p));
  }

  set(p: string, state: FileState): void {
    const k = FileStateCache.key(p);
    const old = this.map.get(k);
    if (old) {
      this.account(-old.bytes);
      this.map.delete(k);
    }
    const bytes = Buffer.byteLength(state.content, 'utf8');
    // An entry larger than the whole budget is not kept: Edit will ask for a new read.
    if (bytes > this.maxBytes || (this.budget && bytes > this.budget.maxBytes)) return;
    this.map.set(k, { state, bytes });
    this.account(bytes);
    this.evict();
  }

  delete(p: string): void {
    const k = FileStateCache.key(p);
    const old = this.map.get(k);
    if (!old) return;
    this.account(-old.bytes);
    this.map.delete(k);
  }

  private evict(): void {
    const over = (): boolean =>
      this.map.size > this.maxEntries || this.bytes > this.maxBytes || (this.budget !== undefined && this.budget.bytes > this.budget.maxBytes);
    while (over()) {
      const oldest = this.map.keys().next();
      if (oldest.done) return;
      const e = this.map.get(oldest.value);
      if (e) this.account(-e.bytes);
      this.map.delete(oldest.value);
    }
  }

  get size(): number {
    return this.map.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  keys(): string[] {
    return [...this.map.keys()];
  }
}
