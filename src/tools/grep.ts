/**
 * Grep: searches file contents with a regular expression, with Claude Code's
 * input and output. ripgrep runs it where installed (`grep.engine`: auto | rg
 * | js); otherwise a JavaScript engine gives the same results (src/grep/:
 * filter.ts for which files, regex.ts for the pattern dialect, file-scan.mjs
 * for binary files and long lines, collect.ts for the output). Files hidden
 * by Read deny rules never appear.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../pipeline/error-class.js';
import { assertOpenedAsJudged, checkPathPermission } from '../permissions/filesystem.js';
import { formatPersisted } from '../results/output-sink.js';
import { DENIED_MEMORY_LIMIT } from '../permissions/denied-memory.js';
import { WALK_LIMIT } from '../permissions/hard-links.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext, ValidationResult } from '../tool/types.js';
import { Collector } from '../grep/collect.js';
import { chooseEngine, runSearch, type EngineName } from '../grep/engine.js';
import { Overrides, overrideGlobs, splitGlobParam, TypeFilter, typeGlobs } from '../grep/filter.js';
import { GlobError } from '../grep/glob.js';
import { compilePattern, PatternError, type CompiledPattern } from '../grep/regex.js';
import { DEFAULT_LIMITS, type EngineLimits, type OutputMode, type SearchQuery } from '../grep/types.js';
import { loadPrompt } from './prompt.js';
import { realpathOr } from '../workspace.js';

const count = (what: string) => z.number().int().nonnegative().optional().describe(what);

export const GrepInput = z.strictObject({
  pattern: z.string().describe('The regular expression pattern to search for in file contents'),
  path: z.string().optional().describe('File or directory to search in (rg PATH). Defaults to current working directory.'),
  glob: z
    .string()
    .optional()
    .describe('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe(
      'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".',
    ),
  '-B': count('Number of lines to show before each match (rg -B). Requires output_mode: "content", ignored otherwise.'),
  '-A': count('Number of lines to show after each match (rg -A). Requires output_mode: "content", ignored otherwise.'),
  '-C': count('Number of lines to show before and after each match (rg -C). Requires output_mode: "content", ignored otherwise.'),
  '-n': z
    .boolean()
    .optional()
    .describe('Show line numbers in output (rg -n). Requires output_mode: "content", ignored otherwise. Defaults to true.'),
  '-i': z.boolean().optional().describe('Case insensitive search (rg -i)'),
  type: z
    .string()
    .optional()
    .describe('File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than include for standard file types.'),
  head_limit: count(
    'Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes: content (limits output lines), files_with_matches (limits file paths), count (limits count entries). Defaults to 250 when unspecified. Pass 0 for unlimited (use sparingly — large result sets waste context).',
  ),
  offset: count(
    'Skip first N lines/entries before applying head_limit, equivalent to "| tail -n +N | head -N". Works across all output modes. Defaults to 0.',
  ),
  multiline: z
    .boolean()
    .optional()
    .describe('Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.'),
});
export type GrepInput = z.infer<typeof GrepInput>;

export interface GrepOutput {
  mode: OutputMode;
  numFiles: number;
  numLines: number;
  numMatches: number;
  appliedLimit: number | undefined;
  appliedOffset: number | undefined;
  engine: EngineName;
  durationMs: number;
  /** The text the model receives (or, for a persisted result, its preview and reference). */
  text: string;
  /**
   * Claude Code's fields, which PostToolUse hooks read: the paths shown
   * (files_with_matches and count; [] in content mode, as in Claude Code), and
   * for content and count modes `content`, the lines shown without our notes
   * (a persisted result: its preview and reference, as the model gets them).
   */
  filenames: string[];
  content?: string;
}

interface Prepared {
  pattern: CompiledPattern;
  userGlobs: string[];
  overrides: Overrides;
  type: { name: string; globs: readonly string[] } | undefined;
  typeFilter: TypeFilter | undefined;
}

/** Everything about an input that can be judged without touching the disk; throws ToolError. */
function prepare(input: GrepInput): Prepared {
  let pattern: CompiledPattern;
  try {
    pattern = compilePattern(input.pattern, { multiline: input.multiline ?? false, ignoreCase: input['-i'] ?? false });
  } catch (e) {
    if (e instanceof PatternError) throw new ToolError(e.message, 'validation');
    throw e;
  }
  const userGlobs = splitGlobParam(input.glob);
  let overrides: Overrides;
  try {
    overrides = new Overrides(overrideGlobs(userGlobs));
  } catch (e) {
    if (e instanceof GlobError) throw new ToolError(`Invalid glob: ${e.message}`, 'validation');
    throw e;
  }
  let type: Prepared['type'];
  let typeFilter: TypeFilter | undefined;
  if (input.type !== undefined) {
    const globs = typeGlobs(input.type);
    if (!globs) {
      throw new ToolError(
        `Unknown file type "${input.type}". Use a ripgrep type name such as js, ts, py, rust, go, java, c, cpp, md, json, yaml, sh, or filter with glob instead.`,
        'validation',
      );
    }
    type = { name: input.type, globs };
    typeFilter = new TypeFilter(globs);
  }
  return { pattern, userGlobs, overrides, type, typeFilter };
}

/**
 * Runs a Grep search: its output, and the stored result's id when the text
 * outgrew the persist threshold. `engine` and `limits` may be set by tests.
 */
export async function grep(
  input: GrepInput,
  ctx: ToolContext,
  opts: { engine?: EngineName; limits?: EngineLimits } = {},
): Promise<{ output: GrepOutput; resultId: string | undefined }> {
  const t0 = performance.now();
  const prepared = prepare(input);
  const given = ctx.workspace.resolve(input.path ?? '.', ctx.session.cwd);
  let real: string;
  let st: fs.Stats;
  try {
    real = fs.realpathSync(given);
    st = fs.statSync(real);
  } catch (e) {
    // A symlink loop or an unreadable directory exists: saying it does not would mislead.
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && code !== 'ENOENT' && code !== 'ENOTDIR') throw new ToolError(`Cannot access ${given}: ${(e as Error).message}`, 'io');
    throw new ToolError(`Path does not exist: ${given}. Note: your current working directory is ${ctx.session.cwd}.`, 'not_found');
  }
  if (!st.isDirectory() && !st.isFile()) throw new ToolError(`${given} is neither a file nor a directory.`, 'io');
  // The permission check judged the path before; where it leads now, if elsewhere, is judged again (a symlink may have moved).
  assertOpenedAsJudged('read', 'Grep', real, ctx);
  const engine = opts.engine ?? chooseEngine(ctx.config.grep.engine, ctx.childEnv);
  const mode: OutputMode = input.output_mode ?? 'files_with_matches';
  const content = mode === 'content';
  const links = ctx.permissions.hardLinkChecker('read');
  // Files with several names left out because whether one is a denied file could not be settled: said, not hidden.
  const unsettled = new Set<string>();
  /** Of those, files that may be a denied file met past the memory's limit (denied-memory.ts). */
  let forgotten = 0;
  // toolexec's own files by identity, listed once per search, at the first file with several names.
  let serviceIds: Map<string, string> | undefined;
  const serviceFileIds = (): Map<string, string> => (serviceIds ??= ctx.workspace.serviceFileIds());
  const q: SearchQuery = {
    root: st.isDirectory() ? real : path.dirname(real),
    single: st.isDirectory() ? undefined : path.basename(real),
    pattern: prepared.pattern,
    ignoreCase: input['-i'] ?? false,
    multiline: input.multiline ?? false,
    mode,
    before: content ? (input['-C'] ?? input['-B'] ?? 0) : 0,
    after: content ? (input['-C'] ?? input['-A'] ?? 0) : 0,
    userGlobs: prepared.userGlobs,
    overrides: prepared.overrides,
    type: prepared.type,
    typeFilter: prepared.typeFilter,
    isDenied: (abs) => ctx.permissions.isReadDenied(abs),
    // One checker per search: the denied files are looked for once, on the first file with several names.
    // toolexec's own files under another name (an archive's hard link member) are left out too.
    isLinkDenied: (abs) => {
      const v = links(abs);
      if (v !== undefined && 'unknown' in v && !unsettled.has(abs)) {
        unsettled.add(abs);
        if (v.forgotten) forgotten++;
      }
      return v !== undefined || ctx.workspace.serviceFileLinkReason(abs, serviceFileIds) !== undefined;
    },
    signal: ctx.signal,
    env: ctx.childEnv,
  };
  const out = ctx.createOutput();
  const collector = new Collector(
    {
      mode,
      headLimit: input.head_limit,
      offset: input.offset ?? 0,
      showLineNumbers: input['-n'] ?? true,
      context: q.before > 0 || q.after > 0,
      root: q.root,
      cwd: realpathOr(ctx.session.cwd),
    },
    out,
  );
  try {
    await runSearch(engine, q, collector.sink, opts.limits ?? DEFAULT_LIMITS);
  } catch (e) {
    out.abort();
    throw e;
  }
  const { filenames, countLines, trailerChars, ...figures } = collector.finish(unsettled.size > 0 ? linksLeftOut(unsettled.size, forgotten) : undefined);
  const r = out.finish();
  const text = r.kind === 'inline' ? r.text : formatPersisted(r);
  // The lines without the notes after them: a slice of the text held anyway, not a copy; once persisted, what the model gets.
  const lines = r.kind !== 'inline' ? (mode === 'files_with_matches' ? undefined : text) : mode === 'content' ? text.slice(0, text.length - trailerChars) : countLines;
  return {
    output: { ...figures, mode, engine, durationMs: performance.now() - t0, text, filenames, ...(lines !== undefined ? { content: lines } : {}) },
    resultId: r.kind === 'persisted' ? r.id : undefined,
  };
}

/** The note for files with several names that the search left out, unable to tell them from a denied file. */
function linksLeftOut(n: number, forgotten: number): string {
  if (forgotten > 0) {
    return (
      `[${n} ${n === 1 ? 'file was' : 'files were'} left out of this search: ` +
      `toolexec has met more files that deny rules cover than the ${DENIED_MEMORY_LIMIT.toLocaleString('en')} it remembers by identity, ` +
      `so whether ${n === 1 ? 'it is' : 'they are'} a denied file under another name (after a hard link and a replacement) is not known.]`
    );
  }
  return (
    `[${n} ${n === 1 ? 'file with several names (a hard link) was' : 'files with several names (hard links) were'} left out of this search: ` +
    `the files a Read deny rule covers could not all be found (looking for them passed ${WALK_LIMIT.toLocaleString('en')} entries, as a rule that matches at any depth does in a large tree, or met a name that is not UTF-8), ` +
    `so whether ${n === 1 ? 'it is' : 'they are'} another name of a denied file is not known. Rules anchored to a directory (Read(./.env) rather than Read(**/.env)) avoid this.]`
  );
}

export const grepTool = buildTool({
  name: 'Grep',
  searchHint: 'search file contents with regular expressions (ripgrep)',
  description: loadPrompt(new URL('./grep.md', import.meta.url)),
  inputSchema: GrepInput,
  maxResultSizeChars: 20_000,
  mayBeReadOnly: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  getPath: (input) => input.path,
  validateInput: async (input): Promise<ValidationResult> => {
    try {
      prepare(input);
      return { ok: true };
    } catch (e) {
      return { ok: false, message: (e as Error).message, code: 1 };
    }
  },
  checkPermissions: async (input, ctx) => checkPathPermission('read', 'Grep', input.path ?? ctx.session.cwd, ctx),
  call: async (input, ctx) => {
    const { output, resultId } = await grep(input, ctx);
    return { data: output, resultId };
  },
  renderToolUseMessage: (input) => `Grep(pattern: ${JSON.stringify(input.pattern)}${input.path ? `, path: ${JSON.stringify(input.path)}` : ''})`,
  getToolUseSummary: (input) => input.pattern,
  renderToolResultMessage: (out) =>
    out.mode === 'content'
      ? `Found ${out.numLines} line${out.numLines === 1 ? '' : 's'}`
      : out.mode === 'count'
        ? `Found ${out.numMatches} match${out.numMatches === 1 ? '' : 'es'} in ${out.numFiles} file${out.numFiles === 1 ? '' : 's'}`
        : `Found ${out.numFiles} file${out.numFiles === 1 ? '' : 's'}`,
  toAutoClassifierInput: (input) => `${input.pattern}${input.path ? ` in ${input.path}` : ''}`,
  mapToolResultToToolResultBlockParam: (out, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: out.text }),
});
