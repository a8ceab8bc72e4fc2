/**
 * NotebookEdit: replaces, inserts or deletes one cell of a Jupyter notebook,
 * as Claude Code's NotebookEditTool. Cells are named by their `id`, or
 * `cell-N` (0-based index) as Read shows cells without one. The notebook must
 * have been read in this session and not changed since; the write is atomic,
 * keeps the file's line endings and final newline, and updates the
 * FileStateCache.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { writeFileAtomic, writeTarget } from '../file-state/atomic-write.js';
import { fileStateKey, freshness } from '../file-state/cache.js';
import { detectLineEndings, encodeText, fileIdentity, readTextFile, toCRLF } from '../file-state/text-file.js';
import { ToolError } from '../pipeline/error-class.js';
import { checkPathPermission } from '../permissions/filesystem.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext, ValidationResult } from '../tool/types.js';
import { assertFresh, FILE_MODIFIED_SINCE_READ, FILE_NOT_READ, MAX_EDIT_FILE_SIZE } from './edit.js';
import { loadPrompt } from './prompt.js';
import { sliceWhole } from '../util/text.js';
import { isPlainObject } from '../util/object.js';

/** Claude Code writes notebooks with a one-space indent, as Jupyter does. */
const IPYNB_INDENT = 1;

export const NotebookEditInput = z.strictObject({
  notebook_path: z
    .string()
    .min(1)
    .describe('The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)'),
  cell_id: z
    .string()
    .optional()
    .describe(
      'The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified.',
    ),
  new_source: z.string().describe('The new source for the cell'),
  cell_type: z
    .enum(['code', 'markdown'])
    .optional()
    .describe(
      'The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required.',
    ),
  edit_mode: z
    .enum(['replace', 'insert', 'delete'])
    .optional()
    .describe('The type of edit to make (replace, insert, delete). Defaults to replace.'),
});
export type NotebookEditInput = z.infer<typeof NotebookEditInput>;

/** Claude Code's NotebookEditOutput. */
export interface NotebookEditOutput {
  new_source: string;
  old_source?: string | undefined;
  cell_id?: string | undefined;
  cell_type: 'code' | 'markdown';
  language: string;
  edit_mode: 'replace' | 'insert' | 'delete';
  notebook_path: string;
  original_file: string;
  updated_file: string;
}

interface Cell {
  cell_type?: string;
  id?: string;
  source?: string | string[];
  metadata?: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
  [k: string]: unknown;
}
interface Notebook {
  cells: Cell[];
  metadata?: { language_info?: { name?: string } } & Record<string, unknown>;
  nbformat?: number;
  nbformat_minor?: number;
  [k: string]: unknown;
}

/** The notebook, or why it is not one. */
function parseNotebook(text: string): Notebook | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'Notebook is not valid JSON.';
  }
  if (!isPlainObject(v) || !Array.isArray((v as Notebook).cells) || !(v as Notebook).cells.every(isPlainObject)) {
    return 'Notebook is not a Jupyter notebook: it needs a "cells" list of cell objects.';
  }
  return v as Notebook;
}

/** `cell-N` → N. */
function parseCellIndex(cellId: string): number | undefined {
  const m = /^cell-(\d+)$/.exec(cellId);
  return m ? Number(m[1]) : undefined;
}

/** The index of the cell named by id (or `cell-N`), or undefined. */
function findCell(nb: Notebook, cellId: string): number | undefined {
  const i = nb.cells.findIndex((c) => c.id === cellId);
  if (i !== -1) return i;
  const n = parseCellIndex(cellId);
  return n !== undefined && n < nb.cells.length ? n : undefined;
}

const sourceText = (s: unknown): string => (Array.isArray(s) ? s.join('') : typeof s === 'string' ? s : '');

function fail(code: number, message: string): ValidationResult {
  return { ok: false, message, code };
}

/** The cell checks, shared by validation and the call: a message and code, or undefined. */
function cellProblem(nb: Notebook, input: NotebookEditInput): { code: number; message: string } | undefined {
  if (!input.cell_id) {
    return (input.edit_mode ?? 'replace') === 'insert'
      ? undefined
      : { code: 7, message: 'Cell ID must be specified when not inserting a new cell.' };
  }
  if (findCell(nb, input.cell_id) !== undefined) return undefined;
  const n = parseCellIndex(input.cell_id);
  return n !== undefined
    ? { code: 7, message: `Cell with index ${n} does not exist in notebook.` }
    : { code: 8, message: `Cell with ID "${input.cell_id}" not found in notebook.` };
}

async function validate(input: NotebookEditInput, ctx: ToolContext): Promise<ValidationResult> {
  const abs = ctx.workspace.resolve(input.notebook_path, ctx.session.cwd);
  if (path.extname(abs).toLowerCase() !== '.ipynb') {
    return fail(2, 'File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.');
  }
  if ((input.edit_mode ?? 'replace') === 'insert' && !input.cell_type) return fail(5, 'Cell type is required when using edit_mode=insert.');
  // Outside the working directories nothing is looked at before the permission
  // layer has asked: call() checks the notebook again once allowed.
  if (!ctx.workspace.contains(abs)) return { ok: true };
  const file = await readTextFile(abs, MAX_EDIT_FILE_SIZE);
  if (!file) return fail(1, 'Notebook file does not exist.');
  const f = freshness(ctx.session.fileState.get(fileStateKey(ctx.workspace, abs)), file.mtimeMs, undefined, false, file.identity);
  if (f === 'unread' || f === 'partial') return fail(9, FILE_NOT_READ);
  if (f === 'stale') return fail(10, FILE_MODIFIED_SINCE_READ);
  const nb = parseNotebook(file.content);
  if (typeof nb === 'string') return fail(6, nb);
  const problem = cellProblem(nb, input);
  return problem ? fail(problem.code, problem.message) : { ok: true };
}

async function run(input: NotebookEditInput, ctx: ToolContext): Promise<NotebookEditOutput> {
  const abs = ctx.workspace.resolve(input.notebook_path, ctx.session.cwd);
  const target = writeTarget(abs, ctx, 'NotebookEdit');
  const key = fileStateKey(ctx.workspace, abs);
  const file = await readTextFile(target, MAX_EDIT_FILE_SIZE);
  if (!file) throw new ToolError('Notebook file does not exist.', 'not_found');
  assertFresh(freshness(ctx.session.fileState.get(key), file.mtimeMs, file.content, true, file.identity));
  const nb = parseNotebook(file.content);
  if (typeof nb === 'string') throw new ToolError(nb, 'validation');
  const problem = cellProblem(nb, input);
  if (problem) throw new ToolError(problem.message, 'validation');

  const mode = input.edit_mode ?? 'replace';
  const cellType = input.cell_type;
  let index: number;
  if (!input.cell_id) {
    index = 0;
  } else {
    const found = findCell(nb, input.cell_id)!;
    index = mode === 'insert' ? found + 1 : found;
  }
  const language = nb.metadata?.language_info?.name ?? 'python';
  const hasIds = (nb.nbformat ?? 0) > 4 || (nb.nbformat === 4 && (nb.nbformat_minor ?? 0) >= 5);

  let cellId: string | undefined;
  let oldSource: string | undefined;
  let resultType: 'code' | 'markdown';
  if (mode === 'delete') {
    const [removed] = nb.cells.splice(index, 1);
    oldSource = sourceText(removed?.source);
    cellId = removed?.id ?? input.cell_id;
    resultType = removed?.cell_type === 'markdown' ? 'markdown' : 'code';
  } else if (mode === 'insert') {
    resultType = cellType ?? 'code';
    cellId = hasIds ? randomBytes(8).toString('hex').slice(0, 12) : undefined;
    const cell: Cell =
      resultType === 'markdown'
        ? { cell_type: 'markdown', ...(cellId ? { id: cellId } : {}), metadata: {}, source: input.new_source }
        : { cell_type: 'code', ...(cellId ? { id: cellId } : {}), metadata: {}, execution_count: null, outputs: [], source: input.new_source };
    nb.cells.splice(index, 0, cell);
    cellId ??= `cell-${index}`;
  } else {
    const cell = nb.cells[index]!;
    oldSource = sourceText(cell.source);
    cell.source = input.new_source;
    if (cellType && cellType !== cell.cell_type) {
      cell.cell_type = cellType;
      // A markdown cell has no outputs; a code cell needs them.
      if (cellType === 'markdown') {
        delete cell.outputs;
        delete cell.execution_count;
      }
    }
    if (cell.cell_type === 'code') {
      cell.execution_count = null;
      cell.outputs = [];
    }
    resultType = cell.cell_type === 'markdown' ? 'markdown' : 'code';
    cellId = cell.id ?? input.cell_id;
  }

  let updated = JSON.stringify(nb, null, IPYNB_INDENT);
  if (file.content.endsWith('\n')) updated += '\n';
  if (detectLineEndings(file.content) === 'CRLF') updated = toCRLF(updated);
  await writeFileAtomic(target, encodeText(updated, file.encoding, file.bom), {
    mode: file.mode,
    uid: file.uid,
    gid: file.gid,
    signal: ctx.signal,
  });
  const st = await fs.promises.stat(target);
  ctx.session.fileState.set(key, { content: updated, timestamp: Math.floor(st.mtimeMs), offset: undefined, limit: undefined, isPartialView: false, identity: fileIdentity(st) });
  return {
    new_source: input.new_source,
    old_source: oldSource,
    cell_id: cellId,
    cell_type: resultType,
    language,
    edit_mode: mode,
    notebook_path: abs,
    original_file: file.content,
    updated_file: updated,
  };
}

export const notebookEditTool = buildTool({
  name: 'NotebookEdit',
  searchHint: 'edit Jupyter notebook cells (.ipynb)',
  description: loadPrompt(new URL('./notebook-edit.md', import.meta.url)),
  inputSchema: NotebookEditInput,
  maxResultSizeChars: 100_000,
  shouldDefer: true,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  isDestructive: (input) => input.edit_mode === 'delete',
  getPath: (input) => input.notebook_path,
  backfillObservableInput: (input, expandPath) => (input.notebook_path.length > 0 ? { ...input, notebook_path: expandPath(input.notebook_path) } : input),
  validateInput: validate,
  checkPermissions: async (input, ctx) => checkPathPermission('edit', 'NotebookEdit', input.notebook_path, ctx),
  call: async (input, ctx) => ({ data: await run(input, ctx) }),
  renderToolUseMessage: (input) => `NotebookEdit(${input.notebook_path}${input.cell_id ? `#${input.cell_id}` : ''}, ${input.edit_mode ?? 'replace'})`,
  getToolUseSummary: (input) => input.notebook_path,
  renderToolResultMessage: (out) => `${out.edit_mode} cell ${out.cell_id ?? ''}`.trim(),
  toAutoClassifierInput: (input) => {
    const s = `${input.notebook_path} ${input.edit_mode ?? 'replace'}: ${input.new_source}`;
    return s.length > 2000 ? `${sliceWhole(s, 2000)}…` : s;
  },
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    const text =
      out.edit_mode === 'delete'
        ? `Deleted cell ${out.cell_id}`
        : out.edit_mode === 'insert'
          ? `Inserted cell ${out.cell_id} with ${out.new_source}`
          : `Updated cell ${out.cell_id} with ${out.new_source}`;
    return { type: 'tool_result', tool_use_id: toolUseId, content: text };
  },
});
