/**
 * Reading text files for the file tools. Only regular files are opened, and
 * without blocking, so a FIFO, socket or device is a quick error, never a
 * hang. The encoding (UTF-8 with or without a BOM, UTF-16LE with a BOM) and
 * the dominant line ending are detected, so that a write keeps them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ToolError } from '../pipeline/error-class.js';

export type TextEncoding = 'utf8' | 'utf16le';
export type LineEndings = 'CRLF' | 'LF';

export interface TextFile {
  /** The decoded text, BOM removed, line endings untouched. */
  content: string;
  encoding: TextEncoding;
  bom: boolean;
  mtimeMs: number;
  /** Permission bits, kept by an atomic rewrite. */
  mode: number;
  uid: number;
  gid: number;
  size: number;
  /** The file's identity (device and inode, fileIdentity). */
  identity: string;
}

/** A file's identity, device and inode: what a FileState records beside the mtime (file-state/cache.ts). */
export function fileIdentity(st: Pick<fs.Stats, 'dev' | 'ino'>): string {
  return `${st.dev}:${st.ino}`;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);

/** Claude Code's formatFileSize: `512 bytes`, `256KB`, `1.5MB`, `1GB`. */
export function formatFileSize(bytes: number): string {
  const trim = (n: number): string => n.toFixed(1).replace(/\.0$/, '');
  if (bytes < 1024) return `${bytes} bytes`;
  const kb = bytes / 1024;
  if (kb < 1024) return `${trim(kb)}KB`;
  const mb = kb / 1024;
  if (mb < 1024) return `${trim(mb)}MB`;
  return `${trim(mb / 1024)}GB`;
}

export function decodeText(buf: Buffer): { content: string; encoding: TextEncoding; bom: boolean } {
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) {
    return { content: buf.subarray(2).toString('utf16le'), encoding: 'utf16le', bom: true };
  }
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
    return { content: buf.subarray(3).toString('utf8'), encoding: 'utf8', bom: true };
  }
  return { content: buf.toString('utf8'), encoding: 'utf8', bom: false };
}

export function encodeText(content: string, encoding: TextEncoding, bom: boolean): Buffer {
  const body = Buffer.from(content, encoding);
  if (!bom) return body;
  return Buffer.concat([encoding === 'utf16le' ? UTF16LE_BOM : UTF8_BOM, body]);
}

/** Characters sampled to decide a file's line ending. */
const LINE_ENDING_SAMPLE = 1 << 20;

/** CRLF when most line breaks in the (sampled) text are CRLF. */
export function detectLineEndings(content: string): LineEndings {
  const n = Math.min(content.length, LINE_ENDING_SAMPLE);
  let crlf = 0;
  let lf = 0;
  for (let i = content.indexOf('\n'); i !== -1 && i < n; i = content.indexOf('\n', i + 1)) {
    if (i > 0 && content.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > lf ? 'CRLF' : 'LF';
}

export function toCRLF(s: string): string {
  return s.replace(/\r?\n/g, '\r\n');
}

/** `cat -n` numbering, as Read shows it: the number right-aligned in 6 columns, a tab, the line. */
export function addLineNumbers(lines: readonly string[], startLine: number): string {
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) out += '\n';
    out += `${String(startLine + i).padStart(6)}\t${lines[i]}`;
  }
  return out;
}

/**
 * Up to `count` lines of `text` from 0-based line `from`, as Read splits
 * them (a final newline ends the last line rather than starting another; `\r`
 * of CRLF dropped), without splitting the whole text.
 */
export function sliceLines(text: string, from: number, count: number): string[] {
  const out: string[] = [];
  let pos = 0;
  let line = 0;
  while (pos < text.length && out.length < count) {
    const nl = text.indexOf('\n', pos);
    const end = nl === -1 ? text.length : nl;
    if (line >= from) {
      const l = text.slice(pos, end);
      out.push(l.endsWith('\r') ? l.slice(0, -1) : l);
    }
    line++;
    if (nl === -1) break;
    pos = nl + 1;
  }
  return out;
}

/**
 * Lines [start, start + limit) of a text fed piece by piece (a file read a
 * chunk at a time, a stored result's chunks), split as sliceLines splits:
 * lines before the window are counted, not held, and past `maxChars`
 * characters of window lines the window stops (`overflow`), so that one huge
 * line is never gathered whole.
 */
export class LineWindow {
  readonly lines: string[] = [];
  overflow = false;
  /** Characters of window lines taken so far. */
  held = 0;
  private current = '';
  /** Characters seen since the last newline. */
  private open = false;

  constructor(
    private readonly start: number,
    private readonly limit: number,
    private readonly opts: { maxChars?: number; dropCr?: boolean; firstLine?: number } = {},
  ) {
    this.line = opts.firstLine ?? 0;
  }

  private line: number;

  /** Takes the next piece of text; false once the window is full or has overflowed (feed no more). */
  feed(text: string): boolean {
    for (let i = 0; i < text.length; ) {
      const nl = text.indexOf('\n', i);
      const end = nl === -1 ? text.length : nl;
      if (this.line >= this.start && end > i) {
        this.held += end - i;
        if (this.held > (this.opts.maxChars ?? Number.POSITIVE_INFINITY)) {
          this.overflow = true;
          return false;
        }
        this.current += text.slice(i, end);
      }
      this.open = true;
      if (nl === -1) return true;
      this.endLine();
      if (this.lines.length >= this.limit) return false;
      i = nl + 1;
    }
    return true;
  }

  /** The end of the text: a last line without a newline is a line too. */
  finish(): string[] {
    if (this.open && !this.overflow && this.lines.length < this.limit) this.endLine();
    return this.lines;
  }

  private endLine(): void {
    if (this.line >= this.start) this.lines.push(this.opts.dropCr && this.current.endsWith('\r') ? this.current.slice(0, -1) : this.current);
    this.current = '';
    this.open = false;
    this.line++;
  }
}

/** Number of `\n` in text[0, end). */
export function countNewlines(text: string, end = text.length): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Claude Code's message for a missing file, with a guess at the file meant when one is near (and may be named). */
export function fileNotFoundMessage(abs: string, cwd: string, suggest = true): string {
  let msg = `File does not exist. Note: your current working directory is ${cwd}.`;
  const similar = suggest ? findSimilarFile(abs) : undefined;
  if (similar) msg += ` Did you mean ${similar}?`;
  return msg;
}

/** Entries looked at when guessing a similar file name. */
const SIMILAR_SCAN_MAX = 1000;

/** A file in the same directory with the same name but another extension, or another case. */
function findSimilarFile(abs: string): string | undefined {
  const dir = path.dirname(abs);
  const base = path.basename(abs);
  const stem = base.slice(0, base.length - path.extname(base).length).toLowerCase();
  let d: fs.Dir | undefined;
  try {
    d = fs.opendirSync(dir);
    for (let i = 0; i < SIMILAR_SCAN_MAX; i++) {
      const e = d.readSync();
      if (!e) break;
      if (!e.isFile() || e.name === base) continue;
      const eStem = e.name.slice(0, e.name.length - path.extname(e.name).length).toLowerCase();
      if (e.name.toLowerCase() === base.toLowerCase() || (stem.length > 0 && eStem === stem)) return path.join(dir, e.name);
    }
  } catch {
    return undefined;
  } finally {
    try {
      d?.closeSync();
    } catch {
      // already closed
    }
  }
  return undefined;
}

/** stat that follows symlinks; undefined when nothing is there. */
export async function statIfExists(abs: string): Promise<fs.Stats | undefined> {
  try {
    return await fs.promises.stat(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/** Refuses what is not a regular file, with a message a model can act on. */
export function assertRegularFile(abs: string, st: fs.Stats): void {
  if (st.isDirectory()) {
    throw new ToolError(`${abs} is a directory, not a file. Use the Glob tool, or ls through the Bash tool, to list it.`, 'io');
  }
  if (!st.isFile()) throw new ToolError(`${abs} is not a regular file (a FIFO, socket or device); it cannot be read or edited.`, 'io');
}

export const readAt = promisify(fs.read);

/**
 * An open file from its start, read until its end or past `max` bytes (by
 * less than 64 KB), so that a result longer than `max` says "more than max". A regular file whose size stat does
 * not tell (/proc/self/pagemap says 0 and holds gigabytes) is never read
 * without end. `sizeHint` (the size stat gave) sizes the first read.
 */
export async function readAtMost(fd: number, max: number, sizeHint = 0): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total <= max) {
    // Whole 64 KB reads past the stated size: some /proc files refuse reads of odd lengths.
    const want = total === 0 && sizeHint > 0 ? Math.min(sizeHint, max) + 1 : 64 * 1024;
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await readAt(fd, buf, 0, want, total);
    if (bytesRead === 0) break;
    chunks.push(bytesRead === want ? buf : buf.subarray(0, bytesRead));
    total += bytesRead;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** Bytes read beyond what stat said, at most: a file that holds more (a /proc file says 0) is refused. */
export const UNSTATED_READ_MAX_BYTES = 16 * 1024 * 1024;

/** The error for a file that held more than its stat size allowed for. */
export function moreThanItsSize(abs: string, size: number): ToolError {
  return new ToolError(`${abs} holds more than its size (${formatFileSize(size)}) says, as a /proc file does; it cannot be read or edited.`, 'io');
}

/**
 * The file's text and metadata, or undefined when it does not exist.
 * `maxBytes` refuses larger files before reading them.
 */
export async function readTextFile(abs: string, maxBytes = Number.POSITIVE_INFINITY): Promise<TextFile | undefined> {
  const st = await statIfExists(abs);
  if (!st) return undefined;
  assertRegularFile(abs, st);
  if (st.size > maxBytes) {
    throw new ToolError(`File is too large (${formatFileSize(st.size)}); at most ${formatFileSize(maxBytes)} can be handled.`, 'tool_error');
  }
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, open still returns at once.
  const fh = await fs.promises.open(abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const fst = await fh.stat();
    assertRegularFile(abs, fst);
    // Twice its stated size (a file may grow meanwhile), and past an empty stat 16 MB, at most.
    const cap = Math.min(maxBytes, Math.max(2 * fst.size, UNSTATED_READ_MAX_BYTES));
    const buf = await readAtMost(fh.fd, cap, fst.size);
    if (buf.length > cap) {
      if (cap === maxBytes) throw new ToolError(`File is too large (more than ${formatFileSize(maxBytes)}); at most ${formatFileSize(maxBytes)} can be handled.`, 'tool_error');
      throw moreThanItsSize(abs, fst.size);
    }
    let decoded: ReturnType<typeof decodeText>;
    try {
      decoded = decodeText(buf);
    } catch (e) {
      // Past V8's longest string (about 512 MiB of text): not an error of ours, but a limit.
      if ((e as NodeJS.ErrnoException).code !== 'ERR_STRING_TOO_LONG') throw e;
      throw new ToolError(`File is too large (${formatFileSize(fst.size)}) to be handled as text; at most about 512MB can be.`, 'tool_error');
    }
    const { content, encoding, bom } = decoded;
    return { content, encoding, bom, mtimeMs: fst.mtimeMs, mode: fst.mode & 0o7777, uid: fst.uid, gid: fst.gid, size: fst.size, identity: fileIdentity(fst) };
  } finally {
    await fh.close();
  }
}
