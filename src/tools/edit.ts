/**
 * Edit: exact string replacement in a file, as Claude Code's FileEditTool.
 * The file must have been read in this session and not changed since (the
 * FileStateCache), checked at validation and again just before writing. The
 * write is atomic, keeps the file's mode, encoding and line endings, and
 * never goes through a symlink out of the working directories; afterwards the
 * cache holds the new content, so a second Edit needs no new Read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic, writeTarget } from '../file-state/atomic-write.js';
import { fileStateKey, freshness, type Freshness } from '../file-state/cache.js';
import { getSnippet, planEdit, structuredPatch, type Hunk } from '../file-state/edit-text.js';
import {
  addLineNumbers,
  encodeText,
  fileIdentity,
  fileNotFoundMessage,
  formatFileSize,
  readTextFile,
  statIfExists,
} from '../file-state/text-file.js';
import { ToolError } from '../pipeline/error-class.js';
import { checkPathPermission, EDIT_DENIED_MESSAGE, isEditDenied } from '../permissions/filesystem.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext, ValidationResult } from '../tool/types.js';
import { loadPrompt } from './prompt.js';
import { sliceWhole } from '../util/text.js';

/** Claude Code's MAX_EDIT_FILE_SIZE. */
export const MAX_EDIT_FILE_SIZE = 1024 * 1024 * 1024;
/** originalFile is left out of the output (hooks' tool_response) above this size. */
const MAX_ORIGINAL_IN_OUTPUT = 4 * 1024 * 1024;
/** Characters of new_string the auto-mode classifier sees. */
const CLASSIFIER_MAX_CHARS = 2000;

export const FILE_NOT_READ = 'File has not been read yet. Read it first before writing to it.';
export const FILE_MODIFIED_SINCE_READ =
  'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';
export const FILE_UNEXPECTEDLY_MODIFIED = 'File has been unexpectedly modified. Read it again before attempting to write it.';
const NOTEBOOK_MESSAGE = 'File is a Jupyter Notebook. Use the NotebookEdit tool to edit this file.';

export const EditInput = z.strictObject({
  file_path: z.string().min(1).describe('The absolute path to the file to modify'),
  old_string: z.string().describe('The text to replace'),
  new_string: z.string().describe('The text to replace it with (must be different from old_string)'),
  replace_all: z.boolean().optional().describe('Replace all occurrences of old_string (default false)'),
});
export type EditInput = z.infer<typeof EditInput>;

/** Claude Code's FileEditOutput, plus the snippet shown to the model. */
export interface EditOutput {
  filePath: string;
  oldString: string;
  newString: string;
  originalFile: string | null;
  structuredPatch: Hunk[];
  userModified: boolean;
  replaceAll: boolean;
  created: boolean;
  snippet: string;
  snippetStartLine: number;
}

function fail(code: number, message: string): ValidationResult {
  return { ok: false, message, code };
}

const isNotebook = (p: string): boolean => path.extname(p).toLowerCase() === '.ipynb';

async function validate(input: EditInput, ctx: ToolContext): Promise<ValidationResult> {
  const { file_path, old_string, new_string } = input;
  if (old_string === new_string) return fail(1, 'No changes to make: old_string and new_string are exactly the same.');
  if (isEditDenied(file_path, ctx)) return fail(2, EDIT_DENIED_MESSAGE);
  const abs = ctx.workspace.resolve(file_path, ctx.session.cwd);
  // Outside the working directories nothing is looked at before the permission
  // layer has asked: the checks below run again in call(), once allowed.
  if (!ctx.workspace.contains(abs)) return isNotebook(abs) && old_string !== '' ? fail(5, NOTEBOOK_MESSAGE) : { ok: true };
  const st = await statIfExists(abs);
  if (st && st.size > MAX_EDIT_FILE_SIZE) {
    return fail(10, `File is too large to edit (${formatFileSize(st.size)}). Maximum editable file size is ${formatFileSize(MAX_EDIT_FILE_SIZE)}.`);
  }
  // A file never read in this session is refused before its content is loaded (it may be a gigabyte).
  if (st?.isFile() && old_string !== '' && !isNotebook(abs) && ctx.session.fileState.get(fileStateKey(ctx.workspace, abs)) === undefined) {
    return fail(6, FILE_NOT_READ);
  }
  const file = await readTextFile(abs);
  if (!file) {
    if (old_string === '') return { ok: true };
    return fail(4, fileNotFoundMessage(abs, ctx.session.cwd));
  }
  if (old_string === '' && file.content.trim() !== '') return fail(3, 'Cannot create new file - file already exists.');
  if (isNotebook(abs)) return fail(5, NOTEBOOK_MESSAGE);
  // An existing file, even an empty one, is edited only after a read.
  const state = ctx.session.fileState.get(fileStateKey(ctx.workspace, abs));
  const f = freshness(state, file.mtimeMs, file.content, true, file.identity);
  if (f === 'unread' || f === 'partial') return fail(6, FILE_NOT_READ);
  if (f === 'stale') return fail(7, FILE_MODIFIED_SINCE_READ);
  if (old_string === '') return { ok: true };
  const plan = planEdit(file.content, old_string, new_string, input.replace_all ?? false);
  if (!plan) return fail(8, `String to replace not found in file.\nString: ${old_string}`);
  if (plan.count > 1 && !input.replace_all) {
    return fail(
      9,
      `Found ${plan.count} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: ${old_string}`,
    );
  }
  return { ok: true };
}

/** At write time: never read → Claude Code's "not read yet"; changed → "unexpectedly modified". */
export function assertFresh(f: Freshness): void {
  if (f === 'unread' || f === 'partial') throw new ToolError(FILE_NOT_READ, 'validation');
  if (f === 'stale') throw new ToolError(FILE_UNEXPECTEDLY_MODIFIED, 'tool_error');
}

async function run(input: EditInput, ctx: ToolContext): Promise<EditOutput> {
  const { file_path, old_string, new_string } = input;
  const replaceAll = input.replace_all ?? false;
  const abs = ctx.workspace.resolve(file_path, ctx.session.cwd);
  const target = writeTarget(abs, ctx, 'Edit');
  const key = fileStateKey(ctx.workspace, abs);
  // Checked again right before writing: the file may have changed since validation (a hook, another agent).
  const file = await readTextFile(target, MAX_EDIT_FILE_SIZE);
  if (file) {
    if (old_string === '' && file.content.trim() !== '') throw new ToolError('Cannot create new file - file already exists.', 'validation');
    if (isNotebook(abs)) throw new ToolError(NOTEBOOK_MESSAGE, 'validation');
    assertFresh(freshness(ctx.session.fileState.get(key), file.mtimeMs, file.content, true, file.identity));
  } else if (old_string !== '') {
    throw new ToolError(fileNotFoundMessage(abs, ctx.session.cwd, ctx.workspace.contains(abs)), 'not_found');
  }
  const original = file?.content ?? '';
  const plan = planEdit(original, old_string, new_string, replaceAll);
  if (!plan || (old_string !== '' && plan.updated === original)) {
    throw new ToolError('String not found in file. Failed to apply edit.', 'tool_error');
  }
  if (plan.count > 1 && !replaceAll) throw new ToolError(`Found ${plan.count} matches of the string to replace, but replace_all is false.`, 'tool_error');
  await writeFileAtomic(target, encodeText(plan.updated, file?.encoding ?? 'utf8', file?.bom ?? false), {
    mode: file?.mode,
    uid: file?.uid,
    gid: file?.gid,
    signal: ctx.signal,
  });
  const st = await fs.promises.stat(target);
  ctx.session.fileState.set(key, {
    content: plan.updated,
    timestamp: Math.floor(st.mtimeMs),
    offset: undefined,
    limit: undefined,
    isPartialView: false,
    identity: fileIdentity(st),
  });
  const snip = getSnippet(original, plan.oldString, plan.newString, plan.updated);
  return {
    filePath: abs,
    oldString: plan.oldString,
    newString: new_string,
    originalFile: file && original.length <= MAX_ORIGINAL_IN_OUTPUT ? original : null,
    structuredPatch: structuredPatch(original, plan.updated),
    userModified: ctx.userModified,
    replaceAll,
    created: !file,
    snippet: addLineNumbers(snip.lines, snip.startLine) + (snip.clipped ? '\n… (snippet clipped)' : ''),
    snippetStartLine: snip.startLine,
  };
}

function resultText(out: EditOutput): string {
  const modified = out.userModified ? '. The user modified your proposed changes before accepting them' : '';
  if (out.replaceAll) {
    return `The file ${out.filePath} has been updated${modified}. All occurrences of '${out.oldString}' were successfully replaced with '${out.newString}'.`;
  }
  return `The file ${out.filePath} has been updated${modified}. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${out.snippet}`;
}

export const editTool = buildTool({
  name: 'Edit',
  searchHint: 'modify file contents in place',
  description: loadPrompt(new URL('./edit.md', import.meta.url)),
  inputSchema: EditInput,
  maxResultSizeChars: 100_000,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  isDestructive: () => false,
  getPath: (input) => input.file_path,
  backfillObservableInput: (input, expandPath) => (input.file_path.length > 0 ? { ...input, file_path: expandPath(input.file_path) } : input),
  validateInput: validate,
  checkPermissions: async (input, ctx) => checkPathPermission('edit', 'Edit', input.file_path, ctx),
  call: async (input, ctx) => ({ data: await run(input, ctx) }),
  renderToolUseMessage: (input) => `Edit(${input.file_path})`,
  getToolUseSummary: (input) => input.file_path,
  renderToolResultMessage: (out) => (out.created ? `Created ${out.filePath}` : `Updated ${out.filePath}`),
  toAutoClassifierInput: (input) => {
    const s = `${input.file_path}: ${input.new_string}`;
    return s.length > CLASSIFIER_MAX_CHARS ? `${sliceWhole(s, CLASSIFIER_MAX_CHARS)}…` : s;
  },
  mapToolResultToToolResultBlockParam: (out, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: resultText(out) }),
});
