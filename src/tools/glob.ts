/**
 * Glob: files matching a glob pattern under a directory, newest first, at
 * most 100. Standard glob semantics (picomatch: `*` does not cross `/` or match
 * a leading dot; `**` crosses directories). The pattern's literal prefix
 * (`../x/*.ts`, `/abs/dir/**`) is part of the directory searched, and that
 * directory is what the permission check judges, so a pattern cannot walk
 * out of the working directories unasked. Files hidden by Read deny rules are
 * left out; each directory is walked once (by device and inode), so a symlink
 * loop ends; inside the working directories, a symlinked directory that leads
 * outside them is not followed. The walk is bounded and cancellable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import picomatch from 'picomatch';
import { z } from 'zod';
import { ToolError } from '../pipeline/error-class.js';
import { assertOpenedAsJudged, checkPathPermission } from '../permissions/filesystem.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext } from '../tool/types.js';
import { realpathOr, type Workspace } from '../workspace.js';
import { loadPrompt } from './prompt.js';

export const GLOB_MAX_RESULTS = 100;
/** Directory entries visited at most per call. */
export const GLOB_MAX_VISITED = 500_000;
/**
 * How long a walk may take, at most: a pattern rooted at / (`/**` + a name
 * nothing has) walks the whole machine, 500,000 entries in ~8 s on a quiet
 * one and far longer on a loaded one or a slow file system. Past it the walk
 * stops and the answer says it was cut short.
 */
export const GLOB_MAX_WALK_MS = 10_000;

export const GlobInput = z.strictObject({
  pattern: z.string().min(1).describe('The glob pattern to match files against'),
  path: z
    .string()
    .optional()
    .describe('The directory to search in. If not specified, the current working directory will be used.'),
});
export type GlobInput = z.infer<typeof GlobInput>;

/** Claude Code's GlobOutput. */
export interface GlobOutput {
  filenames: string[];
  numFiles: number;
  truncated: boolean;
  durationMs: number;
  totalMatches: number;
  countIsComplete: boolean;
}

interface Found {
  abs: string;
  mtimeMs: number;
}

/** How long a pattern that may backtrack may take to match the names found. */
export const GLOB_MATCH_TIMEOUT_MS = 10_000;
const WORKER_URL = new URL('./glob-worker.mjs', import.meta.url);

/**
 * Whether picomatch's RegExp for the pattern may backtrack for long: two or
 * more unbounded wildcards (`*`, an extglob) within one path component take
 * time polynomial in the name's length (seconds per name for `*a*a*a*c` on a
 * 200-character name). Such patterns are matched in a worker thread, with a
 * time limit, never on the event loop.
 */
export function mayBacktrack(pattern: string): boolean {
  return pattern.split('/').some((part) => {
    if (part === '**') return false;
    const stars = part.replace(/\\./g, '').match(/\*+|[+@!?]\(/g);
    return stars !== null && stars.length >= 2;
  });
}

/** The indices of `paths` that match, computed in a worker that is ended after `timeoutMs` or on cancel. */
async function matchInWorker(pattern: string, paths: string[], signal: AbortSignal, timeoutMs: number): Promise<Set<number>> {
  if (paths.length === 0) return new Set();
  const worker = new Worker(WORKER_URL, { workerData: { pattern, paths }, resourceLimits: { maxOldGenerationSizeMb: 256 }, stdout: false, stderr: false });
  return new Promise<Set<number>>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, matched?: number[]): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err) reject(err);
      else resolve(new Set(matched));
    };
    const onAbort = (): void => finish(Object.assign(new Error('The search was cancelled'), { name: 'AbortError' }));
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        finish(
          new ToolError(
            `Glob timed out after ${timeoutMs / 1000} s matching "${pattern}" against ${paths.length} names: several wildcards in one path component make matching slow on long names. Use fewer * per component (e.g. "*foo*" rather than "*f*o*o*"), or narrow the path.`,
            'timeout',
          ),
        ),
      timeoutMs,
    );
    timer.unref();
    worker.on('message', (m: number[]) => finish(undefined, m));
    worker.on('error', (e) => finish(new ToolError(`Glob failed: ${e.message}`, 'internal')));
    worker.on('exit', (code) => finish(new ToolError(`The glob worker stopped unexpectedly (exit code ${code}).`, 'internal')));
  });
}

/** globFiles is also called with a partial context (tests, the CLI): the recheck needs the call's own. */
function isFullContext(ctx: Pick<ToolContext, 'workspace' | 'session' | 'permissions' | 'signal'>): ctx is ToolContext {
  return 'executionId' in ctx;
}

/** The directory walked and the pattern relative to it. */
export function globSearch(input: GlobInput, cwd: string, workspace: Workspace): { dir: string; pattern: string } {
  const root = workspace.resolve(input.path ?? '.', cwd);
  const scan = picomatch.scan(input.pattern);
  let base = scan.base.replace(/\\(.)/g, '$1');
  let glob = scan.glob;
  if (glob === '') {
    // A literal path: search its directory for its name.
    const literal = base.endsWith('/') ? base.slice(0, -1) : base;
    base = path.dirname(literal);
    glob = path.basename(literal);
  }
  return { dir: path.resolve(root, base), pattern: glob };
}

export async function globFiles(
  input: GlobInput,
  ctx: Pick<ToolContext, 'workspace' | 'session' | 'permissions' | 'signal'>,
  limits: { maxVisited: number; maxWalkMs: number } = { maxVisited: GLOB_MAX_VISITED, maxWalkMs: GLOB_MAX_WALK_MS },
): Promise<{ files: Found[]; visitedLimitHit: boolean }> {
  const { dir: start, pattern } = globSearch(input, ctx.session.cwd, ctx.workspace);
  // A pattern such as "/" names a directory and no file in it.
  if (pattern === '') throw new ToolError(`The pattern "${input.pattern}" names a directory, not files; to list its files use a pattern such as "${input.pattern.replace(/\/+$/, '')}/*".`, 'validation');
  let st: fs.Stats;
  try {
    st = fs.statSync(start);
  } catch (e) {
    // A symlink loop or an unreadable directory exists: saying it does not would mislead.
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && code !== 'ENOENT' && code !== 'ENOTDIR') throw new ToolError(`Cannot access ${start}: ${(e as Error).message}`, 'io');
    throw new ToolError(`Directory does not exist: ${start}`, 'not_found');
  }
  if (!st.isDirectory()) throw new ToolError(`Path is not a directory: ${start}`, 'io');
  // The permission check judged the directory before; where it leads now, if elsewhere, is judged again.
  if (isFullContext(ctx)) assertOpenedAsJudged('read', 'Glob', realpathOr(start), ctx);

  // A pattern that may backtrack is matched after the walk, in a worker: here every file is a candidate.
  const deferred = mayBacktrack(pattern);
  const isMatch = deferred ? () => true : picomatch(pattern, { dot: false });
  const maxDepth = pattern.includes('**') ? Number.POSITIVE_INFINITY : pattern.split('/').length;
  // Dot directories are entered only when the pattern names one.
  const wantsDot = /(^|\/)\.[^/]/.test(pattern);
  // Searching inside the working directories, a symlink does not carry the walk outside them.
  const confined = ctx.workspace.contains(start);

  let files: Found[] = [];
  const seenDirs = new Set<string>();
  let visited = 0;
  let limitHit = false;
  // `linked`: reached through a symlink, where a name as spelt does not say where it leads.
  const stack: { dir: string; depth: number; linked: boolean }[] = [{ dir: start, depth: 0, linked: false }];
  const walkUntil = performance.now() + limits.maxWalkMs;
  while (stack.length > 0) {
    if (ctx.signal.aborted) break;
    if (performance.now() > walkUntil) {
      limitHit = true;
      break;
    }
    const { dir, depth, linked } = stack.pop()!;
    let id: string;
    try {
      const s = fs.statSync(dir);
      id = `${s.dev}:${s.ino}`;
    } catch {
      continue;
    }
    if (seenDirs.has(id)) continue;
    seenDirs.add(id);
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++visited > limits.maxVisited) {
        limitHit = true;
        break;
      }
      const abs = path.join(dir, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      let mtimeMs: number | undefined;
      const viaLink = linked || e.isSymbolicLink();
      // toolexec's own files are judged where the name really leads (isReadDenied judges it as spelt).
      if (viaLink && ctx.workspace.hasServiceFiles && ctx.workspace.serviceFileReason(ctx.workspace.canonical(abs)) !== undefined) continue;
      if (e.isSymbolicLink()) {
        try {
          const t = fs.statSync(abs);
          isDir = t.isDirectory();
          isFile = t.isFile();
          mtimeMs = t.mtimeMs;
        } catch {
          continue; // dangling, or a loop of links
        }
        if (isDir && confined && !ctx.workspace.contains(abs)) continue;
      }
      if (isDir) {
        if (depth + 1 >= maxDepth) continue;
        if (e.name.startsWith('.') && !wantsDot) continue;
        if (ctx.permissions.isReadDenied(abs)) continue;
        stack.push({ dir: abs, depth: depth + 1, linked: viaLink });
      } else if (isFile && isMatch(path.relative(start, abs))) {
        if (ctx.permissions.isReadDenied(abs)) continue;
        if (deferred) {
          files.push({ abs, mtimeMs: mtimeMs ?? Number.NaN });
          continue;
        }
        if (mtimeMs === undefined) {
          try {
            mtimeMs = fs.statSync(abs).mtimeMs;
          } catch {
            continue;
          }
        }
        files.push({ abs, mtimeMs });
      }
    }
    if (limitHit) break;
  }
  if (deferred && !ctx.signal.aborted) {
    const matched = await matchInWorker(pattern, files.map((f) => path.relative(start, f.abs)), ctx.signal, GLOB_MATCH_TIMEOUT_MS);
    const kept: Found[] = [];
    for (let i = 0; i < files.length; i++) {
      if (!matched.has(i)) continue;
      const f = files[i]!;
      if (Number.isNaN(f.mtimeMs)) {
        try {
          f.mtimeMs = fs.statSync(f.abs).mtimeMs;
        } catch {
          continue;
        }
      }
      kept.push(f);
    }
    files = kept;
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.abs < b.abs ? -1 : a.abs > b.abs ? 1 : 0));
  return { files, visitedLimitHit: limitHit };
}

// Made when used: the first toLocaleString loads ICU's number formats (~20 ms), at start-up if done at import.
const cutShort = (): string =>
  `the search stopped after ${GLOB_MAX_VISITED.toLocaleString('en-US')} entries or ${GLOB_MAX_WALK_MS / 1000} s. Use a more specific path or pattern.`;

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
  checkPermissions: async (input, ctx) =>
    checkPathPermission('read', 'Glob', globSearch(input, ctx.session.cwd, ctx.workspace).dir, ctx),
  call: async (input, ctx) => {
    const t0 = performance.now();
    const { files, visitedLimitHit } = await globFiles(input, ctx);
    const truncated = files.length > GLOB_MAX_RESULTS || visitedLimitHit;
    const filenames = files.slice(0, GLOB_MAX_RESULTS).map((f) => f.abs);
    return {
      data: {
        filenames,
        numFiles: filenames.length,
        truncated,
        durationMs: performance.now() - t0,
        totalMatches: files.length,
        countIsComplete: !visitedLimitHit,
      },
    };
  },
  renderToolUseMessage: (input) => `Glob(${input.pattern}${input.path ? ` in ${input.path}` : ''})`,
  getToolUseSummary: (input) => input.pattern,
  renderToolResultMessage: (out) => `Found ${out.numFiles} file${out.numFiles === 1 ? '' : 's'}`,
  toAutoClassifierInput: (input) => `${input.pattern}${input.path ? ` in ${input.path}` : ''}`,
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    if (out.filenames.length === 0) {
      // A walk cut short found nothing so far: "No files found" alone would say there are none.
      const content = out.countIsComplete === false ? `No files found in the part searched: ${cutShort()}` : 'No files found';
      return { type: 'tool_result', tool_use_id: toolUseId, content };
    }
    const text =
      out.filenames.join('\n') +
      (out.truncated ? '\n(Results are truncated. Consider using a more specific path or pattern.)' : '');
    return { type: 'tool_result', tool_use_id: toolUseId, content: text };
  },
});
