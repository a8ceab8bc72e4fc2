// The per-file rules both Grep engines share: what counts as binary, how a
// file is decoded, which lines are too long to search, how a line is shown,
// and how context is gathered. Plain JavaScript (with types in
// file-scan.d.mts) because the JS engine's worker thread loads it directly;
// the rg engine imports the same functions, so each rule has one definition.

import { Buffer } from 'node:buffer';
import { readRegular } from '../util/read-regular-file.mjs';

/** A file whose first 8 KiB hold a NUL byte is binary and skipped (unless it starts with a UTF-16 BOM). */
export const BINARY_SNIFF_BYTES = 8192;
/** Files larger than this are skipped (rg --max-filesize 20M). */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Lines longer than this (UTF-8 bytes, without the \n) are never searched: minified bundles, data blobs. */
export const MAX_LINE_BYTES = 16 * 1024;
/** A shown line is cut after this many characters. */
export const DISPLAY_MAX_CHARS = 500;

/**
 * A regular file's bytes, read without blocking and never without end, or
 * undefined: what is not a regular file (a FIFO blocks the reader for ever, a
 * device never ends), cannot be opened, or holds more than `max` bytes (a
 * /proc file whose stat says 0 may hold gigabytes): util/read-regular-file.mjs,
 * which the permission checks share, read to the end whatever stat says.
 * @param {string} file
 * @param {number} max
 * @returns {Buffer | undefined}
 */
export function readRegularFile(file, max) {
  try {
    return readRegular(file, max, 'to-end');
  } catch {
    return undefined;
  }
}

/** @param {Uint8Array} head the first bytes of a file (at least BINARY_SNIFF_BYTES of it, or all) */
export function isBinaryHead(head) {
  if (head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) return false;
  const n = Math.min(head.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (head[i] === 0) return true;
  return false;
}

const UTF16LE = new TextDecoder('utf-16le');
const UTF16BE = new TextDecoder('utf-16be');

/**
 * A file's text as rg reads it (--encoding auto): a UTF-8 BOM is dropped,
 * UTF-16 with a BOM is transcoded, everything else is UTF-8 with invalid
 * bytes shown as U+FFFD.
 * @param {Buffer} buf
 */
export function decodeText(buf) {
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return buf.toString('utf8', 3);
  if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) return UTF16LE.decode(buf.subarray(2));
  if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) return UTF16BE.decode(buf.subarray(2));
  return buf.toString('utf8');
}

/** @param {string} line a line without its \n */
export function isLongLine(line) {
  if (line.length > MAX_LINE_BYTES) return true;
  if (line.length * 3 <= MAX_LINE_BYTES) return false;
  return Buffer.byteLength(line, 'utf8') > MAX_LINE_BYTES;
}

/** @param {string} line a line without its \n; a trailing \r is not shown, a NUL is shown as U+FFFD */
export function displayLine(line) {
  let s = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (s.includes('\0')) s = s.replaceAll('\0', '\uFFFD');
  if (s.length <= DISPLAY_MAX_CHARS) return s;
  let cut = DISPLAY_MAX_CHARS;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut -= 1;
  return `${s.slice(0, cut)} [... line truncated, ${s.length} characters in all]`;
}

/** @param {string} text @returns {string[]} lines without their \n (a final \n ends the last line, it does not start one) */
export function splitLines(text) {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The lines to show: each matched line with `before`/`after` lines of
 * context around it, in order, without repeats.
 * @param {number[]} matched 1-based line numbers, ascending
 * @param {number} before
 * @param {number} after
 * @param {(n: number) => string | undefined} getLine the line's text, undefined past the end
 * @returns {Array<[number, string, boolean]>} [line number, shown text, is a match]
 */
export function assembleLines(matched, before, after, getLine) {
  /** @type {Array<[number, string, boolean]>} */
  const out = [];
  const isMatch = new Set(matched);
  let next = 1;
  for (const m of matched) {
    const from = Math.max(next, m - before, 1);
    const to = m + after;
    for (let n = from; n <= to; n++) {
      const text = getLine(n);
      if (text === undefined) break;
      out.push([n, displayLine(text), isMatch.has(n)]);
      next = n + 1;
    }
  }
  return out;
}

/** @param {number[]} starts offsets where lines start @param {number} off @returns {number} 0-based line index */
function lineAt(starts, off) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= off) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Searches one decoded file (the JS engine's matcher).
 * @param {string} text
 * @param {{ line: RegExp, whole: RegExp | undefined, mode: 'files' | 'count' | 'content', before: number, after: number }} spec
 *   `line` tests one line; `whole` (global, multiline mode where the pattern can match \n) runs over the whole text
 * @returns {{ count: number, lines: Array<[number, string, boolean]> | undefined } | undefined} undefined: no match
 */
export function searchText(text, spec) {
  const lines = splitLines(text);
  /** @type {number[]} */
  const matched = [];
  let count = 0;
  if (!spec.whole) {
    for (let i = 0; i < lines.length; i++) {
      const l = /** @type {string} */ (lines[i]);
      if (isLongLine(l) || !spec.line.test(l)) continue;
      if (spec.mode === 'files') return { count: 1, lines: undefined };
      matched.push(i + 1);
    }
    count = matched.length;
  } else {
    const starts = new Array(lines.length);
    let off = 0;
    for (let i = 0; i < lines.length; i++) {
      starts[i] = off;
      off += /** @type {string} */ (lines[i]).length + 1;
    }
    const long = lines.map(isLongLine);
    const set = new Set();
    const re = spec.whole;
    let pos = 0;
    let prevEnd = -1;
    while (pos <= text.length) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m) break;
      const s = m.index;
      const e = s + m[0].length;
      const first = lineAt(starts, s);
      const last = e > s ? lineAt(starts, e - 1) : first;
      // An empty match after a final \n is on no line.
      if (first < lines.length && !(s === e && s === text.length && text.endsWith('\n'))) {
        let touchesLong = false;
        for (let k = first; k <= last; k++) if (long[k]) touchesLong = true;
        if (!touchesLong) {
          if (spec.mode === 'files') return { count: 1, lines: undefined };
          for (let k = first; k <= last; k++) set.add(k + 1);
          // Rust's find_iter never reports an empty match where the previous match ended
          // (rg counts over blocks of adjacent matched lines, so this holds across lines too).
          if (!(s === e && s === prevEnd)) count++;
        }
      }
      prevEnd = e;
      if (e > s) pos = e;
      else {
        const cu = text.charCodeAt(e);
        pos = cu >= 0xd800 && cu <= 0xdbff ? e + 2 : e + 1;
      }
    }
    for (const n of set) matched.push(n);
    matched.sort((a, b) => a - b);
  }
  if (matched.length === 0) return undefined;
  if (spec.mode !== 'content') return { count, lines: undefined };
  return { count, lines: assembleLines(matched, spec.before, spec.after, (n) => lines[n - 1]) };
}
