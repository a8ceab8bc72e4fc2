/**
 * Bash: runs a command with `bash -c` in the session's working directory,
 * which persists across calls (an EXIT trap writes `pwd -P` to a private
 * file; a `cd` outside the working directories is not kept). The command
 * runs in its own process group with the service's environment minus its
 * secrets (ctx.childEnv), no standard input, and a timeout (default 2 min,
 * at most 10); a timeout or a cancel kills the whole group (SIGTERM, then
 * SIGKILL), and background children never hold the call open. stdout and
 * stderr are streamed into output sinks that spill to SQLite past the
 * threshold, so a huge output never sits in memory.
 *
 * A non-zero exit is reported, not thrown: the result is an is_error block
 * starting with `Exit code N` and the tool names the class `tool_error`
 * (a timeout: `timeout`), so the output stays visible to the model. grep's,
 * diff's, test's and find's exit code 1 are not failures (Claude Code's
 * command semantics).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { analyseBash, analyseBashSync, initBashParser } from '../bash/parser.js';
import { commandName } from '../bash/paths.js';
import { isReadOnlyAnalysis } from '../bash/read-only.js';
import { bubblewrapArgs, bubblewrapAvailable } from '../bash/sandbox.js';
import { unwrapStages } from '../bash/wrappers.js';
import { ToolError, type ErrorClass } from '../pipeline/error-class.js';
import { checkBashPermission } from '../permissions/bash-rules.js';
import { formatPersisted, type OutputSink, type SinkResult } from '../results/output-sink.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext, ToolResultBlock } from '../tool/types.js';
import { TaskLimitError } from '../tasks/background.js';
import { runChild } from '../util/child.js';
import { oneLine } from '../util/text.js';
import { expandHome } from '../workspace.js';
import { loadPrompt } from './prompt.js';

export const BASH_MAX_RESULT_CHARS = 30_000;
/** Bash cannot take one argument over 128 KiB (MAX_ARG_STRLEN); the script adds a trap line. */
export const BASH_MAX_COMMAND_BYTES = 120_000;

export const BashInput = z.strictObject({
  command: z.string().describe('The command to execute'),
  timeout: z.number().int().positive().optional().describe('Optional timeout in milliseconds (max 600000)'),
  description: z
    .string()
    .optional()
    .describe(
      "Clear, concise description of what this command does in 5-10 words, in active voice. Examples:\nInput: ls\nOutput: List files in current directory\n\nInput: git status\nOutput: Show working tree status\n\nInput: npm install\nOutput: Install package dependencies",
    ),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Set to true to run this command in the background. Use TaskOutput to read the output later, and TaskStop to stop it.'),
  // Claude Code's; here the operator decides whether commands are sandboxed (bash.sandbox), not the model.
  dangerouslyDisableSandbox: z
    .boolean()
    .optional()
    .describe('Not honoured by this service: where its sandbox is on, a call that sets this to true is refused.'),
});
export type BashInput = z.infer<typeof BashInput>;

export interface BashOutput {
  /** The text the model receives. */
  text: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  isError: boolean;
  /** The persisted results holding the whole stdout / stderr, when they were too large to inline. */
  stdoutResultId: string | undefined;
  stderrResultId: string | undefined;
  cwd: string;
  /** Claude Code's fields, which PostToolUse hooks read (`tool_response.stdout`): each stream's text (a preview when persisted). */
  stdout: string;
  stderr: string;
  interrupted: boolean;
  isImage: false;
  /** Set when the command was started in the background. */
  taskId?: string | undefined;
}

/** Exit codes that are answers rather than failures (Claude Code's commandSemantics). */
const EXIT_SEMANTICS: Readonly<Record<string, (code: number) => string | undefined>> = {
  grep: (c) => (c === 1 ? 'No matches found' : undefined),
  egrep: (c) => (c === 1 ? 'No matches found' : undefined),
  fgrep: (c) => (c === 1 ? 'No matches found' : undefined),
  rg: (c) => (c === 1 ? 'No matches found' : undefined),
  diff: (c) => (c === 1 ? 'Files differ' : undefined),
  test: (c) => (c === 1 ? 'Condition is false' : undefined),
  '[': (c) => (c === 1 ? 'Condition is false' : undefined),
  '[[': (c) => (c === 1 ? 'Condition is false' : undefined),
  find: (c) => (c === 1 ? 'Some directories were inaccessible' : undefined),
};

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function formatMs(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

function sinkText(r: SinkResult): { text: string; id: string | undefined } {
  if (r.kind === 'inline') return { text: r.text.replace(/\n+$/, ''), id: undefined };
  return { text: formatPersisted(r), id: r.id };
}

/** What an exit code means for the last top-level command, when it is not a failure. */
function exitMeaning(command: string, code: number): string | undefined {
  const a = analyseBashSync(command);
  if (!a) return undefined;
  const top = a.commands.filter((c) => c.origin === 'top');
  const last = top[top.length - 1];
  if (!last) return undefined;
  const { stages } = unwrapStages(last.argv, false);
  const name = commandName(stages[stages.length - 1]!);
  return name === undefined ? undefined : EXIT_SEMANTICS[name]?.(code);
}

/** Whether commands run in the sandbox here. */
function sandboxOn(ctx: ToolContext): boolean {
  const mode = ctx.config.bash.sandbox.mode;
  return mode === 'bubblewrap' || (mode === 'auto' && bubblewrapAvailable());
}

function sandboxFor(ctx: ToolContext, cwd: string, scratch: string): string[] | undefined {
  const sb = ctx.config.bash.sandbox;
  if (sb.mode === 'off') return undefined;
  if (!bubblewrapAvailable()) {
    if (sb.mode === 'auto') return undefined;
    throw new ToolError(
      'The Bash sandbox is required (bash.sandbox.mode "bubblewrap") but bubblewrap (bwrap) is not installed or cannot create namespaces here; the command was not run.',
      'io',
    );
  }
  const roots = ctx.workspace.roots;
  const readOnly: string[] = [];
  const storage = ctx.config.storage.path;
  if (storage !== ':memory:') readOnly.push(path.dirname(path.resolve(storage)));
  for (const r of roots) readOnly.push(path.join(r, '.git', 'hooks'));
  return bubblewrapArgs({
    writable: [...roots, ...sb.writablePaths.map((p) => path.resolve(ctx.workspace.root, expandHome(p))), scratch],
    readOnly,
    allowNetwork: sb.allowNetwork,
    cwd,
  });
}

/** How a script runs: `bash -c`, inside bubblewrap where the sandbox applies. */
function bashProcess(ctx: ToolContext, cwd: string, scratch: string, script: string): { file: string; args: string[] } {
  const sandbox = sandboxFor(ctx, cwd, scratch);
  return sandbox ? { file: 'bwrap', args: [...sandbox, '--', 'bash', '-c', script] } : { file: 'bash', args: ['-c', script] };
}

async function runBash(input: BashInput, ctx: ToolContext): Promise<BashOutput> {
  const root = ctx.workspace.root;
  const notes: string[] = [];
  let cwd = ctx.session.cwd;
  if (!isDirectory(cwd)) {
    notes.push(`The working directory ${cwd} no longer exists; the command ran in ${root}.`);
    cwd = root;
    ctx.session.cwd = root;
    ctx.session.touch();
  }
  const timeoutMs = input.timeout ?? ctx.config.bash.defaultTimeoutMs;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bash-'));
  const cwdFile = path.join(scratch, 'cwd');
  let stdout: OutputSink | undefined;
  let stderr: OutputSink | undefined;
  try {
    // The trap records where the command left the shell, whatever way it exits.
    const script = `trap 'pwd -P >| ${shellQuote(cwdFile)} 2>/dev/null' EXIT; ${input.command}`;
    const out = ctx.createOutput();
    const err = ctx.createOutput();
    stdout = out;
    stderr = err;
    const r = await runChild({
      ...bashProcess(ctx, cwd, scratch, script),
      cwd,
      env: ctx.childEnv,
      timeoutMs,
      signal: ctx.signal,
      onStdout: (s) => out.write(s),
      onStderr: (s) => err.write(s),
    });
    if (r.aborted || ctx.signal.aborted) {
      throw Object.assign(new Error('The command was cancelled'), { name: 'AbortError' });
    }
    if (r.spawnError) throw new ToolError(`Could not run bash: ${r.spawnError}`, 'io');

    const newCwd = readCwd(cwdFile);
    if (newCwd !== undefined && newCwd !== ctx.session.cwd) {
      if (ctx.workspace.contains(newCwd)) {
        ctx.session.cwd = newCwd;
      } else {
        notes.push(`Shell cwd was reset to ${root}`);
        ctx.session.cwd = root;
      }
      ctx.session.touch();
    }

    const o = sinkText(out.finish());
    const e = sinkText(err.finish());
    stdout = undefined;
    stderr = undefined;
    const body = [o.text, e.text, ...notes].filter((s) => s.length > 0).join('\n');
    let text = body;
    let isError = false;
    if (r.timedOut) {
      isError = true;
      text = `Command timed out after ${formatMs(timeoutMs)}${body ? `\n${body}` : ''}`;
    } else if (r.exitCode !== 0) {
      const code = r.exitCode ?? 128 + (os.constants.signals[r.signal as keyof typeof os.constants.signals] ?? 0);
      const meaning = r.exitCode === null ? undefined : exitMeaning(input.command, r.exitCode);
      if (meaning !== undefined) text = body || meaning;
      else {
        isError = true;
        // Claude Code's ShellError text: the exit code, then stderr, then stdout (toolErrors.ts getErrorParts).
        const failure = [e.text, o.text, ...notes].filter((x) => x.length > 0).join('\n');
        text = `Exit code ${code}${r.signal ? ` (killed by ${r.signal})` : ''}${failure ? `\n${failure}` : ''}`;
      }
    }
    return {
      text,
      exitCode: r.exitCode,
      signal: r.signal,
      timedOut: r.timedOut,
      isError,
      stdoutResultId: o.id,
      stderrResultId: e.id,
      cwd: ctx.session.cwd,
      stdout: o.text,
      stderr: e.text,
      interrupted: r.timedOut,
      isImage: false,
    };
  } finally {
    stdout?.abort();
    stderr?.abort();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * run_in_background: starts the command as a background task and answers at
 * once. It runs where a foreground call would (working directory, sandbox,
 * environment) but leaves the session's working directory as it is, and the
 * `timeout` does not apply: the task runs until it exits, TaskStop, or the
 * service's lifetime for background tasks (bash.background.maxLifetimeMs).
 */
function startBackground(input: BashInput, ctx: ToolContext): BashOutput {
  const tasks = ctx.tasks;
  if (!tasks) throw new ToolError(BACKGROUND_OFF, 'validation');
  let cwd = ctx.session.cwd;
  if (!isDirectory(cwd)) cwd = ctx.workspace.root;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bash-'));
  const cleanup = (): void => fs.rmSync(scratch, { recursive: true, force: true });
  let taskId: string;
  try {
    taskId = tasks.start({
      sessionId: ctx.session.id,
      command: input.command,
      description: input.description,
      ...bashProcess(ctx, cwd, scratch, input.command),
      cwd,
      env: ctx.childEnv,
      cleanup,
    }).id;
  } catch (e) {
    cleanup();
    if (e instanceof TaskLimitError) throw new ToolError(e.message, 'tool_error');
    throw e;
  }
  return {
    text: `Command running in background with ID: ${taskId}. Read its output with TaskOutput and stop it with TaskStop, giving task_id "${taskId}".`,
    exitCode: null,
    signal: null,
    timedOut: false,
    isError: false,
    stdoutResultId: undefined,
    stderrResultId: undefined,
    cwd: ctx.session.cwd,
    stdout: '',
    stderr: '',
    interrupted: false,
    isImage: false,
    taskId,
  };
}

const BACKGROUND_OFF =
  'run_in_background is switched off on this service (bash.background.enabled is false): run the command in the foreground, within the timeout.';

function readCwd(file: string): string | undefined {
  let s: string;
  try {
    s = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const dir = s.endsWith('\n') ? s.slice(0, -1) : s;
  return dir.length > 0 && path.isAbsolute(dir) && isDirectory(dir) ? dir : undefined;
}

function readOnly(input: BashInput): boolean {
  const a = analyseBashSync(input.command);
  return a !== undefined && isReadOnlyAnalysis(a);
}

export const bashTool = buildTool({
  name: 'Bash',
  searchHint: 'run shell commands in a terminal',
  description: loadPrompt(new URL('./bash.md', import.meta.url)),
  inputSchema: BashInput,
  maxResultSizeChars: BASH_MAX_RESULT_CHARS,
  mayBeReadOnly: true,
  // Synchronous: false (conservative) until initBashParser() has resolved.
  isReadOnly: readOnly,
  isConcurrencySafe: readOnly,
  validateInput: async (input, ctx) => {
    if (input.command.trim().length === 0) return { ok: false, message: 'The command is empty.', code: 1 };
    if (input.command.includes('\u0000')) {
      return { ok: false, message: 'The command contains a NUL character, which bash cannot receive.', code: 2 };
    }
    const bytes = Buffer.byteLength(input.command, 'utf8');
    if (bytes > BASH_MAX_COMMAND_BYTES) {
      return {
        ok: false,
        message: `The command is ${bytes} bytes long; at most ${BASH_MAX_COMMAND_BYTES} bytes can be run. Write a script file and run it instead.`,
        code: 3,
      };
    }
    const max = ctx.config.bash.maxTimeoutMs;
    if (input.timeout !== undefined && input.timeout > max) {
      return {
        ok: false,
        message: `timeout ${input.timeout} exceeds the maximum of ${max} milliseconds (${formatMs(max)}). Use a timeout of at most ${max}.`,
        code: 4,
      };
    }
    if (input.run_in_background === true && !ctx.tasks) return { ok: false, message: BACKGROUND_OFF, code: 5 };
    if (input.dangerouslyDisableSandbox === true && sandboxOn(ctx)) {
      return {
        ok: false,
        message: `This service runs every command in its sandbox (bash.sandbox.mode "${ctx.config.bash.sandbox.mode}"); dangerouslyDisableSandbox is not honoured. Run the command without it, inside the working directories.`,
        code: 6,
      };
    }
    await initBashParser();
    return { ok: true };
  },
  checkPermissions: async (input, ctx) => checkBashPermission(input.command, ctx),
  call: async (input, ctx) => {
    await initBashParser();
    // Analysed once here so that the exit-code semantics read a cached analysis.
    await analyseBash(input.command);
    if (input.run_in_background === true) return { data: startBackground(input, ctx) };
    const out = await runBash(input, ctx);
    const errorClass: ErrorClass | undefined = out.isError ? (out.timedOut ? 'timeout' : 'tool_error') : undefined;
    return { data: out, resultId: out.stdoutResultId ?? out.stderrResultId, errorClass };
  },
  renderToolUseMessage: (input) => `Bash(${oneLine(input.command, 160)})`,
  getToolUseSummary: (input) => (input.description ? oneLine(input.description, 80) : oneLine(input.command, 80)),
  renderToolResultMessage: (out) =>
    out.taskId !== undefined
      ? `Running in the background (${out.taskId})`
      : out.timedOut ? 'Timed out' : out.isError ? `Exit code ${out.exitCode ?? out.signal ?? '?'}` : out.text.length === 0 ? 'No output' : `${out.text.split('\n').length} lines`,
  toAutoClassifierInput: (input) => input.command,
  mapToolResultToToolResultBlockParam: (out, toolUseId): ToolResultBlock =>
    out.isError
      ? { type: 'tool_result', tool_use_id: toolUseId, content: out.text, is_error: true }
      : { type: 'tool_result', tool_use_id: toolUseId, content: out.text },
});
