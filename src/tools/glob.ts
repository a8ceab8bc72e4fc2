/**
 * Glob: files matching a glob pattern under a directory, newest first, at
 * most 100. Standard glob semantics (picomatch: `*` does not cross `/` or match
 * a leading dot; `**` crosses directories). Files hidden by Read deny rules
 * are left out; a symlinked directory is followed once (by its real path), so
 * a symlink loop is never walked twice. The walk is bounded and cancellable.
 */
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { ToolError } from '../pipeline/error-class.js';
import { checkPathPermission } from '../permissions/filesystem.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext } from '../tool/types.js';
import { loadPrompt } from './prompt.js';

export const GLOB_MAX_RESULTS = 100;
/** Directory entries visited at most per call. */
export const GLOB_MAX_VISITED = 500_000;

export const GlobInput = z.strictObject({
  pattern: z.string().min(1).describe('The glob pattern to match files against'),
  path: z
    .string()
    .optional()
    .describe('The directory to search in. If not specified, the current working directory will be used.'),
});
export type GlobInput = z.infer<typeof GlobInput>;

export interface GlobOutput {
  filenames: string[];
  numFiles: number;
  truncated: boolean;
  durationMs: number;
}

interface Found {
  abs: string;
  mtimeMs: number;
}

export async function globFiles(
  input: GlobInput,
  ctx: Pick<ToolContext, 'workspace' | 'session' | 'permissions' | 'signal'>,
): Promise<{ files: Found[]; visitedLimitHit: boolean }> {
  const root = ctx.workspace.resolve(input.path ?? '.', ctx.session.cwd);
  let st: fs.Stats;
  try {
    st = fs.statSync(root);
  } catch {
    throw new ToolError(`Directory does not exist: ${root}`, 'not_found');
  }
  if (!st.isDirectory()) throw new ToolError(`Path is not a directory: ${root}`, 'io');

  let pattern = input.pattern;
  if (path.isAbsolute(pattern)) {
    const rel = path.relative(root, pattern);
    if (rel.startsWith('..')) throw new ToolError(`The pattern ${pattern} lies outside the search path ${root}`, 'tool_error');
    pattern = rel;
  }
  const isMatch = picomatch(pattern, { dot: false });
  const scan = picomatch.scan(pattern);
  const deep = pattern.includes('**');
  const maxDepth = deep ? Number.POSITIVE_INFINITY : pattern.split('/').length;
  // Dot directories are entered only when the pattern names one.
  const wantsDot = /(^|\/)\.[^/]/.test(pattern);
  const start = scan.base && scan.base !== '.' ? path.join(root, scan.base) : root;

  const files: Found[] = [];
  const seenDirs = new Set<string>();
  let visited = 0;
  let limitHit = false;
  const stack: { dir: string; depth: number }[] = [{ dir: start, depth: path.relative(root, start).split('/').filter(Boolean).length }];
  while (stack.length > 0) {
    if (ctx.signal.aborted) break;
    const { dir, depth } = stack.pop()!;
    let real: string;
    try {
      const s = fs.statSync(dir);
      real = `${s.dev}:${s.ino}`;
    } catch {
      continue;
    }
    if (seenDirs.has(real)) continue;
    seenDirs.add(real);
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++visited > GLOB_MAX_VISITED) {
        limitHit = true;
        break;
      }
      const abs = path.join(dir, e.name);
      const rel = path.relative(root, abs);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        try {
          const t = fs.statSync(abs);
          isDir = t.isDirectory();
          isFile = t.isFile();
        } catch {
          continue; // dangling
        }
      }
      if (isDir) {
        if (depth + 1 >= maxDepth) continue;
        if (e.name.startsWith('.') && !wantsDot) continue;
        if (ctx.permissions.isReadDenied(abs)) continue;
        stack.push({ dir: abs, depth: depth + 1 });
      } else if (isFile && isMatch(rel)) {
        if (ctx.permissions.isReadDenied(abs)) continue;
        let mtimeMs = 0;
        try {
          mtimeMs = fs.statSync(abs).mtimeMs;
        } catch {
          continue;
        }
        files.push({ abs, mtimeMs });
      }
    }
    if (limitHit) break;
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.abs < b.abs ? -1 : a.abs > b.abs ? 1 : 0));
  return { files, visitedLimitHit: limitHit };
}

export const globTool = buildTool({
  name: 'Glob',
  searchHint: 'find files by name pattern or wildcard',
  description: loadPrompt(new URL('./glob.md', import.meta.url)),
  inputSchema: GlobInput,
  maxResultSizeChars: 100_000,
  mayBeReadOnly: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  getPath: (input) => input.path,
  checkPermissions: async (input, ctx) => checkPathPermission('read', 'Glob', input.path ?? ctx.session.cwd, ctx),
  call: async (input, ctx) => {
    const t0 = performance.now();
    const { files, visitedLimitHit } = await globFiles(input, ctx);
    const truncated = files.length > GLOB_MAX_RESULTS || visitedLimitHit;
    const filenames = files.slice(0, GLOB_MAX_RESULTS).map((f) => f.abs);
    return { data: { filenames, numFiles: filenames.length, truncated, durationMs: performance.now() - t0 } };
  },
  renderToolUseMessage: (input) => `Glob(${input.pattern}${input.path ? ` in ${input.path}` : ''})`,
  getToolUseSummary: (input) => input.pattern,
  renderToolResultMessage: (out) => `Found ${out.numFiles} file${out.numFiles === 1 ? '' : 's'}`,
  toAutoClassifierInput: (input) => `${input.pattern}${input.path ? ` in ${input.path}` : ''}`,
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    if (out.filenames.length === 0) return { type: 'tool_result', tool_use_id: toolUseId, content: 'No files found' };
    const text =
      out.filenames.join('\n') +
      (out.truncated ? '\n(Results are truncated. Consider using a more specific path or pattern.)' : '');
    return { type: 'tool_result', tool_use_id: toolUseId, content: text };
  },
});
