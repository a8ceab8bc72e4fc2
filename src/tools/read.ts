/**
 * Read: a file's text with line numbers (cat -n), an image as an image block,
 * a notebook as its cells, or a persisted result (`result://<id>`). Records
 * what it read in the session's FileStateCache for Edit and Write.
 * Limits as in Claude Code: 2,000 lines by default; 256 KB unless a limit
 * is given; 25,000 tokens of output. Only regular files are opened, and
 * without blocking, so a FIFO or a device is a quick error, never a hang.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { fileStateKey } from '../file-state/cache.js';
import { assertRegularFile, countNewlines, fileIdentity, decodeText, fileNotFoundMessage, formatFileSize, LineWindow, moreThanItsSize, readAt, readAtMost, sliceLines } from '../file-state/text-file.js';
import { ToolError } from '../pipeline/error-class.js';
import { assertOpenedAsJudged, assertStillPermitted, checkPathPermission } from '../permissions/filesystem.js';
import { CHARS_PER_TOKEN, estimateTokens, estimateTokensOfChars } from '../pool/tokens.js';
import { buildTool } from '../tool/build-tool.js';
import type { ContentBlock, ToolContext, ToolResultBlock } from '../tool/types.js';
import { loadPrompt } from './prompt.js';

export const MAX_LINES_TO_READ = 2000;
export const MAX_OUTPUT_SIZE_BYTES = 256 * 1024;
export const MAX_OUTPUT_TOKENS = 25_000;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Files up to this size are read whole; larger ones are streamed line by line. */
const WHOLE_READ_MAX_BYTES = 16 * 1024 * 1024;

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

const RESULT_PREFIX = 'result://';

export const ReadInput = z.strictObject({
  file_path: z.string().min(1).describe('The absolute path to the file to read, or a result://<id> reference'),
  offset: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('The line number to start reading from. Only provide if the file is too large to read at once'),
  limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('The number of lines to read. Only provide if the file is too large to read at once.'),
});
export type ReadInput = z.infer<typeof ReadInput>;

/**
 * Claude Code's Read output, which its PostToolUse hooks read as
 * `tool_response.file` (`.file.content` is the text without line numbers).
 * `totalLines` is null only for a file over 16 MB read as a window, whose
 * lines are not all counted.
 */
export interface ReadTextFile {
  filePath: string;
  content: string;
  numLines: number;
  startLine: number;
  totalLines: number | null;
}

/** A notebook cell as Claude Code's Read gives it to hooks (`tool_response.file.cells`). */
export interface NotebookCellSource {
  cellType: string;
  source: string;
  execution_count?: number;
  cell_id: string;
  language?: string;
  /** Each output's text; image outputs are named, not included. */
  outputs?: Array<{ output_type: string; text?: string }>;
}

/**
 * Our fields (what mapToolResultToToolResultBlockParam uses) and, under
 * `file`, Claude Code's for the same kind. The `file` objects share their
 * strings with ours; only a text read's raw content is a string of its own
 * (a slice of the file's text when the read was whole).
 */
export type ReadOutput =
  | {
      type: 'text';
      filePath: string;
      content: string;
      numLines: number;
      startLine: number;
      totalLines: number | null;
      file: ReadTextFile;
      /** An empty read (an empty file, an offset past the end): what the model gets instead of the empty content. */
      warning?: string;
    }
  | {
      type: 'image';
      filePath: string;
      mediaType: string;
      base64: string;
      bytes: number;
      file: { base64: string; type: string; originalSize: number };
    }
  | { type: 'notebook'; filePath: string; cells: string; file: { filePath: string; cells: NotebookCellSource[] } };

/**
 * An empty read (an empty file, an offset past the end). Claude Code answers
 * it as a text read with empty content, `{type: "text", file}`, and gives the
 * model a warning instead (FileReadTool's mapToolResultToToolResultBlockParam):
 * hooks keyed on `tool_response.type` see a text read.
 */
function emptyRead(filePath: string, startLine: number, totalLines: number | null, warning: string): ReadOutput {
  const file: ReadTextFile = { filePath, content: '', numLines: 0, startLine, totalLines };
  return { type: 'text', filePath, content: '', numLines: 0, startLine, totalLines, file, warning };
}

function numbered(lines: readonly string[], startLine: number): string {
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) out += '\n';
    out += `${String(startLine + i).padStart(6)}\t${lines[i]}`;
  }
  return out;
}

function tooManyTokens(tokens: number, atLeast = false): ToolError {
  return new ToolError(
    `File content (${atLeast ? 'over ' : ''}${tokens} tokens) exceeds maximum allowed tokens (${MAX_OUTPUT_TOKENS}). Please use offset and limit parameters to read specific portions of the file, or use the Grep tool to search for specific content.`,
    'tool_error',
  );
}

/** Opens a regular file without ever blocking on a FIFO or a device. */
function openRegular(abs: string, cwd: string): { fd: number; stat: fs.Stats } {
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ToolError(fileNotFoundMessage(abs, cwd), 'not_found');
    throw e;
  }
  assertRegularFile(abs, st);
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, open still returns at once.
  const fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const fst = fs.fstatSync(fd);
    assertRegularFile(abs, fst);
    return { fd, stat: fst };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** A name of the opened file itself, for its identity (device and inode): the path may name another file by now. */
function fdPath(fd: number): string | undefined {
  const p = `/proc/self/fd/${fd}`;
  return fs.existsSync(p) ? p : undefined;
}

/**
 * Where an open descriptor really is (Linux's /proc/self/fd), or elsewhere
 * the path resolved now. A file unlinked since it was opened has no path to
 * judge: refused.
 */
function openedPath(fd: number, abs: string): string {
  let p: string;
  try {
    p = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return fs.realpathSync(abs);
  }
  if (p.endsWith(' (deleted)')) throw new ToolError(`${abs} was removed while it was being opened.`, 'io');
  return p;
}

/** A NUL in the first 8 KB marks a binary file. */
function looksBinary(data: Buffer | string): boolean {
  const n = Math.min(data.length, 8192);
  if (typeof data === 'string') return data.slice(0, n).includes('\u0000');
  for (let i = 0; i < n; i++) if (data[i] === 0) return true;
  return false;
}

/**
 * A whole file's lines joined by \n, without a copy when it can be had as a
 * slice of the text itself (no CR, at most one final newline dropped).
 */
function rawOfWhole(whole: string): string | undefined {
  if (whole.includes('\r')) return undefined;
  return whole.endsWith('\n') ? whole.slice(0, -1) : whole;
}

/** Bytes read at a time from a file too large to be read whole. */
const STREAM_CHUNK_BYTES = 1 << 20;
/**
 * Characters a streamed window may hold: past this its output is over the
 * token limit whatever its numbering, so it is refused before it is held.
 */
const STREAM_WINDOW_MAX_CHARS = MAX_OUTPUT_TOKENS * CHARS_PER_TOKEN;

/**
 * Lines [start, start + limit) of a file too large to be read whole, split as
 * a whole read does (\n, the \r of CRLF dropped). Read a chunk at a time from the
 * already-opened (regular, non-blocking) descriptor: the lines before the
 * window are skipped without being held, and a window line longer than the
 * output can carry (a file of one multi-gigabyte line) is refused as soon as
 * it is, so memory stays bounded whatever the file holds.
 */
async function readWindowStreaming(fd: number, start: number, limit: number, signal: AbortSignal): Promise<string[]> {
  const buf = Buffer.alloc(STREAM_CHUNK_BYTES);
  const decoder = new StringDecoder('utf8');
  const window = new LineWindow(start, limit, { maxChars: STREAM_WINDOW_MAX_CHARS, dropCr: true });
  for (let pos = 0; ; ) {
    if (signal.aborted) throw Object.assign(new Error('The read was cancelled'), { name: 'AbortError' });
    const { bytesRead } = await readAt(fd, buf, 0, buf.length, pos);
    pos += bytesRead;
    const more = window.feed(bytesRead === 0 ? decoder.end() : decoder.write(buf.subarray(0, bytesRead)));
    if (window.overflow) throw tooManyTokens(estimateTokensOfChars(window.held), true);
    if (!more || bytesRead === 0) return window.finish();
  }
}

function parseNotebook(text: string, abs: string): NotebookCellSource[] {
  let nb: {
    cells?: Array<{ cell_type?: string; id?: string; source?: string | string[]; outputs?: unknown[]; execution_count?: unknown }>;
    metadata?: { language_info?: { name?: unknown } };
  };
  try {
    nb = JSON.parse(text) as typeof nb;
  } catch {
    throw new ToolError(`${abs} is not a valid Jupyter notebook (its JSON does not parse)`, 'tool_error');
  }
  if (typeof nb !== 'object' || nb === null || Array.isArray(nb)) {
    throw new ToolError(`${abs} is not a valid Jupyter notebook (its JSON is not an object)`, 'tool_error');
  }
  // Cells and outputs that are not objects are shown empty rather than failing the whole read.
  const obj = <T extends object>(v: unknown): Partial<T> => (typeof v === 'object' && v !== null ? (v as Partial<T>) : {});
  const cells = (Array.isArray(nb.cells) ? nb.cells : []).map((c) => obj<NonNullable<typeof nb.cells>[number]>(c));
  const src = (s: unknown): string => (Array.isArray(s) ? s.join('') : typeof s === 'string' ? s : '');
  // Claude Code's cell language: the notebook's kernel language, python when it names none.
  const name = obj<{ name?: unknown }>(obj<{ language_info?: unknown }>(nb.metadata).language_info).name;
  const language = typeof name === 'string' ? name : 'python';
  return cells.map((c, i): NotebookCellSource => {
    const cellType = c.cell_type ?? 'code';
    const cell: NotebookCellSource = { cellType, source: src(c.source), cell_id: c.id ?? `cell-${i}` };
    if (cellType === 'code') {
      if (typeof c.execution_count === 'number' && c.execution_count > 0) cell.execution_count = c.execution_count;
      cell.language = language;
    }
    if (Array.isArray(c.outputs)) {
      cell.outputs = c.outputs.map((o) => {
        const x = obj<{ output_type?: unknown; text?: unknown; data?: Record<string, unknown>; ename?: string; evalue?: string }>(o);
        const type = typeof x.output_type === 'string' ? x.output_type : 'unknown';
        let text = '';
        if (x.text !== undefined) text = src(x.text);
        else if (x.data && x.data['text/plain'] !== undefined) text = src(x.data['text/plain']);
        else if (x.data && x.data['image/png'] !== undefined) text = '[image/png output]';
        else if (x.ename) text = `${x.ename}: ${x.evalue ?? ''}`;
        return text.length > 0 ? { output_type: type, text } : { output_type: type };
      });
    }
    return cell;
  });
}

/** The cells as the model reads them. */
function renderNotebook(cells: readonly NotebookCellSource[]): string {
  return cells
    .map((c) => {
      const outputs = (c.outputs ?? []).map((o) => o.text ?? '').filter((s) => s.length > 0);
      return (
        `<cell id="${c.cell_id}"><cell_type>${c.cellType}</cell_type>${c.source}</cell>` +
        (outputs.length > 0 ? `\n<outputs id="${c.cell_id}">${outputs.join('\n')}</outputs>` : '')
      );
    })
    .join('\n');
}

async function readResult(input: ReadInput, ctx: ToolContext): Promise<ReadOutput> {
  const id = input.file_path.slice(RESULT_PREFIX.length);
  const start = Math.max(0, (input.offset ?? 1) - 1);
  const limit = input.limit ?? MAX_LINES_TO_READ;
  const r = ctx.results.readLines(id, start, limit, STREAM_WINDOW_MAX_CHARS);
  if (!r) throw new ToolError(`No stored result ${input.file_path}`, 'not_found');
  if (r.overflow) throw tooManyTokens(MAX_OUTPUT_TOKENS, true);
  if (r.lines.length === 0) {
    return emptyRead(
      input.file_path,
      start + 1,
      r.totalLines,
      r.totalLines === 0
        ? '<system-reminder>Warning: the stored result is empty.</system-reminder>'
        : `<system-reminder>Warning: the stored result is shorter than the provided offset (${input.offset}). It has ${r.totalLines} lines.</system-reminder>`,
    );
  }
  const content = numbered(r.lines, start + 1);
  const tokens = estimateTokens(content);
  if (tokens > MAX_OUTPUT_TOKENS) throw tooManyTokens(tokens);
  const file: ReadTextFile = { filePath: input.file_path, content: r.lines.join('\n'), numLines: r.lines.length, startLine: start + 1, totalLines: r.totalLines };
  return { type: 'text', filePath: input.file_path, content, numLines: r.lines.length, startLine: start + 1, totalLines: r.totalLines, file };
}

async function readFile(input: ReadInput, ctx: ToolContext): Promise<ReadOutput> {
  const abs = ctx.workspace.resolve(input.file_path, ctx.session.cwd);
  const ext = path.extname(abs).toLowerCase();
  const { fd, stat } = openRegular(abs, ctx.session.cwd);
  const timestamp = Math.floor(stat.mtimeMs);
  const identity = fileIdentity(stat);
  const key = fileStateKey(ctx.workspace, abs);
  try {
    // The permission check judged the path before; the file opened is judged now (a symlink may have moved).
    const opened = openedPath(fd, abs);
    assertStillPermitted('read', 'Read', opened, ctx, fdPath(fd));
    assertOpenedAsJudged('read', 'Read', opened, ctx);
    // Had the name been replaced meanwhile (the opened file losing a name it shared with a denied one), it would show now.
    if (openedPath(fd, abs) !== opened) throw new ToolError(`${abs} changed while it was being opened.`, 'io');
    const media = IMAGE_TYPES[ext];
    if (media) {
      if (stat.size > MAX_IMAGE_BYTES) {
        throw new ToolError(`Image ${abs} is ${stat.size} bytes; at most ${MAX_IMAGE_BYTES} bytes can be read.`, 'tool_error');
      }
      const buf = await readAtMost(fd, MAX_IMAGE_BYTES, stat.size);
      if (buf.length > MAX_IMAGE_BYTES) throw moreThanItsSize(abs, stat.size);
      const base64 = buf.toString('base64');
      return {
        type: 'image',
        filePath: abs,
        mediaType: media,
        base64,
        bytes: buf.length,
        file: { base64, type: media, originalSize: buf.length },
      };
    }
    // As in Claude Code, the size limit applies only when no limit bounds the read.
    if (input.limit === undefined && stat.size > MAX_OUTPUT_SIZE_BYTES) {
      throw new ToolError(
        `File content (${formatFileSize(stat.size)}) exceeds maximum allowed size (${formatFileSize(MAX_OUTPUT_SIZE_BYTES)}). Please use offset and limit parameters to read specific portions of the file, or use the Grep tool to search for specific content.`,
        'tool_error',
      );
    }
    const start = Math.max(0, (input.offset ?? 1) - 1);
    const limit = input.limit ?? MAX_LINES_TO_READ;
    let window: string[];
    let totalLines: number | null;
    let whole: string | undefined;
    if (stat.size <= WHOLE_READ_MAX_BYTES) {
      // stat.size bounds the read only for files that tell their size (a /proc file says 0).
      const cap = input.limit === undefined ? MAX_OUTPUT_SIZE_BYTES : WHOLE_READ_MAX_BYTES;
      const data = await readAtMost(fd, cap, stat.size);
      if (data.length > WHOLE_READ_MAX_BYTES) throw moreThanItsSize(abs, stat.size);
      if (data.length > MAX_OUTPUT_SIZE_BYTES && input.limit === undefined) {
        throw new ToolError(
          `File content (more than ${formatFileSize(MAX_OUTPUT_SIZE_BYTES)}) exceeds maximum allowed size (${formatFileSize(MAX_OUTPUT_SIZE_BYTES)}). Please use offset and limit parameters to read specific portions of the file, or use the Grep tool to search for specific content.`,
          'tool_error',
        );
      }
      const decoded = decodeText(data);
      if (decoded.encoding === 'utf8' && looksBinary(decoded.content)) {
        throw new ToolError(`${abs} appears to be a binary file; this tool cannot read binary files.`, 'tool_error');
      }
      whole = decoded.content;
      if (ext === '.ipynb') {
        const parsed = parseNotebook(whole, abs);
        const cells = renderNotebook(parsed);
        const tokens = estimateTokens(cells);
        if (tokens > MAX_OUTPUT_TOKENS) throw tooManyTokens(tokens);
        ctx.session.fileState.set(key, { content: whole, timestamp, offset: undefined, limit: undefined, isPartialView: false, identity });
        return { type: 'notebook', filePath: abs, cells, file: { filePath: abs, cells: parsed } };
      }
      // Counted and sliced in place: a 16 MB file of newlines would otherwise be an array of 16 million strings.
      totalLines = countNewlines(whole) + (whole.length > 0 && !whole.endsWith('\n') ? 1 : 0);
      window = sliceLines(whole, start, limit);
    } else {
      const head = Buffer.alloc(8192);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      if (looksBinary(head.subarray(0, n))) {
        throw new ToolError(`${abs} appears to be a binary file; this tool cannot read binary files.`, 'tool_error');
      }
      window = await readWindowStreaming(fd, start, limit, ctx.signal);
      totalLines = null;
    }
    if (whole !== undefined && whole.length === 0) {
      ctx.session.fileState.set(key, { content: '', timestamp, offset: undefined, limit: undefined, isPartialView: false, identity });
      return emptyRead(abs, start + 1, 0, '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>');
    }
    if (window.length === 0) {
      return emptyRead(
        abs,
        start + 1,
        totalLines,
        `<system-reminder>Warning: the file exists but is shorter than the provided offset (${input.offset}). The file has ${totalLines ?? 'fewer'} lines.</system-reminder>`,
      );
    }
    const content = numbered(window, start + 1);
    const tokens = estimateTokens(content);
    if (tokens > MAX_OUTPUT_TOKENS) throw tooManyTokens(tokens);
    const complete = whole !== undefined && start === 0 && totalLines !== null && window.length === totalLines;
    const raw = complete ? rawOfWhole(whole!) ?? window.join('\n') : window.join('\n');
    ctx.session.fileState.set(key, {
      // A complete read keeps the content for Edit's content-equality fallback.
      content: complete ? whole! : raw,
      timestamp,
      offset: input.offset,
      limit: input.limit,
      isPartialView: false,
      identity,
    });
    const file: ReadTextFile = { filePath: abs, content: raw, numLines: window.length, startLine: start + 1, totalLines };
    return { type: 'text', filePath: abs, content, numLines: window.length, startLine: start + 1, totalLines, file };
  } finally {
    fs.closeSync(fd);
  }
}

export const readTool = buildTool({
  name: 'Read',
  searchHint: 'read file contents with line numbers',
  description: loadPrompt(new URL('./read.md', import.meta.url)),
  inputSchema: ReadInput,
  maxResultSizeChars: Number.POSITIVE_INFINITY,
  mayBeReadOnly: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  getPath: (input) => input.file_path,
  backfillObservableInput: (input, expandPath) => (input.file_path.length > 0 && !input.file_path.startsWith('result://') ? { ...input, file_path: expandPath(input.file_path) } : input),
  validateInput: async (input, ctx) => {
    if (input.file_path.startsWith(RESULT_PREFIX) && !ctx.results.exists(input.file_path.slice(RESULT_PREFIX.length))) {
      return { ok: false, message: `No stored result ${input.file_path}`, code: 1 };
    }
    return { ok: true };
  },
  checkPermissions: async (input, ctx) => {
    if (input.file_path.startsWith(RESULT_PREFIX)) {
      return { behavior: 'allow', type: 'tool', detail: 'stored results of this service' };
    }
    return checkPathPermission('read', 'Read', input.file_path, ctx);
  },
  call: async (input, ctx) => ({
    data: input.file_path.startsWith(RESULT_PREFIX) ? await readResult(input, ctx) : await readFile(input, ctx),
  }),
  renderToolUseMessage: (input) => `Read(${input.file_path})`,
  getToolUseSummary: (input) => input.file_path,
  renderToolResultMessage: (out) =>
    out.type === 'text'
      ? out.warning !== undefined
        ? 'Empty'
        : `Read ${out.numLines} lines`
      : out.type === 'image'
        ? `Read image (${out.bytes} bytes)`
        : 'Read notebook',
  toAutoClassifierInput: (input) => input.file_path,
  mapToolResultToToolResultBlockParam: (out, toolUseId): ToolResultBlock => {
    switch (out.type) {
      case 'image': {
        const content: ContentBlock[] = [{ type: 'image', source: { type: 'base64', media_type: out.mediaType, data: out.base64 } }];
        return { type: 'tool_result', tool_use_id: toolUseId, content };
      }
      case 'notebook':
        return { type: 'tool_result', tool_use_id: toolUseId, content: out.cells };
      default:
        return { type: 'tool_result', tool_use_id: toolUseId, content: out.warning ?? out.content };
    }
  },
});
