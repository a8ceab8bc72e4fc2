/**
 * A session's tool_use id → execution id map, for idempotency (contract §5:
 * a repeated `(session_id, tool_use id)` is never run twice), in bounded
 * memory. The last `recentMax` ids are kept whole; older ones only as a 32-bit
 * hash in an open-addressing table (4 bytes each, against ~150 for a Map
 * entry with its two strings). A miss in both means a new id, as before, with
 * no database read; a hash hit sends the caller to the database
 * (`ExecutionLog.findByToolUse`), which settles it (a true replay, or a hash
 * collision, about one new id in 4 billion per old one).
 */
export const RECENT_TOOL_USES = 4096;

/** FNV-1a over the UTF-16 code units; never 0 (0 marks an empty slot). */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

export class ToolUseIndex {
  /**
   * False while a long history is still being read into the index, a chunk
   * per turn of the event loop (SessionStore): until then a new id cannot be
   * told from an old one, and the session's calls wait for `whenLoaded`.
   */
  loaded = true;
  whenLoaded: Promise<void> = Promise.resolve();
  private readonly recent = new Map<string, string>();
  /**
   * The ids of `recent` in the order they came, as a ring once full (`head`
   * is the oldest): the oldest was found with recent.keys().next(), which
   * steps over every entry deleted since the Map's last rehash (up to a few
   * thousand holes in a full index), 1.4 µs of every new call of a long
   * session against 0.1 µs now.
   */
  private readonly order: string[] = [];
  private head = 0;
  private table = new Uint32Array(0);
  private older = 0;
  private evicted = 0;

  constructor(private readonly recentMax = RECENT_TOOL_USES) {}

  /** How many tool uses the session has had. */
  get size(): number {
    return this.recent.size + this.evicted;
  }

  /** The execution id of a recent tool use. */
  get(toolUseId: string): string | undefined {
    return this.recent.get(toolUseId);
  }

  /** Whether an older tool use may have had this id (ask the database). */
  mayBeOlder(toolUseId: string): boolean {
    if (this.older === 0) return false;
    const t = this.table;
    const mask = t.length - 1;
    const h = hash(toolUseId);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      if (t[i] === 0) return false;
      if (t[i] === h) return true;
    }
  }

  /** Records a tool use (the first execution of an id wins). */
  set(toolUseId: string, executionId: string): void {
    if (this.recent.has(toolUseId)) return;
    this.recent.set(toolUseId, executionId);
    if (this.recent.size <= this.recentMax) {
      this.order.push(toolUseId);
      return;
    }
    // Full: the oldest leaves, and the new id takes its place in the ring (with no room at all, the new id leaves).
    let oldest = toolUseId;
    if (this.recentMax > 0) {
      oldest = this.order[this.head]!;
      this.order[this.head] = toolUseId;
      this.head = this.head + 1 === this.recentMax ? 0 : this.head + 1;
    }
    this.recent.delete(oldest);
    this.evicted++;
    this.addOlder(hash(oldest));
  }

  private addOlder(h: number): void {
    // At most half full, so probes stay short and an empty slot always ends one.
    if ((this.older + 1) * 2 > this.table.length) this.grow();
    const t = this.table;
    const mask = t.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      if (t[i] === h) return; // the same hash is already there: nothing to add
      if (t[i] === 0) {
        t[i] = h;
        this.older++;
        return;
      }
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(Math.max(1024, old.length * 2));
    this.older = 0;
    for (const h of old) if (h !== 0) this.addOlder(h);
  }
}
