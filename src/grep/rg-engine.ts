/**
 * The ripgrep engine. rg is run so that its choices are the ones filter.ts
 * documents (and the JS engine reproduces); the rules rg has no flag for are
 * applied to its output here, with the same functions the JS engine uses
 * (file-scan.mjs):
 *
 * - `--text`: rg does not detect binary files itself (its NUL heuristic
 *   depends on buffer boundaries); a reported file whose first 8 KiB hold a
 *   NUL is dropped here.
 * - `--json` for content and count (and `--sort path`, so files come in walk
 *   order and a content search stops once it has enough lines); its match
 *   lines longer than MAX_LINE_BYTES are dropped here. files_with_matches
 *   uses the fast `--files-with-matches`; a reported file big enough to hold
 *   a long line, that does hold one, is searched again with `--json` to see
 *   whether a match survives.
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
import { BINARY_SNIFF_BYTES, MAX_FILE_BYTES, MAX_LINE_BYTES, assembleLines, decodeText, isBinaryHead, isLongLine, readRegularFile, splitLines } from './file-scan.mjs';
import { overrideGlobs } from './filter.js';
import { escapeGlobLiteral } from './glob.js';
import type { EngineLimits, FileHit, HitSink, SearchQuery } from './types.js';

const TYPE_NAME = 'toolexecselected';

export function rgArgs(q: SearchQuery, kind: 'files' | 'json', single: string | undefined): string[] {
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
  if (q.ignoreCase) args.push('--ignore-case');
  if (q.multiline) args.push('--multiline', '--multiline-dotall');
  if (single !== undefined) {
    args.push('--max-depth', '1', '--glob', `/${escapeGlobLiteral(single)}`);
  } else {
    for (const g of overrideGlobs(q.userGlobs)) args.push('--glob', g);
    if (q.type) {
      for (const g of q.type.globs) args.push('--type-add', `${TYPE_NAME}:${g}`);
      args.push('--type', TYPE_NAME);
    }
  }
  if (kind === 'files') args.push('--files-with-matches', '--null');
  else {
    args.push('--json', '--sort', 'path');
    if (q.mode === 'content') {
      if (q.before > 0) args.push('--before-context', String(q.before));
      if (q.after > 0) args.push('--after-context', String(q.after));
    }
  }
  args.push('--regexp', q.pattern.rust, '--', '.');
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

/** Builds one file's hit from rg's JSON messages, applying the long-line rule. */
class FileAssembler {
  private readonly shown = new Map<number, string>();
  private readonly matched = new Set<number>();
  private count = 0;

  constructor(
    private readonly wholeText: boolean,
    private readonly withLines: boolean,
  ) {}

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
          this.matched.add(first + k);
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
      texts.forEach((_t, k) => this.matched.add(first + k));
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
      for (let k = a; k <= b; k++) this.matched.add(first + k);
      this.count++;
    }
  }

  context(d: RgMessage['data']): void {
    if (!this.withLines || d.line_number == null) return;
    const raw = bytesOf(d.lines);
    const body = raw.length > 0 && raw[raw.length - 1] === 10 ? raw.subarray(0, raw.length - 1) : raw;
    this.shown.set(d.line_number, body.toString('utf8'));
  }

  hit(abs: string, before: number, after: number): FileHit | undefined {
    if (this.matched.size === 0) return undefined;
    const matched = [...this.matched].sort((a, b) => a - b);
    const lines = this.withLines ? assembleLines(matched, before, after, (n) => this.shown.get(n)) : undefined;
    return { abs, count: this.wholeText ? this.count : matched.length, lines };
  }
}

/** Memoised per-search checks of reported files. */
class Screen {
  private readonly dirs = new Map<string, boolean>();
  constructor(private readonly q: SearchQuery) {}

  /** The file, or a directory between the root and it, is Read-denied. */
  denied(abs: string): boolean {
    if (this.q.isDenied(abs)) return true;
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

  binary(abs: string): boolean {
    let fd: number | undefined;
    try {
      fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      const head = Buffer.alloc(BINARY_SNIFF_BYTES);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      return isBinaryHead(head.subarray(0, n));
    } catch {
      return true;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  /** Whether the file has a line rg's verdict must be checked against. */
  hasLongLine(abs: string): boolean {
    try {
      if (fs.statSync(abs).size <= MAX_LINE_BYTES) return false;
      // Opened without blocking, regular files only, bounded: the file may have been swapped for a FIFO or a device since rg read it.
      const buf = readRegularFile(abs, MAX_FILE_BYTES);
      return buf !== undefined && splitLines(decodeText(buf)).some(isLongLine);
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

async function runRg(
  q: SearchQuery,
  args: string[],
  cwd: string,
  limits: EngineLimits,
  onStdout: (s: string) => boolean,
): Promise<void> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  q.signal.addEventListener('abort', onAbort, { once: true });
  let stopped = false;
  try {
    const r = await runChild({
      file: 'sh',
      args: ['-c', `ulimit -d ${RG_MAX_DATA_KIB} 2>/dev/null; exec rg "$@"`, 'rg', ...args],
      cwd,
      env: q.env,
      timeoutMs: limits.totalMs,
      signal: stop.signal,
      killGraceMs: 500,
      maxOutputBytes: 64 * 1024,
      onStdout: (s) => {
        if (stopped) return;
        if (!onStdout(s)) {
          stopped = true;
          stop.abort();
        }
      },
    });
    if (q.signal.aborted) throw new ToolError('The search was cancelled.', 'cancelled');
    if (stopped) return;
    if (r.spawnError) throw new ToolError(`ripgrep (rg) could not be started: ${r.spawnError}`, 'internal');
    if (r.timedOut) throw new ToolError(`Grep timed out after ${limits.totalMs / 1000} s; narrow the search with path, glob or type.`, 'timeout');
    if (r.exitCode === 127) throw new ToolError(`ripgrep (rg) could not be started: ${r.stderr.trim()}`, 'internal');
    if (r.exitCode === 2 && r.stderr.trim().length > 0) throw new ToolError(`ripgrep: ${r.stderr.trim()}`, 'tool_error');
    // 0 found, 1 nothing found, 2 unreadable files passed over; anything else (out of memory) is no answer.
    if (r.exitCode !== 0 && r.exitCode !== 1 && r.exitCode !== 2) {
      throw new ToolError(`ripgrep failed (${r.signal ?? `exit code ${r.exitCode}`})${r.stderr.trim() ? `: ${r.stderr.trim().slice(0, 500)}` : ''}`, 'tool_error');
    }
  } finally {
    q.signal.removeEventListener('abort', onAbort);
  }
}

/** Parses a stream of rg --json lines into hits. */
function jsonConsumer(q: SearchQuery, root: string, screen: Screen, emit: (h: FileHit) => boolean): (chunk: string) => boolean {
  const wholeText = q.multiline && q.pattern.canMatchNewline;
  let buf = '';
  let current: { abs: string; asm: FileAssembler | undefined } | undefined;
  return (chunk) => {
    buf += chunk;
    let from = 0;
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', from)) {
      const line = buf.slice(from, nl);
      from = nl + 1;
      if (line.length === 0) continue;
      let m: RgMessage;
      try {
        m = JSON.parse(line) as RgMessage;
      } catch {
        continue;
      }
      if (m.type === 'begin') {
        const abs = path.join(root, stringOf(m.data.path));
        const skip = screen.denied(abs) || screen.binary(abs);
        current = { abs, asm: skip ? undefined : new FileAssembler(wholeText, q.mode === 'content') };
      } else if (m.type === 'match') current?.asm?.match(m.data);
      else if (m.type === 'context') current?.asm?.context(m.data);
      else if (m.type === 'end') {
        const hit = current?.asm?.hit(current.abs, q.before, q.after);
        current = undefined;
        if (hit && !emit(hit)) return false;
      }
    }
    buf = buf.slice(from);
    return true;
  };
}

export async function searchRg(q: SearchQuery, sink: HitSink, limits: EngineLimits): Promise<void> {
  const screen = new Screen(q);
  if (q.mode !== 'files_with_matches') {
    await runRg(q, rgArgs(q, 'json', q.single), q.root, limits, jsonConsumer(q, q.root, screen, sink));
    return;
  }
  let pending = '';
  const reported: string[] = [];
  await runRg(q, rgArgs(q, 'files', q.single), q.root, limits, (chunk) => {
    pending += chunk;
    const parts = pending.split('\0');
    pending = parts.pop() ?? '';
    for (const p of parts) if (p.length > 0) reported.push(path.join(q.root, p));
    return true;
  });
  for (const abs of reported) {
    if (q.signal.aborted) throw new ToolError('The search was cancelled.', 'cancelled');
    if (screen.denied(abs) || screen.binary(abs)) continue;
    if (screen.hasLongLine(abs) && !(await survivesLongLines(q, abs, screen, limits))) continue;
    if (!sink({ abs, count: 1, lines: undefined })) return;
  }
}

/** rg matched a file that has over-long lines: does a match on another line remain? */
async function survivesLongLines(q: SearchQuery, abs: string, screen: Screen, limits: EngineLimits): Promise<boolean> {
  let found = false;
  const dir = path.dirname(abs);
  const one: SearchQuery = { ...q, mode: 'count' };
  await runRg(one, rgArgs(one, 'json', path.basename(abs)), dir, limits, jsonConsumer(one, dir, screen, () => {
    found = true;
    return false;
  }));
  return found;
}
