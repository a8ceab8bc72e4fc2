/**
 * Write: creates a file or replaces its content, as Claude Code's
 * FileWriteTool. A new file needs no read; an existing one must have been read
 * in this session and not modified since (mtime only at validation; the
 * content-equality fallback only at write time). Parent directories are
 * created; the write is atomic, keeps the file's mode and encoding (the
 * content's own line endings are written as given), and never goes through a
 * symlink out of the working directories.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic, writeTarget } from '../file-state/atomic-write.js';
import { fileStateKey, freshness } from '../file-state/cache.js';
import { snippetLines, structuredPatch, type Hunk } from '../file-state/edit-text.js';
import { addLineNumbers, assertRegularFile, encodeText, fileIdentity, readTextFile, statIfExists } from '../file-state/text-file.js';
import { checkPathPermission, EDIT_DENIED_MESSAGE, isEditDenied } from '../permissions/filesystem.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext, ValidationResult } from '../tool/types.js';
import { assertFresh, FILE_MODIFIED_SINCE_READ, FILE_NOT_READ, MAX_EDIT_FILE_SIZE } from './edit.js';
import { loadPrompt } from './prompt.js';
import { sliceWhole } from '../util/text.js';

const MAX_ORIGINAL_IN_OUTPUT = 4 * 1024 * 1024;

export const WriteInput = z.strictObject({
  file_path: z.string().min(1).describe('The absolute path to the file to write (must be absolute, not relative)'),
  content: z.string().describe('The content to write to the file'),
});
export type WriteInput = z.infer<typeof WriteInput>;

/** Claude Code's FileWriteOutput, plus the snippet shown to the model. */
export interface WriteOutput {
  type: 'create' | 'update';
  filePath: string;
  content: string;
  structuredPatch: Hunk[];
  originalFile: string | null;
  userModified: boolean;
  /** The file already had exactly this content. */
  unchanged: boolean;
  snippet: string;
}

async function validate(input: WriteInput, ctx: ToolContext): Promise<ValidationResult> {
  if (isEditDenied(input.file_path, ctx)) return { ok: false, message: EDIT_DENIED_MESSAGE, code: 1 };
  const abs = ctx.workspace.resolve(input.file_path, ctx.session.cwd);
  // Outside the working directories nothing is looked at before the permission
  // layer has asked: call() checks the file again once allowed.
  if (!ctx.workspace.contains(abs)) return { ok: true };
  const st = await statIfExists(abs);
  if (!st) return { ok: true };
  if (st.isDirectory()) return { ok: false, message: `${abs} is a directory; Write needs a file path.`, code: 4 };
  if (!st.isFile()) return { ok: false, message: `${abs} is not a regular file (a FIFO, socket or device); it cannot be written.`, code: 4 };
  const state = ctx.session.fileState.get(fileStateKey(ctx.workspace, abs));
  // Claude Code's Write has no content fallback here: a newer mtime is a change.
  const f = freshness(state, st.mtimeMs, undefined, false, fileIdentity(st));
  if (f === 'unread' || f === 'partial') return { ok: false, message: FILE_NOT_READ, code: 2 };
  if (f === 'stale') return { ok: false, message: FILE_MODIFIED_SINCE_READ, code: 3 };
  return { ok: true };
}

async function run(input: WriteInput, ctx: ToolContext): Promise<WriteOutput> {
  const abs = ctx.workspace.resolve(input.file_path, ctx.session.cwd);
  const target = writeTarget(abs, ctx, 'Write');
  const key = fileStateKey(ctx.workspace, abs);
  const st = await statIfExists(target);
  if (st) assertRegularFile(target, st);
  const old = st ? await readTextFile(target, MAX_EDIT_FILE_SIZE) : undefined;
  if (old) assertFresh(freshness(ctx.session.fileState.get(key), old.mtimeMs, old.content, true, old.identity));
  const content = input.content;
  // An existing file keeps its encoding and BOM; the content's line endings are the model's own.
  const data = encodeText(content, old?.encoding ?? 'utf8', (old?.bom ?? false) && !content.startsWith('\ufeff'));
  await writeFileAtomic(target, data, { mode: old?.mode, uid: old?.uid, gid: old?.gid, signal: ctx.signal });
  const after = await fs.promises.stat(target);
  ctx.session.fileState.set(key, {
    content,
    timestamp: Math.floor(after.mtimeMs),
    offset: undefined,
    limit: undefined,
    isPartialView: false,
    identity: fileIdentity(after),
  });
  let snippet = '';
  let patch: Hunk[] = [];
  if (old) {
    patch = structuredPatch(old.content, content);
    const hunk = patch[0];
    if (hunk) {
      const lead = hunk.lines.findIndex((l) => l[0] !== ' ');
      const added = hunk.lines.reduce((n, l) => n + (l[0] === '+' ? 1 : 0), 0);
      const snip = snippetLines(content, hunk.newStart - 1 + Math.max(0, lead), added);
      snippet = addLineNumbers(snip.lines, snip.startLine) + (snip.clipped ? '\n… (snippet clipped)' : '');
    }
  }
  return {
    type: old ? 'update' : 'create',
    filePath: abs,
    content,
    structuredPatch: patch,
    originalFile: old && old.content.length <= MAX_ORIGINAL_IN_OUTPUT ? old.content : null,
    userModified: ctx.userModified,
    unchanged: old !== undefined && old.content === content,
    snippet,
  };
}

export const writeTool = buildTool({
  name: 'Write',
  searchHint: 'create or overwrite files',
  description: loadPrompt(new URL('./write.md', import.meta.url)),
  inputSchema: WriteInput,
  maxResultSizeChars: 100_000,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  // Overwriting an existing file destroys its content; a relative path is judged conservatively.
  isDestructive: (input) => !path.isAbsolute(input.file_path) || fs.existsSync(input.file_path),
  getPath: (input) => input.file_path,
  backfillObservableInput: (input, expandPath) => (input.file_path.length > 0 ? { ...input, file_path: expandPath(input.file_path) } : input),
  validateInput: validate,
  checkPermissions: async (input, ctx) => checkPathPermission('edit', 'Write', input.file_path, ctx),
  call: async (input, ctx) => ({ data: await run(input, ctx) }),
  renderToolUseMessage: (input) => `Write(${input.file_path})`,
  getToolUseSummary: (input) => input.file_path,
  renderToolResultMessage: (out) => (out.type === 'create' ? `Created ${out.filePath}` : `Updated ${out.filePath}`),
  toAutoClassifierInput: (input) => {
    const s = `${input.file_path}: ${input.content}`;
    return s.length > 2000 ? `${sliceWhole(s, 2000)}…` : s;
  },
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    if (out.type === 'create') return { type: 'tool_result', tool_use_id: toolUseId, content: `File created successfully at: ${out.filePath}` };
    const modified = out.userModified ? '. The user modified your proposed changes before accepting them' : '';
    const text = out.unchanged
      ? `The file ${out.filePath} has been updated${modified} (its content was already exactly this).`
      : out.snippet === ''
        ? `The file ${out.filePath} has been updated${modified}.`
        : `The file ${out.filePath} has been updated${modified}. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${out.snippet}`;
    return { type: 'tool_result', tool_use_id: toolUseId, content: text };
  },
});
