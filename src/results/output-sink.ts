/**
 * A text output that a tool produces piece by piece (Bash's stdout, an MCP
 * tool's text). It stays in memory up to the call's persist threshold; past
 * it, everything goes to the result store in chunks, and only the preview is
 * kept. Memory per call is therefore bounded by threshold + one chunk,
 * whatever the output's size; what one call stores is capped too
 * (`maxStoredChars`), past which the rest is dropped and the text says so.
 *
 * `write` never throws: it is called from child processes' 'data' listeners,
 * where an exception would take the process down. A failure to store (a full
 * or read-only database) is kept and thrown by `finish`, as an io error of the
 * call.
 */
import { ToolError } from '../pipeline/error-class.js';
import type { ResultStore, ResultWriter } from './store.js';
import { withoutHalfAtEnd, withoutHalfAtStart } from '../util/text.js';

/** What one call may store, by default: 256 Mi characters. */
export const DEFAULT_MAX_STORED_CHARS = 256 * 1024 * 1024;

export type SinkResult =
  | { kind: 'inline'; text: string }
  | { kind: 'persisted'; id: string; totalChars: number; totalBytes: number; preview: string };

export interface OutputSink {
  write(text: string): void;
  /** Characters written so far. */
  readonly length: number;
  finish(): SinkResult;
  abort(): void;
}

export interface SinkOptions {
  store: ResultStore;
  thresholdChars: number;
  previewChars: number;
  sessionId: string;
  executionId: string;
  tool: string;
  maxStoredChars?: number;
}

export class SpillingOutputSink implements OutputSink {
  private parts: string[] = [];
  private inMemory = 0;
  private total = 0;
  private writer: ResultWriter | undefined;
  private preview = '';
  private failure: unknown;
  private dropped = 0;

  constructor(private readonly opts: SinkOptions) {}

  write(text: string): void {
    if (text.length === 0 || this.failure !== undefined) return;
    const room = (this.opts.maxStoredChars ?? DEFAULT_MAX_STORED_CHARS) - this.total;
    if (room <= 0) {
      this.dropped += text.length;
      return;
    }
    if (text.length > room) {
      this.dropped += text.length - room;
      text = text.slice(0, room);
    }
    this.total += text.length;
    try {
      if (this.writer) {
        this.writer.write(text);
        return;
      }
      this.parts.push(text);
      this.inMemory += text.length;
      if (this.inMemory > this.opts.thresholdChars) this.spill();
    } catch (e) {
      this.failure = e;
      this.parts = [];
    }
  }

  /** Characters dropped past the cap. */
  get droppedChars(): number {
    return this.dropped;
  }

  private spill(): void {
    const all = this.parts.join('');
    this.parts = [];
    this.inMemory = 0;
    this.preview = all.slice(0, this.opts.previewChars);
    this.writer = this.opts.store.create({
      sessionId: this.opts.sessionId,
      executionId: this.opts.executionId,
      tool: this.opts.tool,
    });
    this.writer.write(all);
  }

  get length(): number {
    return this.total;
  }

  finish(): SinkResult {
    if (this.failure !== undefined) {
      this.abort();
      throw new ToolError(`The output could not be stored: ${(this.failure as Error).message ?? String(this.failure)}`, 'io');
    }
    if (this.dropped > 0) {
      const note = `\n\n... [output truncated: ${this.dropped.toLocaleString('en-US')} more characters were not stored] ...\n`;
      this.writeTail(note);
    }
    if (!this.writer) {
      const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
      this.parts = [];
      return { kind: 'inline', text };
    }
    let meta;
    try {
      meta = this.writer.finish();
    } catch (e) {
      this.abort();
      throw new ToolError(`The output could not be stored: ${(e as Error).message}`, 'io');
    }
    return {
      kind: 'persisted',
      id: meta.id,
      totalChars: meta.total_chars,
      totalBytes: meta.total_bytes,
      preview: this.preview,
    };
  }

  abort(): void {
    this.parts = [];
    try {
      this.writer?.abort();
    } catch {
      /* the database may be the reason we are aborting */
    }
  }

  /** Appends past the cap (the truncation note). */
  private writeTail(text: string): void {
    if (this.writer) this.writer.write(text);
    else this.parts.push(text);
  }
}

/** Human size: 1.2 MB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(2)} GB`;
}

/**
 * What the model receives in place of a persisted result: the preview and a
 * line naming result://<id>, which Read accepts as file_path.
 */
export function formatPersisted(r: { id: string; totalChars: number; totalBytes: number; preview: string }, part: 'first' | 'last' = 'first'): string {
  // Without half a character at the cut either (util/text.ts): a line of emoji has no newline to cut at.
  const cut = r.preview.length < r.totalChars ? atLineBoundary(r.preview, part) : undefined;
  const preview = cut === undefined ? r.preview : part === 'first' ? withoutHalfAtEnd(cut) : withoutHalfAtStart(cut);
  return (
    `<persisted-output>\n` +
    `Output too large (${r.totalChars.toLocaleString('en-US')} characters, ${formatSize(r.totalBytes)}). ` +
    `Full output saved to: result://${r.id}\n` +
    `Read it with the Read tool (file_path "result://${r.id}", with offset and limit in lines).\n\n` +
    `Preview (${part} ${preview.length.toLocaleString('en-US')} characters):\n` +
    (part === 'first' ? `${preview}\n...\n` : `...\n${preview.replace(/\n$/, '')}\n`) +
    `</persisted-output>`
  );
}

/**
 * A preview cut where a line ends, as Claude Code cuts its own (when that
 * keeps at least half of it): `seq 1 30000` previewed to "…1040\n104" showed
 * a line "104" the output does not hold there. The first characters end at
 * the last newline; the last characters start after the first one.
 */
function atLineBoundary(preview: string, part: 'first' | 'last'): string {
  if (part === 'first') {
    const nl = preview.lastIndexOf('\n');
    return nl >= preview.length / 2 ? preview.slice(0, nl) : preview;
  }
  const nl = preview.indexOf('\n');
  return nl >= 0 && nl < preview.length / 2 ? preview.slice(nl + 1) : preview;
}
