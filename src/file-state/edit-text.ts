/**
 * The text side of Edit and Write, as Claude Code does it: finding the string
 * to replace (also when the file has curly quotes where the model typed
 * straight ones, or CRLF where it typed LF), applying the replacement, and
 * the snippet and structured patch shown afterwards. Pure functions.
 */
import { countNewlines, detectLineEndings, sliceLines, toCRLF } from './text-file.js';

const LEFT_SINGLE = '\u2018';
const RIGHT_SINGLE = '\u2019';
const LEFT_DOUBLE = '\u201c';
const RIGHT_DOUBLE = '\u201d';
const CURLY = /[\u2018\u2019\u201c\u201d]/g;

export function normalizeQuotes(s: string): string {
  return s.replace(CURLY, (c) => (c === LEFT_DOUBLE || c === RIGHT_DOUBLE ? '"' : "'"));
}

/** The text in `file` that `search` stands for: itself, or its spelling with the file's curly quotes. */
export function findActualString(file: string, search: string): string | undefined {
  if (file.includes(search)) return search;
  const i = normalizeQuotes(file).indexOf(normalizeQuotes(search));
  // Each curly quote is one UTF-16 unit, like its straight form, so offsets carry over.
  return i === -1 ? undefined : file.slice(i, i + search.length);
}

/** Where the file had curly quotes, the model's straight quotes in the new text become curly too. */
export function preserveQuoteStyle(oldString: string, actualOld: string, newString: string): string {
  if (oldString === actualOld) return newString;
  const doubles = actualOld.includes(LEFT_DOUBLE) || actualOld.includes(RIGHT_DOUBLE);
  const singles = actualOld.includes(LEFT_SINGLE) || actualOld.includes(RIGHT_SINGLE);
  let out = '';
  for (let i = 0; i < newString.length; i++) {
    const c = newString[i]!;
    const opening = i === 0 || /[\s([{\u2014\u2013-]/.test(newString[i - 1]!);
    if (c === '"' && doubles) out += opening ? LEFT_DOUBLE : RIGHT_DOUBLE;
    else if (c === "'" && singles) out += opening ? LEFT_SINGLE : RIGHT_SINGLE;
    else out += c;
  }
  return out;
}

export function countOccurrences(text: string, search: string): number {
  if (search.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf(search); i !== -1; i = text.indexOf(search, i + search.length)) n++;
  return n;
}

/**
 * Claude Code's applyEditToFile: deleting a whole line (empty new text, old
 * text without its newline) takes the line's newline with it.
 */
export function applyEditToFile(content: string, oldString: string, newString: string, replaceAll: boolean, eol = '\n'): string {
  const apply = (search: string): string =>
    replaceAll ? content.replaceAll(search, () => newString) : content.replace(search, () => newString);
  if (newString !== '') return apply(oldString);
  const withEol = oldString + eol;
  if (!oldString.endsWith(eol) && !oldString.endsWith('\n') && content.includes(withEol)) return apply(withEol);
  return apply(oldString);
}

export interface PlannedEdit {
  /** The text actually replaced (quotes and line endings as in the file). */
  oldString: string;
  /** The text actually written. */
  newString: string;
  /** Occurrences of oldString in the file. */
  count: number;
  updated: string;
}

/** The edit as it will be applied, or undefined when the text to replace is not in the file. */
export function planEdit(file: string, oldString: string, newString: string, replaceAll: boolean): PlannedEdit | undefined {
  if (oldString === '') return { oldString, newString, count: file.length === 0 ? 1 : 0, updated: newString };
  const crlf = detectLineEndings(file) === 'CRLF';
  // A model types LF; in a CRLF file the same lines are spelt with CRLF.
  const candidates = crlf && /(^|[^\r])\n/.test(oldString) ? [oldString, toCRLF(oldString)] : [oldString];
  for (const candidate of candidates) {
    const actual = findActualString(file, candidate);
    if (actual === undefined) continue;
    let actualNew = crlf ? toCRLF(newString) : newString;
    actualNew = preserveQuoteStyle(candidate, actual, actualNew);
    const updated = applyEditToFile(file, actual, actualNew, replaceAll, crlf ? '\r\n' : '\n');
    return { oldString: actual, newString: actualNew, count: countOccurrences(file, actual), updated };
  }
  return undefined;
}

/** Lines of context around an edit in its snippet, as in Claude Code. */
export const SNIPPET_CONTEXT_LINES = 4;
/** Longest snippet returned to the model. */
export const MAX_SNIPPET_LINES = 2000;

/** Lines `firstLine` (0-based) to `firstLine + changedLines` of the new text, with context around them. */
export function snippetLines(
  updated: string,
  firstLine: number,
  changedLines: number,
  contextLines = SNIPPET_CONTEXT_LINES,
): { lines: string[]; startLine: number; clipped: boolean } {
  const start = Math.max(0, firstLine - contextLines);
  const want = firstLine - start + changedLines + contextLines;
  const lines = sliceLines(updated, start, Math.min(want, MAX_SNIPPET_LINES));
  return { lines, startLine: start + 1, clipped: want > MAX_SNIPPET_LINES };
}

/** Claude Code's getSnippet: the edit's first replacement in the new file, with 4 lines around it. */
export function getSnippet(
  original: string,
  oldString: string,
  newString: string,
  updated: string,
): { lines: string[]; startLine: number; clipped: boolean } {
  const at = oldString === '' ? 0 : Math.max(0, original.indexOf(oldString));
  return snippetLines(updated, countNewlines(original, at), newString.split(/\r?\n/).length);
}

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Lines of context in a structured patch, as in `diff -u`. */
const PATCH_CONTEXT = 3;
/** A patch larger than this is left out (the result says it changed; the patch would only cost memory). */
const MAX_PATCH_LINES = 10_000;

function splitBlock(block: string): string[] {
  if (block.length === 0) return [];
  const lines = block.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/**
 * One hunk covering everything between the common head and tail of the two
 * texts, in whole lines with 3 lines of context. Exact for a single change;
 * for changes far apart (replace_all) it is one larger hunk, still a valid
 * patch. Linear in the texts' length, without splitting them whole.
 */
export function structuredPatch(before: string, after: string): Hunk[] {
  if (before === after) return [];
  const n = Math.min(before.length, after.length);
  let p = 0;
  while (p < n && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  let s = 0;
  while (s < n - p && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s)) s++;
  const lineStart = before.lastIndexOf('\n', p - 1) + 1;
  // Extend both changed ends to the end of the line (the tails are equal, so by the same amount).
  let endA = before.length - s;
  let endB = after.length - s;
  const atLineEnd = (t: string, x: number): boolean => x === lineStart || x === t.length || t.charCodeAt(x - 1) === 10;
  if (!atLineEnd(before, endA) || !atLineEnd(after, endB)) {
    const nl = before.indexOf('\n', endA);
    const d = (nl === -1 ? before.length : nl + 1) - endA;
    endA += d;
    endB += d;
  }
  const oldBlock = splitBlock(before.slice(lineStart, endA));
  const newBlock = splitBlock(after.slice(lineStart, endB));
  if (oldBlock.length + newBlock.length > MAX_PATCH_LINES) return [];
  const firstLine = countNewlines(before, lineStart);
  const ctxFrom = Math.max(0, firstLine - PATCH_CONTEXT);
  const head = sliceLines(before, ctxFrom, firstLine - ctxFrom);
  const tail = endA < before.length ? sliceLines(before.slice(endA), 0, PATCH_CONTEXT) : [];
  const lines = [
    ...head.map((l) => ` ${l}`),
    ...oldBlock.map((l) => `-${l}`),
    ...newBlock.map((l) => `+${l}`),
    ...tail.map((l) => ` ${l}`),
  ];
  return [
    {
      oldStart: ctxFrom + 1,
      oldLines: head.length + oldBlock.length + tail.length,
      newStart: ctxFrom + 1,
      newLines: head.length + newBlock.length + tail.length,
      lines,
    },
  ];
}
