/**
 * The ripgrep engine. rg is run so that its choices are the ones filter.ts
 * documents (and the JS engine reproduces); the rules rg has no flag for are
 * applied to its output here, with the same functions the JS engine uses
 * (file-scan.mjs):
 *
 * - `--text`: rg does not detect binary files itself (its NUL heuristic
 *   depends on buffer boundaries); a reported file whose first 8 KiB hold a
 *   NUL is dropped here.
 * - `--json` for content and multiline count (and `--sort path`, so files
 *   come in walk order and a content search stops once it has enough lines);
 *   its match lines longer than MAX_LINE_BYTES are dropped here. A line so
 *   long that rg's message for it passes MAX_MESSAGE_CHARS stops rg, and the
 *   search goes on from that file with the JS engine (js-engine.ts), which
 *   skips such a line unsearched: rg reports a submatch per match, so a
 *   12 MB line of a minified bundle or a data blob searched for `.` made
 *   650 MB of JSON and took rg 6-11 s to write, all of it to be dropped (rg
 *   still works out the line's matches before writing any: 1-2 s for that
 *   line, once per search).
 * - files_with_matches uses the fast `--files-with-matches`, count the fast
 *   `--count`; a reported file that holds a line longer than MAX_LINE_BYTES
 *   is searched again by the JS engine, without those lines (a second rg
 *   pass over the reported files tells which may hold one: wideLineFiles).
 * - A multiline search: rg 13 -U is quadratic on a long line, so the files
 *   that hold a line over MAX_LINE_BYTES are listed first (a plain rg search)
 *   and left to the JS engine; rg -U searches the rest (searchMultiline).
 * - Read deny rules: a reported file that a rule covers, or whose directory
 *   below the search root a rule covers, is dropped.
 * - A file given as the path is searched as the only entry of its directory
 *   (`--max-depth 1 --glob /<name>`) rather than as a file argument, so that
 *   rg treats it like any other file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ToolError } from '../pipeline/error-class.js';
import { runChild } from '../util/child.js';
import { BINARY_SNIFF_BYTES, MAX_FILE_BYTES, MAX_LINE_BYTES, decodeText, displayLine, isBinaryHead, isLongLine, readRegularFile, splitLines } from './file-scan.mjs';
import { overrideGlobs } from './filter.js';
import { escapeGlobLiteral } from './glob.js';
import type { ShownLine } from './file-scan.mjs';
import type { EngineLimits, FileHit, HitSink, SearchQuery } from './types.js';
import { searchJs } from './js-engine.js';
import { compareWalkOrder } from './walk.js';

const TYPE_NAME = 'toolexecselected';

/**
 * A line over MAX_LINE_BYTES bytes, as rg reads it (after transcoding UTF-16), for a plain search: anchored
 * at the line's start, rg's DFA counts the line's bytes up to the limit, one small state per byte, and stops.
 * (Unanchored, each state would hold every count at once: 9 s on a 12 MB line rather than 0.05 s.)
 */
const LONG_LINE_RUST = `^(?-u:[^\n]){${MAX_LINE_BYTES + 1}}`;

/**
 * A line over a third of MAX_LINE_BYTES raw bytes, the least a line can have to be long once decoded (an
 * invalid byte becomes U+FFFD, three bytes): a file without one has no long line (Screen.hasLongLine), and
 * rg tells it without the file being read here. Asked without --crlf, with which rg 13 strips \r from
 * `[^\n]` too, where a line is what runs from \n to \n (splitLines).
 */
const WIDE_LINE_RUST = `^(?-u:[^\n]){${Math.floor(MAX_LINE_BYTES / 3) + 1}}`;

/**
 * rg's arguments: `files`, `count` and `json` search for the pattern; `long` lists the files (among those the
 * search would read) that hold a line over MAX_LINE_BYTES, with a plain search, whatever the query's mode.
 */
export function rgArgs(q: SearchQuery, kind: 'files' | 'count' | 'json' | 'long', single: string | undefined): string[] {
  const args = [
    '--no-config',
    '--no-messages',
    '--hidden',
    '--no-ignore-global',
    '--no-ignore-exclude',
    '--crlf',
    '--text',
    '--max-filesize',
    `${MAX_FILE_BYTES / (1024 * 1024)}M`,
  ];
  if (q.ignoreCase && kind !== 'long') args.push('--ignore-case');
  // rg 13 -U reads each file into a buffer of its own unless it maps it, which made a search of this
  // repository's node_modules take 5 s of CPU rather than 0.1 s (the JS engine: 2 s). A file cut short
  // while mapped kills rg (SIGBUS): runRg has the JS engine answer from there, as after a panic.
  if (q.multiline && kind !== 'long') args.push('--multiline', '--multiline-dotall', '--mmap');
  if (single !== undefined) {
    args.push('--max-depth', '1', '--glob', `/${escapeGlobLiteral(single)}`);
  } else {
    for (const g of overrideGlobs(q.userGlobs)) args.push('--glob', g);
    if (q.type) {
      for (const g of q.type.globs) args.push('--type-add', `${TYPE_NAME}:${g}`);
      args.push('--type', TYPE_NAME);
    }
  }
  // Files another engine answers for: last, so that no glob of the user's brings them back.
  for (const abs of q.exclude ?? []) args.push('--glob', `!/${escapeGlobLiteral(path.relative(q.root, abs))}`);
  if (kind === 'long') {
    args.push('--files-with-matches', '--null', '--regexp', LONG_LINE_RUST, '--', '.');
    return args;
  }
  if (kind === 'files') args.push('--files-with-matches', '--null');
  else if (kind === 'count') args.push('--count', '--null', '--sort', 'path');
  else {
    args.push('--json', '--sort', 'path');
    if (q.mode === 'content') {
      if (q.before > 0) args.push('--before-context', String(q.before));
      if (q.after > 0) args.push('--after-context', String(q.after));
    }
  }
  // Lines, not matches, are what a plain content search reports, and rg --json writes every match in a line
  // (working them all out before it writes anything): one that runs to the line's end is the only one.
  // A 12 MB line of `.` took rg 1.5 s before its first byte; now as long as reading the line.
  const perLine = kind === 'json' && q.mode === 'content' && !(q.multiline && q.pattern.canMatchNewline);
  args.push('--regexp', perLine ? `(?:${q.pattern.rust})[^\\n]*` : q.pattern.rust, '--', '.');
  return args;
}

type RgText = { text?: string; bytes?: string };
interface RgMessage {
  type: 'begin' | 'match' | 'context' | 'end' | 'summary';
  data: {
    path?: RgText;
    lines?: RgText;
    line_number?: number | null;
    submatches?: Array<{ start: number; end: number }>;
  };
}

function bytesOf(t: RgText | undefined): Buffer {
  if (!t) return Buffer.alloc(0);
  return t.bytes !== undefined ? Buffer.from(t.bytes, 'base64') : Buffer.from(t.text ?? '', 'utf8');
}

function stringOf(t: RgText | undefined): string {
  if (!t) return '';
  return t.bytes !== undefined ? Buffer.from(t.bytes, 'base64').toString('utf8') : (t.text ?? '');
}

/**
 * Builds one file's hit from rg's JSON messages, applying the long-line rule.
 * In content mode the lines are handed out as soon as their context is
 * complete (`ready`), so a file of millions of matching lines is never held
 * whole; otherwise only the figures are kept.
 */
class FileAssembler {
  private readonly shown = new Map<number, string>();
  /** Matched line numbers not handed out yet (content mode), ascending. */
  private pending: number[] = [];
  private lastPending = 0;
  /** Lines before this one were handed out. */
  private next = 1;
  private lines = 0;
  private count = 0;

  constructor(
    private readonly wholeText: boolean,
    private readonly withLines: boolean,
    private readonly before: number,
    private readonly after: number,
  ) {}

  private matchedLine(n: number): void {
    if (!this.withLines) {
      this.lines++;
      return;
    }
    // A block's lines come in order, and blocks in order; a line is matched once.
    if (n <= this.lastPending || n < this.next) return;
    this.pending.push(n);
    this.lastPending = n;
    this.lines++;
  }

  match(d: RgMessage['data']): void {
    const first = d.line_number ?? 1;
    const raw = bytesOf(d.lines);
    const body = raw.length > 0 && raw[raw.length - 1] === 10 ? raw.subarray(0, raw.length - 1) : raw;
    // Each line's byte span in the block, and its text.
    const spans: Array<[number, number]> = [];
    let start = 0;
    for (;;) {
      const nl = body.indexOf(10, start);
      if (nl === -1) {
        spans.push([start, body.length]);
        break;
      }
      spans.push([start, nl]);
      start = nl + 1;
    }
    const texts = spans.map(([a, b]) => body.subarray(a, b).toString('utf8'));
    const long = texts.map((t) => isLongLine(t));
    if (this.withLines) texts.forEach((t, k) => this.shown.set(first + k, t));
    if (!this.wholeText) {
      texts.forEach((_t, k) => {
        if (!long[k]) {
          this.matchedLine(first + k);
          this.count++;
        }
      });
      return;
    }
    // rg reports an empty match at every byte offset, also inside a multi-byte
    // character; the JS engine (like any UTF-16 matcher) cannot: such matches are not counted.
    const all = d.submatches ?? [];
    const subs = all.filter((m) => !(m.start === m.end && m.start < raw.length && (raw[m.start]! & 0xc0) === 0x80));
    if (!long.includes(true)) {
      texts.forEach((_t, k) => this.matchedLine(first + k));
      this.count += all.length === 0 ? 1 : subs.length;
      return;
    }
    const lineOf = (off: number): number => {
      let k = 0;
      while (k + 1 < spans.length && spans[k + 1]![0] <= off) k++;
      return k;
    };
    for (const s of subs) {
      const a = lineOf(s.start);
      const b = s.end > s.start ? lineOf(s.end - 1) : a;
      let touches = false;
      for (let k = a; k <= b; k++) if (long[k]) touches = true;
      if (touches) continue;
      for (let k = a; k <= b; k++) this.matchedLine(first + k);
      this.count++;
    }
  }

  context(d: RgMessage['data']): void {
    if (!this.withLines || d.line_number == null) return;
    const raw = bytesOf(d.lines);
    const body = raw.length > 0 && raw[raw.length - 1] === 10 ? raw.subarray(0, raw.length - 1) : raw;
    this.shown.set(d.line_number, body.toString('utf8'));
  }

  /** Content mode: the lines before this one were handed out. */
  get shownBefore(): number {
    return this.next;
  }

  /**
   * Content mode: the lines that can be shown once rg has reached line `upTo`
   * (Infinity: the file ended). Every match before `upTo` is known then, so
   * each line before it that lies in a match's context is handed out, in
   * order, even while that context goes on (a context of millions of lines
   * is never held); what no later line can need is dropped.
   */
  ready(upTo: number): ShownLine[] {
    const out: ShownLine[] = [];
    if (this.pending.length > 0) {
      const isMatch = new Set(this.pending);
      let open: number | undefined;
      for (const m of this.pending) {
        const end = m + this.after;
        const to = Math.min(end, upTo - 1);
        let ended = false;
        for (let n = Math.max(this.next, m - this.before, 1); n <= to; n++) {
          let text = this.shown.get(n);
          if (text === undefined) {
            // Past the end of the file; before a line rg reached, a line it did not report (none is expected:
            // one too long to report hands the file to the JS engine, searchJson).
            if (!Number.isFinite(upTo)) {
              ended = true;
              break;
            }
            text = LONG_LINE_SHOWN;
          }
          out.push([n, displayLine(text), isMatch.has(n)]);
          this.next = n + 1;
        }
        // A match whose context goes on past upTo: the latest one covers what the earlier ones still would.
        if (!ended && end >= upTo) open = m;
      }
      this.pending = open === undefined ? [] : [open];
    }
    // Lines before upTo that were not shown are needed only as a later match's leading context.
    const keepFrom = Math.max(this.next, upTo - this.before);
    for (const n of this.shown.keys()) if (n < keepFrom) this.shown.delete(n);
    return out;
  }

  hit(abs: string): FileHit | undefined {
    if (this.lines === 0) return undefined;
    return { abs, count: this.wholeText ? this.count : this.lines, lines: undefined };
  }
}

/** What a context line rg did not report is shown as. */
const LONG_LINE_SHOWN = '[... line too long to show]';

/**
 * The longest rg --json message read: a match or context line of a plain
 * search is at most MAX_LINE_BYTES once it counts (with escapes and a
 * submatch per character, about a megabyte), so anything longer is a line
 * that is never searched, whose message may go on for hundreds of megabytes
 * (rg is stopped there: TooLong; were it a line that counts, the JS engine
 * would give the same answer, only slower); a multiline match (a block of
 * lines) may be longer, up to the largest file searched.
 */
const MAX_MESSAGE_CHARS = 2 * 1024 * 1024;
const MAX_BLOCK_MESSAGE_CHARS = 64 * 1024 * 1024;

/** Files read whole by the long-line check, on the service's thread (tests count them). */
export const screenStats = { wholeReads: 0 };

/** Memoised per-search checks of reported files. */
class Screen {
  private readonly dirs = new Map<string, boolean>();
  constructor(private readonly q: SearchQuery) {}

  /** The file, or a directory between the root and it, is Read-denied. */
  denied(abs: string): boolean {
    if (this.q.isDenied(abs) || this.q.isLinkDenied?.(abs)) return true;
    const rel = path.relative(this.q.root, path.dirname(abs));
    if (rel === '' || rel.startsWith('..')) return false;
    let dir = this.q.root;
    for (const part of rel.split(path.sep)) {
      dir = path.join(dir, part);
      let d = this.dirs.get(dir);
      if (d === undefined) {
        d = this.q.isDenied(dir);
        this.dirs.set(dir, d);
      }
      if (d) return true;
    }
    return false;
  }

  /** Files found (by binary) to start with a UTF-16 BOM: rg transcodes them, so its byte counts are not theirs. */
  readonly utf16 = new Set<string>();

  binary(abs: string): boolean {
    let fd: number | undefined;
    try {
      fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      const head = Buffer.alloc(BINARY_SNIFF_BYTES);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      if (n >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) this.utf16.add(abs);
      return isBinaryHead(head.subarray(0, n));
    } catch {
      return true;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  /**
   * Whether the file has a line rg's verdict must be checked against (isLongLine). A line's bytes grow
   * at most threefold once decoded (an invalid byte becomes U+FFFD, UTF-16 half as much): a file, or a
   * UTF-8 one whose lines are all, under a third of MAX_LINE_BYTES has none, and is not decoded.
   */
  hasLongLine(abs: string): boolean {
    try {
      if (!mayHoldLongLine(abs)) return false;
      // Opened without blocking, regular files only, bounded: the file may have been swapped for a FIFO or a device since rg read it.
      const buf = readRegularFile(abs, MAX_FILE_BYTES);
      if (buf === undefined) return false;
      screenStats.wholeReads++;
      const utf16 = buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff));
      if (!utf16) {
        let widest = 0;
        for (let at = 0; at <= buf.length; ) {
          const nl = buf.indexOf(10, at);
          const end = nl === -1 ? buf.length : nl;
          widest = Math.max(widest, end - at);
          at = end + 1;
        }
        if (widest * 3 <= MAX_LINE_BYTES) return false;
      }
      return splitLines(decodeText(buf)).some(isLongLine);
    } catch {
      return false;
    }
  }
}

/**
 * rg's data segment, in KiB (sh's ulimit -d): an ignore file that never ends
 * (.ignore a symlink to /dev/zero, as a cloned repository can carry) makes rg
 * fail here instead of growing until the host runs out of memory.
 */
const RG_MAX_DATA_KIB = 2 * 1024 * 1024;

/**
 * rg 13 can panic on a pattern it accepted (grep-matcher's "self.start <= end", a multiline `$` over
 * CRLF lines); a panic in one of its worker threads leaves the others waiting for ever, so rg is
 * stopped as soon as it says so on stderr. The answer is then incomplete: runRg says so (true), and the
 * caller has the JS engine search what rg did not answer. So it is where rg died of SIGBUS (a file
 * truncated while rg read it through a memory map, --mmap).
 */
const PANIC = /\bpanicked at\b/;

async function runRg(
  q: SearchQuery,
  args: string[],
  cwd: string,
  limits: EngineLimits,
  onStdout: (s: string) => boolean,
): Promise<boolean> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  q.signal.addEventListener('abort', onAbort, { once: true });
  let stopped = false;
  let panicked = false;
  let stderr = '';
  try {
    const r = await runChild({
      file: 'sh',
      args: ['-c', `ulimit -d ${RG_MAX_DATA_KIB} 2>/dev/null; exec rg "$@"`, 'rg', ...args],
      cwd,
      env: q.env,
      timeoutMs: limits.totalMs,
      signal: stop.signal,
      killGraceMs: 500,
      onStdout: (s) => {
        if (stopped || panicked) return;
        if (!onStdout(s)) {
          stopped = true;
          stop.abort();
        }
      },
      onStderr: (s) => {
        if (stderr.length < 64 * 1024) stderr += s;
        if (!panicked && PANIC.test(stderr)) {
          panicked = true;
          stop.abort();
        }
      },
    });
    if (q.signal.aborted) throw new ToolError('The search was cancelled.', 'cancelled');
    if (stopped) return false;
    if (panicked || r.exitCode === 101 || r.signal === 'SIGBUS') return true;
    if (r.spawnError) throw new ToolError(`ripgrep (rg) could not be started: ${r.spawnError}`, 'internal');
    if (r.timedOut) throw new ToolError(`Grep timed out after ${limits.totalMs / 1000} s; narrow the search with path, glob or type.`, 'timeout');
    if (r.exitCode === 127) throw new ToolError(`ripgrep (rg) could not be started: ${stderr.trim()}`, 'internal');
    if (r.exitCode === 2 && stderr.trim().length > 0) throw new ToolError(`ripgrep: ${stderr.trim()}`, 'tool_error');
    // 0 found, 1 nothing found, 2 unreadable files passed over; anything else (out of memory) is no answer.
    if (r.exitCode !== 0 && r.exitCode !== 1 && r.exitCode !== 2) {
      throw new ToolError(`ripgrep failed (${r.signal ?? `exit code ${r.exitCode}`})${stderr.trim() ? `: ${stderr.trim().slice(0, 500)}` : ''}`, 'tool_error');
    }
    return false;
  } finally {
    q.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Where the JS engine takes over from rg: rg stopped at a line too long to report, in `abs`, or died
 * there (a panic); in content mode, the file's lines before `shownBefore` were handed out (Infinity:
 * the whole file's answer was, in every mode).
 */
interface TooLong {
  abs: string;
  shownBefore: number;
}

interface JsonState {
  failure?: ToolError;
  tooLong?: TooLong;
  /** How far rg's answer was handed out (undefined: nothing of it). */
  reached?: () => TooLong | undefined;
}

/**
 * Parses a stream of rg --json lines into hits. Never throws (it runs in the
 * pipe's 'data' listener): a failure is kept in `failure` and ends the read.
 * Each chunk is searched for newlines once, and a message over the cap is not
 * gathered: it ends the read once it passes the cap (`tooLong`, or a failure),
 * or, of another type, is skipped to its end.
 */
function jsonConsumer(
  q: SearchQuery,
  root: string,
  screen: Screen,
  emit: (h: FileHit) => boolean,
  state: JsonState = {},
): (chunk: string) => boolean {
  const wholeText = q.multiline && q.pattern.canMatchNewline;
  const withLines = q.mode === 'content';
  const cap = wholeText ? MAX_BLOCK_MESSAGE_CHARS : MAX_MESSAGE_CHARS;
  let parts: string[] = [];
  let size = 0;
  /** Inside a message over the cap, skipped to its end. */
  let skipping = false;
  let current: { abs: string; asm: FileAssembler | undefined } | undefined;
  let lastEnded: string | undefined;
  state.reached = () => {
    if (current !== undefined) return { abs: current.abs, shownBefore: current.asm?.shownBefore ?? 1 };
    return lastEnded === undefined ? undefined : { abs: lastEnded, shownBefore: Number.POSITIVE_INFINITY };
  };

  const streamed = (upTo: number): boolean => {
    const lines = current?.asm?.ready(upTo) ?? [];
    return lines.length === 0 || emit({ abs: current!.abs, count: 0, lines });
  };
  const message = (m: RgMessage): boolean => {
    if (m.type === 'begin') {
      const abs = path.join(root, stringOf(m.data.path));
      const skip = screen.denied(abs) || screen.binary(abs);
      current = { abs, asm: skip ? undefined : new FileAssembler(wholeText, withLines, q.before, q.after) };
    } else if (m.type === 'match' || m.type === 'context') {
      if (withLines && m.data.line_number != null && !streamed(m.data.line_number)) return false;
      if (m.type === 'match') current?.asm?.match(m.data);
      else current?.asm?.context(m.data);
    } else if (m.type === 'end') {
      if (withLines && !streamed(Number.POSITIVE_INFINITY)) return false;
      const hit = withLines ? undefined : current?.asm?.hit(current.abs);
      lastEnded = current?.abs;
      current = undefined;
      if (hit && !emit(hit)) return false;
    }
    return true;
  };
  /**
   * A message that has just passed the cap (`start`: its first characters), while rg still writes it: a
   * line of a plain search stops rg, and the JS engine goes on from this file (searchJson); a block of a
   * multiline search fails the search. Another type is skipped to its end (true).
   */
  const oversized = (start: string): boolean => {
    const type = /^\{"type":"(\w+)"/.exec(start)?.[1];
    if ((type !== 'match' && type !== 'context') || current === undefined) return true;
    if (!wholeText) {
      state.tooLong = { abs: current.abs, shownBefore: current.asm?.shownBefore ?? 1 };
      return false;
    }
    state.failure = new ToolError(
      `A match in ${current.abs} spans more than ${cap / (1024 * 1024)} MB of text, too much to report; narrow the pattern, or use output_mode "files_with_matches".`,
      'tool_error',
    );
    return false;
  };
  const line = (): boolean => {
    const text = parts.length === 1 ? parts[0]! : parts.join('');
    parts = [];
    size = 0;
    if (text.length === 0) return true;
    let m: RgMessage;
    try {
      m = JSON.parse(text) as RgMessage;
    } catch {
      return true;
    }
    return message(m);
  };
  return (chunk) => {
    if (state.failure || state.tooLong) return false;
    try {
      for (let from = 0; ; ) {
        const nl = chunk.indexOf('\n', from);
        const piece = nl === -1 ? chunk.slice(from) : chunk.slice(from, nl);
        if (!skipping) {
          parts.push(piece);
          size += piece.length;
          if (size > cap) {
            const start = parts.join('').slice(0, 256);
            parts = [];
            size = 0;
            if (!oversized(start)) return false;
            skipping = true;
          }
        }
        if (nl === -1) return true;
        from = nl + 1;
        if (skipping) skipping = false;
        else if (!line()) return false;
      }
    } catch (e) {
      state.failure = new ToolError(`The search failed: ${(e as Error).message}`, 'internal');
      return false;
    }
  };
}

/** What is left of the time limit for the JS engine taking over at `started`'s search (at least a second). */
function timeLeft(limits: EngineLimits, started: number): EngineLimits {
  return { ...limits, totalMs: Math.max(1000, limits.totalMs - (performance.now() - started)) };
}

/** A consumer of rg's NUL-separated paths (relative to `root`), pushing each into `into` as an absolute path. */
function nulPaths(root: string, into: string[]): (chunk: string) => boolean {
  let pending = '';
  return (chunk) => {
    pending += chunk;
    const parts = pending.split('\0');
    pending = parts.pop() ?? '';
    for (const p of parts) if (p.length > 0) into.push(path.join(root, p));
    return true;
  };
}

/**
 * Runs rg --json in `cwd` (over `single` alone, if given) into `sink`. Where rg meets a line too long
 * to report (TooLong), it is stopped, and the JS engine searches on from that file (the lines of it
 * already handed out are not given again), within what is left of the time limit; so it does where rg
 * dies of a panic, from the file rg was in (or past the last one it finished).
 */
async function searchJson(q: SearchQuery, screen: Screen, sink: HitSink, limits: EngineLimits): Promise<void> {
  const started = performance.now();
  const state: JsonState = {};
  const panicked = await runRg(q, rgArgs(q, 'json', q.single), q.root, limits, jsonConsumer(q, q.root, screen, sink, state));
  if (state.failure) throw state.failure;
  const at = state.tooLong ?? (panicked ? state.reached?.() : undefined);
  if (at === undefined && !panicked) return;
  await searchJs(
    q,
    (hit) => {
      if (at === undefined || hit.abs !== at.abs) return sink(hit);
      if (q.mode !== 'content') return at.shownBefore === Number.POSITIVE_INFINITY || sink(hit);
      const lines = hit.lines?.filter(([n]) => n >= at.shownBefore) ?? [];
      return lines.length === 0 || sink({ ...hit, lines });
    },
    timeLeft(limits, started),
    { from: at?.abs },
  );
}

export async function searchRg(q: SearchQuery, sink: HitSink, limits: EngineLimits): Promise<void> {
  return q.multiline ? searchMultiline(q, sink, limits) : searchAll(q, new Screen(q), sink, limits);
}

/**
 * Exclusion globs for files with a long line take at most this many characters of rg's command line
 * (Linux allows 2 MB in all); a tree with more such files is searched by the JS engine.
 */
const MAX_EXCLUDE_CHARS = 256 * 1024;

/**
 * A multiline search. rg 13 -U is quadratic on a long line (a file of one 3 MB line of a minified bundle,
 * searched for `.`, `^` or `^a`, took it over 100 s; a 300 KB line 1-2.6 s), a line that is never searched
 * anyway. So rg first lists the files that hold a line over MAX_LINE_BYTES (a plain search, linear: 0.35 s
 * of CPU over this repository's node_modules, where one for a literal takes 0.05 s), the JS engine searches
 * those files (it skips such lines unsearched, 0.2 s for the 3 MB one), rg -U searches the rest, and the
 * hits are merged in walk order. The JS engine's answers are held until rg's reach them: a few files
 * (node_modules has 142 among 13,500).
 */
async function searchMultiline(q: SearchQuery, sink: HitSink, limits: EngineLimits): Promise<void> {
  const started = performance.now();
  const left = (): EngineLimits => timeLeft(limits, started);
  const screen = new Screen(q);
  const listed: string[] = [];
  const panicked = await runRg(q, rgArgs(q, 'long', q.single), q.root, limits, nulPaths(q.root, listed));
  if (panicked) return searchJs(q, sink, left());
  if (listed.length === 0) return searchAll(q, screen, sink, left());
  const rel = (abs: string): string => path.relative(q.root, abs);
  // A file given as the path, with a long line, is the JS engine's alone.
  const globChars = listed.reduce((n, abs) => n + 2 * rel(abs).length + 8, 0);
  if (q.single !== undefined || globChars > MAX_EXCLUDE_CHARS) return searchJs(q, sink, left());
  // Binary files are dropped here, from their first 8 KiB, rather than read whole by the JS engine: in
  // node_modules 16 of the 142 files with a long line are (native modules, wasm: 35 of their 66 MB).
  const long = listed.filter((abs) => !screen.denied(abs) && !screen.binary(abs)).sort((a, b) => compareWalkOrder(rel(a), rel(b)));
  const held: FileHit[] = [];
  await searchJs(
    q,
    (hit) => {
      held.push(hit);
      return true;
    },
    left(),
    { files: long },
  );
  let next = 0;
  let stopped = false;
  /** Hands out the held hits before `abs` in walk order (all of them: undefined); false once the sink has enough. */
  const heldBefore = (abs: string | undefined): boolean => {
    while (!stopped && next < held.length && (abs === undefined || compareWalkOrder(rel(held[next]!.abs), rel(abs)) < 0)) {
      if (!sink(held[next++]!)) stopped = true;
    }
    return !stopped;
  };
  const rest: SearchQuery = { ...q, exclude: new Set(listed) };
  // files_with_matches is handed out in any order.
  if (q.mode === 'files_with_matches') {
    if (heldBefore(undefined)) await searchAll(rest, screen, sink, left());
    return;
  }
  await searchAll(
    rest,
    screen,
    (hit) => {
      if (!heldBefore(hit.abs)) return false;
      if (!sink(hit)) stopped = true;
      return !stopped;
    },
    left(),
  );
  heldBefore(undefined);
}

async function searchAll(q: SearchQuery, screen: Screen, sink: HitSink, limits: EngineLimits): Promise<void> {
  if (q.mode === 'count' && !q.multiline) return countLines(q, screen, sink, limits);
  if (q.mode !== 'files_with_matches') {
    await searchJson(q, screen, sink, limits);
    return;
  }
  const reported: string[] = [];
  const started = performance.now();
  // rg's answer is handed out once it is complete: where rg died of a panic, the JS engine answers instead.
  const panicked = await runRg(q, rgArgs(q, 'files', q.single), q.root, limits, nulPaths(q.root, reported));
  if (panicked) return searchJs(q, sink, timeLeft(limits, started));
  const wide = await wideLineFiles(q, screen, reported, timeLeft(limits, started));
  for (const abs of reported) {
    if (q.signal.aborted) throw new ToolError('The search was cancelled.', 'cancelled');
    if (screen.denied(abs) || screen.binary(abs)) continue;
    if (wide(abs) && screen.hasLongLine(abs) && !(await survivesLongLines(q, abs, timeLeft(limits, started)))) continue;
    if (!sink({ abs, count: 1, lines: undefined })) return;
  }
}

/** Whether a file is large enough to hold a line over MAX_LINE_BYTES once decoded (hasLongLine's first test); true when stat fails. */
function mayHoldLongLine(abs: string): boolean {
  try {
    return fs.statSync(abs).size * 3 > MAX_LINE_BYTES;
  } catch {
    return true;
  }
}

/** Characters of paths on the command line of one rg run of wideLineFiles (Linux allows 2 MB of arguments and environment in all). */
const MAX_OPERAND_CHARS = 256 * 1024;

/**
 * Which of `files` (rg's report, below q.root) hasLongLine must judge. Reading each reported file over
 * a third of MAX_LINE_BYTES whole here, to find its widest line, held the service's thread for the
 * whole read: a files_with_matches search of node_modules for `function` read thousands of files so.
 * rg lists those with a line over that third instead (WIDE_LINE_RUST, the reported files as operands,
 * in runs of bounded command lines), and only they are read here. A UTF-16 file, which rg transcodes,
 * is always judged here (wide is asked after Screen.binary has read its head). Where rg fails (a panic, an error), every file is judged here, as before.
 */
async function wideLineFiles(q: SearchQuery, screen: Screen, reported: string[], limits: EngineLimits): Promise<(abs: string) => boolean> {
  const wide = new Set<string>();
  // Read-denied files are dropped unread; binary ones are told by Screen.binary as each file comes (a read of
  // its head, here), which this pass does not wait for. A file too small to hold a long line once decoded is
  // dropped by its size, as hasLongLine would: the usual answer, a few source files, starts no rg.
  const files = reported.filter((abs) => !screen.denied(abs) && mayHoldLongLine(abs));
  if (files.length === 0) return (abs) => screen.utf16.has(abs);
  let from = 0;
  while (from < files.length) {
    const rels: string[] = [];
    let chars = 0;
    while (from < files.length && (rels.length === 0 || chars < MAX_OPERAND_CHARS)) {
      const rel = path.relative(q.root, files[from++]!);
      rels.push(rel);
      chars += Buffer.byteLength(rel) + 1;
    }
    // Explicit operands are searched whatever ignore files say (--no-ignore spares reading them); --max-depth 0:
    // a file swapped for a directory since is not walked.
    const args = ['--no-config', '--no-messages', '--no-ignore', '--hidden', '--text', '--max-depth', '0', '--max-filesize', `${MAX_FILE_BYTES / (1024 * 1024)}M`];
    args.push('--files-with-matches', '--null', '--regexp', WIDE_LINE_RUST, '--', ...rels);
    const listed: string[] = [];
    let failed: boolean;
    try {
      failed = await runRg(q, args, q.root, limits, nulPaths(q.root, listed));
    } catch (e) {
      if (e instanceof ToolError && (e.errorClass === 'cancelled' || e.errorClass === 'timeout')) throw e;
      failed = true;
    }
    if (failed) return () => true;
    for (const abs of listed) wide.add(abs);
  }
  return (abs) => wide.has(abs) || screen.utf16.has(abs);
}

/**
 * count (lines that match, as rg --count counts them; a multiline search counts matches, from --json):
 * rg's counts, in walk order, except for a file with a line over MAX_LINE_BYTES, which rg counts too
 * and the JS engine counts again without it (reading the file once, not rg's report of every match in
 * the line).
 */
async function countLines(q: SearchQuery, screen: Screen, sink: HitSink, limits: EngineLimits): Promise<void> {
  let pending = '';
  const counted: Array<[string, number]> = [];
  const started = performance.now();
  const panicked = await runRg(q, rgArgs(q, 'count', q.single), q.root, limits, (chunk) => {
    pending += chunk;
    // `path\0N\n`: a path may hold a newline, never a NUL.
    for (;;) {
      const nul = pending.indexOf('\0');
      const nl = nul === -1 ? -1 : pending.indexOf('\n', nul);
      if (nl === -1) return true;
      counted.push([path.join(q.root, pending.slice(0, nul)), Number(pending.slice(nul + 1, nl))]);
      pending = pending.slice(nl + 1);
    }
  });
  if (panicked) return searchJs(q, sink, timeLeft(limits, started));
  const wide = await wideLineFiles(
    q,
    screen,
    counted.map(([abs]) => abs),
    timeLeft(limits, started),
  );
  for (const [abs, count] of counted) {
    if (q.signal.aborted) throw new ToolError('The search was cancelled.', 'cancelled');
    if (screen.denied(abs) || screen.binary(abs)) continue;
    if (!wide(abs) || !screen.hasLongLine(abs)) {
      if (!sink({ abs, count, lines: undefined })) return;
      continue;
    }
    let more = true;
    await searchJs({ ...q, root: path.dirname(abs), single: path.basename(abs) }, (hit) => (more = sink(hit)), timeLeft(limits, started));
    if (!more) return;
  }
}

/**
 * rg matched a file that has over-long lines: does a match on another line remain? The JS engine tells,
 * skipping those lines unsearched (rg's --json would report every match in them first: seconds for a
 * 12 MB line matched character by character).
 */
async function survivesLongLines(q: SearchQuery, abs: string, limits: EngineLimits): Promise<boolean> {
  let found = false;
  await searchJs({ ...q, root: path.dirname(abs), single: path.basename(abs) }, () => {
    found = true;
    return false;
  }, limits);
  return found;
}
