/**
 * Persisted large results (contract §6), stored in chunks so that neither
 * writing nor reading one ever holds it whole in memory. Each chunk records
 * the byte offset and line number it starts at, so a Range request or a Read
 * with `offset` seeks to the right chunk instead of scanning from the start.
 */
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../storage/db.js';
import { countNewlines, LineWindow } from '../file-state/text-file.js';

/** Characters per stored chunk: large enough that a 100 MB result is ~1,600 rows. */
export const CHUNK_CHARS = 64 * 1024;
/** Characters held back for the next write when masking: a secret longer than this could be split unseen. */
export const MASK_CARRY = 4096;

export interface ResultMeta {
  id: string;
  session_id: string;
  execution_id: string | null;
  tool: string;
  media_type: string;
  total_chars: number;
  total_bytes: number;
  total_lines: number;
  chunk_count: number;
  complete: number;
  created_at: number;
}

interface ChunkRow {
  seq: number;
  byte_start: number;
  line_start: number;
  data: string;
}

export function newResultId(): string {
  return `res_${randomBytes(12).toString('base64url')}`;
}

/** Writes one result chunk by chunk. */
export class ResultWriter {
  private buf = '';
  private seq = 0;
  private bytes = 0;
  private chars = 0;
  private lines = 0;
  private done = false;

  constructor(
    private readonly store: ResultStore,
    readonly id: string,
  ) {}

  write(text: string): void {
    if (this.done || text.length === 0) return;
    this.buf += text;
    const mask = this.store.mask;
    // Masked before it is stored, a whole chunk at a time and with MASK_CARRY
    // characters held back, so that a secret split between two writes is
    // seen whole.
    if (mask && this.buf.length >= CHUNK_CHARS + MASK_CARRY) this.buf = mask(this.buf);
    this.flushChunks(CHUNK_CHARS + (mask ? MASK_CARRY : 0));
  }

  /** Stores whole chunks while the buffer holds at least `atLeast` characters. */
  private flushChunks(atLeast: number): void {
    while (this.buf.length >= atLeast) {
      let cut = CHUNK_CHARS;
      // Never split a surrogate pair across chunks (byte offsets stay exact).
      const c = this.buf.charCodeAt(cut - 1);
      if (c >= 0xd800 && c <= 0xdbff) cut -= 1;
      this.flushChunk(this.buf.slice(0, cut));
      this.buf = this.buf.slice(cut);
    }
  }

  private flushChunk(data: string): void {
    this.store.insertChunk.run(this.id, this.seq, this.bytes, this.lines, data);
    this.chars += data.length;
    this.seq += 1;
    this.bytes += Buffer.byteLength(data, 'utf8');
    this.lines += countNewlines(data);
  }

  /** Stores the tail and marks the result complete. */
  finish(): ResultMeta {
    if (!this.done) {
      if (this.buf.length > 0 && this.store.mask) this.buf = this.store.mask(this.buf);
      this.flushChunks(CHUNK_CHARS + 1);
      if (this.buf.length > 0) this.flushChunk(this.buf);
      this.buf = '';
      this.done = true;
      this.store.completeResult.run(this.chars, this.bytes, this.lines, this.seq, this.id);
    }
    const meta = this.store.meta(this.id);
    if (!meta) throw new Error(`result ${this.id} vanished while being written`);
    return meta;
  }

  /** Drops a result that will never be completed. */
  abort(): void {
    this.done = true;
    this.buf = '';
    this.store.delete(this.id);
  }

  get totalChars(): number {
    return this.chars;
  }
}

export class ResultStore {
  readonly insertChunk: Statement<[string, number, number, number, string]>;
  readonly completeResult: Statement<[number, number, number, number, string]>;
  private readonly insertResult: Statement<[string, string, string | null, string, string, number]>;
  private readonly getMeta: Statement<[string]>;
  private readonly chunksFrom: Statement<[string, number]>;
  private readonly chunkForByte: Statement<[string, number]>;
  private readonly chunkForLine: Statement<[string, number]>;
  private readonly del: Statement<[string]>;

  /**
   * @param mask masks the service's secrets (its tokens, `server.redact`
   * values) in what is stored: a command that prints them (`ps e`, a file
   * that holds one) must not hand them to whoever reads the result.
   */
  constructor(
    private readonly db: Db,
    readonly mask?: ((text: string) => string) | undefined,
  ) {
    this.insertResult = db.prepare(
      'INSERT INTO results (id, session_id, execution_id, tool, media_type, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.insertChunk = db.prepare(
      'INSERT INTO result_chunks (result_id, seq, byte_start, line_start, data) VALUES (?, ?, ?, ?, ?)',
    );
    this.completeResult = db.prepare(
      'UPDATE results SET total_chars = ?, total_bytes = ?, total_lines = ?, chunk_count = ?, complete = 1 WHERE id = ?',
    );
    this.getMeta = db.prepare('SELECT * FROM results WHERE id = ?');
    this.chunksFrom = db.prepare(
      'SELECT seq, byte_start, line_start, data FROM result_chunks WHERE result_id = ? AND seq >= ? ORDER BY seq LIMIT 8',
    );
    this.chunkForByte = db.prepare(
      'SELECT seq FROM result_chunks WHERE result_id = ? AND byte_start <= ? ORDER BY seq DESC LIMIT 1',
    );
    this.chunkForLine = db.prepare(
      'SELECT seq FROM result_chunks WHERE result_id = ? AND line_start < ? ORDER BY seq DESC LIMIT 1',
    );
    this.del = db.prepare('DELETE FROM results WHERE id = ?');
  }

  create(opts: { sessionId: string; executionId?: string; tool: string; mediaType?: string }): ResultWriter {
    const id = newResultId();
    this.insertResult.run(
      id,
      opts.sessionId,
      opts.executionId ?? null,
      opts.tool,
      opts.mediaType ?? 'text/plain; charset=utf-8',
      Date.now(),
    );
    return new ResultWriter(this, id);
  }

  /** Stores a text that is already in memory. */
  put(opts: { sessionId: string; executionId?: string; tool: string }, text: string): ResultMeta {
    const w = this.create(opts);
    try {
      w.write(text);
      return w.finish();
    } catch (e) {
      w.abort();
      throw e;
    }
  }

  meta(id: string): ResultMeta | undefined {
    return this.getMeta.get(id) as ResultMeta | undefined;
  }

  exists(id: string): boolean {
    const m = this.meta(id);
    return m !== undefined && m.complete === 1;
  }

  delete(id: string): void {
    this.del.run(id);
  }

  /** Chunks in order from `seq`, fetched a few at a time. */
  *chunks(id: string, fromSeq = 0): Generator<ChunkRow> {
    let next = fromSeq;
    for (;;) {
      const rows = this.chunksFrom.all(id, next) as ChunkRow[];
      if (rows.length === 0) return;
      for (const r of rows) yield r;
      next = rows[rows.length - 1]!.seq + 1;
    }
  }

  /** UTF-8 bytes [start, end] inclusive, as Buffers, chunk by chunk. */
  *bytes(id: string, start = 0, end = Number.POSITIVE_INFINITY): Generator<Buffer> {
    const first = this.chunkForByte.get(id, start) as { seq: number } | undefined;
    for (const c of this.chunks(id, first?.seq ?? 0)) {
      const buf = Buffer.from(c.data, 'utf8');
      const cStart = c.byte_start;
      const cEnd = cStart + buf.length - 1;
      if (cEnd < start) continue;
      if (cStart > end) return;
      const from = Math.max(0, start - cStart);
      const to = Math.min(buf.length, end - cStart + 1);
      yield from === 0 && to === buf.length ? buf : buf.subarray(from, to);
    }
  }

  /**
   * Lines [offset, offset + limit) (0-based), reading only the chunks that hold
   * them. `totalLines` counts a last line without a newline. A line may span
   * many chunks (a command's output without newlines): reading starts at the
   * chunk where line `offset` starts, and past `maxChars` characters of lines
   * the read stops and says so (`overflow`), so that one huge line is never
   * gathered whole.
   */
  readLines(
    id: string,
    offset: number,
    limit: number,
    maxChars = Number.POSITIVE_INFINITY,
  ): { lines: string[]; totalLines: number; overflow?: boolean } | undefined {
    const meta = this.meta(id);
    if (!meta || meta.complete !== 1) return undefined;
    const lastChunk = this.lastChunkEndsWithNewline(id, meta);
    const totalLines = meta.total_lines + (lastChunk ? 0 : 1);
    const lines: string[] = [];
    if (meta.total_chars === 0) return { lines, totalLines: 0 };
    // Line `offset` starts after the offset-th newline: in the last chunk that begins before it.
    const first = offset === 0 ? undefined : (this.chunkForLine.get(id, offset) as { seq: number } | undefined);
    let window: LineWindow | undefined;
    for (const c of this.chunks(id, first?.seq ?? 0)) {
      window ??= new LineWindow(offset, limit, { maxChars, firstLine: c.line_start });
      if (!window.feed(c.data)) break;
    }
    if (window?.overflow) return { lines: window.lines, totalLines, overflow: true };
    return { lines: window?.finish() ?? lines, totalLines };
  }

  private lastChunkEndsWithNewline(id: string, meta: ResultMeta): boolean {
    if (meta.chunk_count === 0) return true;
    const rows = this.chunksFrom.all(id, meta.chunk_count - 1) as ChunkRow[];
    const last = rows[0];
    return last === undefined || last.data.endsWith('\n');
  }

  /** Reads the whole text (tests and small results only). */
  readAll(id: string): string | undefined {
    if (!this.meta(id)) return undefined;
    let s = '';
    for (const c of this.chunks(id)) s += c.data;
    return s;
  }
}
