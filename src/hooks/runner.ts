/**
 * Runs the hooks configured in Claude Code's shape
 * (`hooks: {Event: [{matcher, hooks: [{type: "command"|"http", …}]}]}`).
 *
 * The hooks that match an (event, tool) pair are computed once and cached;
 * when none match, `matches` is false and the pipeline skips the step without
 * allocating anything. Matching hooks run in parallel, de-duplicated by
 * (type, shell, command|url, if) with the last one winning, and their
 * judgements are aggregated deny > ask > allow.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from 'pino';
import type { HookEvent, HooksConfig, RunnableHookHandler as HookHandler } from '../config/schema.js';
import { HOOK_EVENTS } from '../config/schema.js';
import { parseRule } from '../permissions/rule-parser.js';
import type { Behavior } from '../permissions/types.js';
import type { ToolInput } from '../tool/types.js';
import { runChild } from '../util/child.js';
import { interpretHookRun, type HookJudgement, type HookRun } from './interpret.js';
import { compileMatcher, type ToolNameMatcher } from './matcher.js';
import { emptyOutcome, type HookOutcome, type HookPayload, type HookRunner } from './types.js';
import { readCapped } from '../util/read-capped.js';

/** Claude Code's default hook timeout (TOOL_HOOK_EXECUTION_TIMEOUT_MS). */
export const DEFAULT_HOOK_TIMEOUT_S = 600;
/** Bytes kept from each of a hook's stdout and stderr. */
export const HOOK_OUTPUT_CAP_BYTES = 1024 * 1024;
/** (session, hook) pairs remembered for `once`; the oldest are forgotten past this. */
export const ONCE_MEMORY = 100_000;

/** Claude Code's way for a running hook to go to the background: `{"async":true}` as its first line of stdout. */
function isAsyncLine(line: string): boolean {
  const t = line.trim();
  if (!t.startsWith('{')) return false;
  try {
    const v = JSON.parse(t) as unknown;
    return typeof v === 'object' && v !== null && (v as { async?: unknown }).async === true;
  } catch {
    return false;
  }
}

/** Decides a handler's `if` condition (permission-rule syntax) for a call; `cwd` is the session's (relative rule paths). */
export type IfMatcher = (rule: string, toolName: string, input: ToolInput, cwd?: string) => boolean;

/** Without a richer matcher, `if` compares the tool name and runs the hook on any content. */
export const toolNameIfMatcher: IfMatcher = (rule, toolName) => {
  const p = parseRule(rule);
  if ('error' in p) return true;
  return p.toolName === toolName;
};

export interface HookRunnerOptions {
  hooks: HooksConfig;
  disableAll?: boolean;
  projectDir: string;
  childEnv: NodeJS.ProcessEnv;
  log: Logger;
  ifMatcher?: IfMatcher;
  /** The service's environment, for http hooks' allowedEnvVars. */
  env?: NodeJS.ProcessEnv;
  /** Masks secrets in what an http hook's endpoint answers or fails with (it may echo the headers sent). */
  mask?: ((text: string) => string) | undefined;
}

interface Group {
  match: ToolNameMatcher;
  handlers: HookHandler[];
}

const RANK: Record<Behavior, number> = { allow: 1, ask: 2, deny: 3 };
/**
 * The events whose hooks' `if` Claude Code evaluates (prepareIfConditionMatcher
 * in utils/hooks.ts). On any other, PermissionDenied included, it cannot
 * evaluate the condition and skips the hook: a hook with an `if` never runs there.
 */
const IF_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest']);
const NO_HANDLERS: readonly HookHandler[] = Object.freeze([]);

function handlerKey(h: HookHandler): string {
  // A shell left out is Claude Code's default, "bash": the same command with and without it is one hook there.
  return h.type === 'command'
    ? `command\u0000${h.shell ?? 'bash'}\u0000${h.command}\u0000${h.if ?? ''}`
    : `http\u0000${h.url}\u0000${h.if ?? ''}`;
}

function handlerName(h: HookHandler): string {
  return h.type === 'command' ? h.command : h.url;
}

type CommandHandler = Extract<HookHandler, { type: 'command' }>;

export class ConfiguredHookRunner implements HookRunner {
  private readonly groups = new Map<HookEvent, Group[]>();
  private readonly cache = new Map<string, readonly HookHandler[]>();
  private readonly ifMatcher: IfMatcher;
  /** `once` hooks that have run, by session (insertion order: the oldest are dropped first). */
  private readonly onceRan = new Set<string>();
  /** Hooks running in the background, stopped by close(). */
  private readonly background = new Set<AbortController>();
  private closed = false;

  constructor(private readonly opts: HookRunnerOptions) {
    this.ifMatcher = opts.ifMatcher ?? toolNameIfMatcher;
    if (opts.disableAll) return;
    for (const event of HOOK_EVENTS) {
      const groups = opts.hooks[event];
      if (!groups || groups.length === 0) continue;
      this.groups.set(
        event,
        // prompt, agent and mcp_tool hooks need a model or an MCP client: not run (config/load.ts says so).
        groups.map((g) => ({ match: compileMatcher(g.matcher), handlers: g.hooks.filter((h): h is HookHandler => h.type === 'command' || h.type === 'http') })),
      );
    }
  }

  /** The de-duplicated handlers for an event and tool, computed once. */
  handlersFor(event: HookEvent, toolName: string): readonly HookHandler[] {
    const groups = this.groups.get(event);
    if (!groups) return NO_HANDLERS;
    const key = `${event}\u0000${toolName}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const byKey = new Map<string, HookHandler>();
    for (const g of groups) {
      if (!g.match(toolName)) continue;
      for (const h of g.handlers) {
        const k = handlerKey(h);
        byKey.delete(k); // last wins, and keeps its position last
        byKey.set(k, h);
      }
    }
    const list = byKey.size === 0 ? NO_HANDLERS : Object.freeze([...byKey.values()]);
    if (this.cache.size < 10_000) this.cache.set(key, list);
    return list;
  }

  matches(event: HookEvent, toolName: string): boolean {
    return this.handlersFor(event, toolName).length > 0;
  }

  async run(event: HookEvent, payload: HookPayload, signal: AbortSignal): Promise<HookOutcome> {
    const handlers = this.handlersFor(event, payload.tool_name).filter(
      (h) => (h.if === undefined || (IF_EVENTS.has(event) && this.ifMatcher(h.if, payload.tool_name, payload.tool_input, payload.cwd))) && this.firstOnce(h, payload.session_id),
    );
    if (handlers.length === 0) return emptyOutcome();
    const body = JSON.stringify(payload);
    const waited: HookHandler[] = [];
    for (const h of handlers) {
      if (h.type === 'command' && (h.async === true || h.asyncRewake === true)) this.runInBackground(event, h, body, payload.cwd);
      else waited.push(h);
    }
    const runs = await Promise.all(waited.map((h) => this.exec(event, h, body, payload.cwd, signal)));
    const judgements = runs.map((r) => interpretHookRun(event, payload.tool_name, r));
    const outcome = aggregate(judgements);
    outcome.ran = handlers.length;
    return outcome;
  }

  /** Whether a handler may run for this session: always, unless it is a `once` hook that already has (it is then marked). */
  private firstOnce(h: HookHandler, sessionId: string): boolean {
    if (h.type !== 'command' || h.once !== true) return true;
    const key = `${sessionId}\u0000${handlerKey(h)}`;
    if (this.onceRan.has(key)) return false;
    this.onceRan.add(key);
    if (this.onceRan.size > ONCE_MEMORY) this.onceRan.delete(this.onceRan.values().next().value as string);
    return true;
  }

  /**
   * Where a command hook starts: the session's directory, or the project's
   * when that one is gone (removed under the shell), as Claude Code falls back
   * to its original cwd. Spawned in a missing directory, the hook would fail to
   * start, a non-blocking error, and a guard would let the call through.
   */
  private spawnCwd(cwd: string): string {
    try {
      if (fs.statSync(cwd).isDirectory()) return cwd;
    } catch {
      /* gone, or not reachable */
    }
    return this.opts.projectDir;
  }

  /** Stops every hook still running in the background. */
  close(): void {
    this.closed = true;
    for (const c of this.background) c.abort();
    this.background.clear();
  }

  private runInBackground(event: HookEvent, h: CommandHandler, body: string, cwd: string): void {
    if (this.closed) return;
    const c = new AbortController();
    void this.execCommand(h, body, cwd, c.signal).then(this.backgrounded(event, h, c));
  }

  /** Tracks a hook gone to the background (close() stops it); the returned function takes its end. */
  private backgrounded(event: HookEvent, h: CommandHandler, c: AbortController): (r: HookRun) => void {
    this.background.add(c);
    return (r) => {
      this.background.delete(c);
      this.reportBackground(event, h, r);
    };
  }

  /** What a background hook did goes to the log: nothing waits for it. */
  private reportBackground(event: HookEvent, h: CommandHandler, r: HookRun): void {
    const fields = { event, hook: h.command, exit_code: r.exitCode, duration_ms: Math.round(r.durationMs), timed_out: r.timedOut || undefined };
    if (h.asyncRewake === true && r.exitCode === 2) {
      const stderr = r.stderr.slice(0, 2000);
      this.opts.log.warn({ ...fields, stderr: this.opts.mask ? this.opts.mask(stderr) : stderr }, 'background hook asked to wake the model (asyncRewake, exit 2); toolexec has no turn to wake');
    } else if (r.exitCode !== 0 || r.timedOut || r.error !== undefined) {
      this.opts.log.warn({ ...fields, error: r.error }, 'background hook failed');
    } else this.opts.log.debug(fields, 'background hook finished');
  }

  private async exec(event: HookEvent, h: HookHandler, body: string, cwd: string, signal: AbortSignal): Promise<HookRun> {
    if (h.type !== 'command') return this.execHttp(h, body, (h.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000, signal);
    // Its own controller: a hook that goes to the background ({"async":true}) outlives the call's signal.
    const c = new AbortController();
    const forward = (): void => c.abort();
    signal.addEventListener('abort', forward, { once: true });
    if (signal.aborted) c.abort();
    try {
      return await this.execCommand(h, body, cwd, c.signal, () => {
        signal.removeEventListener('abort', forward);
        if (this.closed) c.abort();
        return this.backgrounded(event, h, c);
      });
    } finally {
      signal.removeEventListener('abort', forward);
    }
  }

  /**
   * Runs a command hook. With `toBackground`, a first line of stdout that is
   * `{"async":true}` settles the run at once with an empty success; the
   * process runs on, and the function `toBackground()` returns gets its end.
   */
  private execCommand(h: CommandHandler, body: string, cwd: string, signal: AbortSignal, toBackground?: () => (r: HookRun) => void): Promise<HookRun> {
    const started = performance.now();
    let firstLine = toBackground ? '' : undefined;
    let early: ((r: HookRun) => void) | undefined;
    let onEnd: ((r: HookRun) => void) | undefined;
    const earlyRun = new Promise<HookRun>((resolve) => (early = resolve));
    const watchStdout = (text: string): void => {
      if (firstLine === undefined) return;
      const nl = text.indexOf('\n');
      firstLine += nl === -1 ? text : text.slice(0, nl);
      if (nl === -1 && firstLine.length < 4096) return;
      const line = firstLine;
      firstLine = undefined;
      if (toBackground && isAsyncLine(line)) {
        onEnd = toBackground();
        early?.({ hook: h.command, exitCode: 0, stdout: '', stderr: '', timedOut: false, durationMs: performance.now() - started, error: undefined });
      }
    };
    const finished = runChild({
      file: h.shell && h.shell !== 'bash' && h.shell !== 'sh' ? h.shell : h.shell === 'bash' ? 'bash' : '/bin/sh',
      args: ['-c', h.command],
      cwd: this.spawnCwd(cwd),
      env: { ...this.opts.childEnv, CLAUDE_PROJECT_DIR: this.opts.projectDir },
      // With a newline after it, as Claude Code writes it: a bash `read -r` at an end
      // of input without one returns 1, and a `set -e` guard would exit 1, a
      // non-blocking error, letting the call through.
      stdin: `${body}\n`,
      timeoutMs: (h.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000,
      signal,
      maxOutputBytes: HOOK_OUTPUT_CAP_BYTES,
      killGraceMs: 1000,
      watchStdout: toBackground ? watchStdout : undefined,
    }).then((r): HookRun => {
      const run: HookRun = {
        hook: h.command,
        // Killed by a signal: the shell's convention, 128 + the signal's number.
        exitCode: r.exitCode ?? (r.signal ? 128 + (os.constants.signals[r.signal] ?? 0) : null),
        stdout: r.stdout,
        stderr: r.stderr,
        timedOut: r.timedOut,
        durationMs: r.durationMs,
        error: r.spawnError ?? (r.aborted ? 'cancelled' : undefined),
        truncated: r.truncated,
      };
      onEnd?.(run);
      return run;
    });
    return toBackground ? Promise.race([earlyRun, finished]) : finished;
  }

  private async execHttp(
    h: Extract<HookHandler, { type: 'http' }>,
    body: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<HookRun> {
    const started = performance.now();
    const base = { hook: this.opts.mask ? this.opts.mask(h.url) : h.url, stdout: '', stderr: '', timedOut: false, error: undefined } as const;
    const env = this.opts.env ?? process.env;
    const allowed = new Set(h.allowedEnvVars ?? []);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const [k, v] of Object.entries(h.headers ?? {})) {
      headers[k] = v.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a?: string, b?: string) => {
        const name = a ?? b ?? '';
        // As in Claude Code, a variable allowedEnvVars does not list becomes empty.
        return allowed.has(name) ? (env[name] ?? '') : '';
      });
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetch(h.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([signal, timeout]),
        redirect: 'error',
      });
      const { text, truncated } = await readCapped(res, HOOK_OUTPUT_CAP_BYTES);
      const durationMs = performance.now() - started;
      if (res.status < 200 || res.status >= 300) {
        const stderr = `HTTP ${res.status}: ${text.slice(0, 500)}`;
        return { ...base, exitCode: 1, stderr: this.opts.mask ? this.opts.mask(stderr) : stderr, durationMs };
      }
      const answer = text.trim();
      if (answer.length > 0 && !answer.startsWith('{')) {
        // Claude Code's parseHttpHookOutput: an http hook must answer JSON (an empty body
        // counts as {}); plain text is a non-blocking error, shown to people, not a success.
        const invalid = `HTTP hook must return JSON, but got non-JSON response body: ${answer.length > 200 ? `${answer.slice(0, 200)}\u2026` : answer}`;
        return { ...base, exitCode: 0, durationMs, invalid: this.opts.mask ? this.opts.mask(invalid) : invalid };
      }
      let json: unknown;
      if (answer.startsWith('{')) {
        try {
          json = JSON.parse(text);
        } catch {
          return { ...base, exitCode: 0, stdout: text, durationMs, truncated };
        }
      }
      return json === undefined ? { ...base, exitCode: 0, durationMs } : { ...base, exitCode: 0, json, durationMs };
    } catch (e) {
      const durationMs = performance.now() - started;
      if (timeout.aborted) return { ...base, exitCode: null, timedOut: true, durationMs };
      const error = signal.aborted ? 'cancelled' : (e as Error).message;
      return { ...base, exitCode: null, durationMs, error: this.opts.mask ? this.opts.mask(error) : error };
    }
  }
}

/** deny > ask > allow across hooks; contexts and messages kept in hook order. */
export function aggregate(judgements: readonly HookJudgement[]): HookOutcome {
  const o = emptyOutcome();
  const sources: Record<Behavior, string[]> = { allow: [], ask: [], deny: [] };
  const reasons: Record<Behavior, string[]> = { allow: [], ask: [], deny: [] };
  let best: Behavior | undefined;
  judgements.forEach((j) => {
    for (const m of j.messages) o.messages.push(m);
    if (j.permission) {
      const b = j.permission.behavior;
      const hook = j.hook;
      sources[b].push(hook);
      if (j.permission.reason) reasons[b].push(j.permission.reason);
      if (!best || RANK[b] > RANK[best]) best = b;
    }
    if (j.updatedInput) o.updatedInput = j.updatedInput;
    if (j.updatedMCPToolOutput !== undefined) o.updatedMCPToolOutput = { output: j.updatedMCPToolOutput, hook: j.hook };
    if (j.additionalContext) o.additionalContext.push(j.additionalContext);
    if (j.blockingError) o.blockingErrors.push({ hook: j.hook, text: j.blockingError });
    if (j.stop && !o.stop) o.stop = j.stop;
    if (j.retry !== undefined && o.retry === undefined) o.retry = j.retry;
    if (j.permissionRequest) {
      if (!o.permissionRequest || (j.permissionRequest.behavior === 'deny' && o.permissionRequest.behavior === 'allow')) {
        o.permissionRequest = j.permissionRequest;
      }
    }
  });
  // A "defer" leaves the call to the normal permission flow: it outranks the other hooks'
  // allow (Claude Code ranks deny > defer > ask > allow), never a deny; an ask stays, the
  // stricter of the outcomes Claude Code reaches (there it depends on which hook ends first).
  if (best === 'allow' && judgements.some((j) => j.deferred !== undefined)) best = undefined;
  if (best) {
    o.permission = {
      behavior: best,
      reason: reasons[best].length > 0 ? reasons[best].join('\n') : undefined,
      source: sources[best].join(', '),
    };
  }
  return o;
}
