/**
 * One tool use through the seven steps:
 *   1 lookup → 2 parse → 3 validate → 4 PreToolUse hooks → 5 permission
 *   → 6 call → 7 PostToolUse hooks.
 * Each step lives in its own module and takes the call in one state and
 * returns the next; this file only sequences them, records the time of each,
 * publishes state changes, and commits the execution row (after the audit
 * row) before the result is handed back.
 */
import type { Logger } from 'pino';
import { decide, type HookPermission } from '../permissions/engine.js';
import type { RuleIndex } from '../permissions/rule-index.js';
import type { Session } from '../sessions/session.js';
import type { CanUseTool, ProgressEvent } from '../tool/types.js';
import { ToolexecError } from '../errors.js';
import { CallAbort } from './cancel.js';
import { digestInput, inputKey, safeStringify } from './digest.js';
import { inputMayBeCut, type ExecutionEnd } from '../storage/executions.js';
import { CallContext } from './context.js';
import { errorText } from './error-class.js';
import { errorBlock, finished, refinished } from './finish.js';
import { lookup } from './step1-lookup.js';
import { parse } from './step2-parse.js';
import { isDeferred, TOOL_SEARCH_NAME } from '../pool/pool.js';
import { validate } from './step3-validate.js';
import { hasPreHooks, NO_CONTEXT, preHooks } from './step4-pre-hooks.js';
import { permission } from './step5-permission.js';
import { callTool } from './step6-call.js';
import { appendText, hasPostHooks, postHooks } from './step7-post-hooks.js';
import type { Call, FinishedCall, PipelineDeps, PreParsed, QueuedCall, StepName, Timings, ToolUse } from './types.js';
import { messages } from '../permissions/messages.js';
import { contentText } from '../tool/content-text.js';
import { lazyChild, maskValue } from '../observability/logging.js';
import { maskFinished } from './mask.js';
import { VALIDATES_NOTHING } from '../tool/build-tool.js';

export interface RunOptions {
  executionId: string;
  /** The call's cancellation (the executor registers it so that the call can be cancelled by id). */
  abort?: CallAbort | undefined;
  /** Or only a signal that cancels it (embedders, benchmarks). Neither: the call cannot be cancelled. */
  signal?: AbortSignal | undefined;
  actor: string | null;
  /** Set when the call is created before it runs (wait:false). */
  queued?: QueuedCall | undefined;
  /** The caller's logger (an HTTP request's carries its reqId); the call's lines add execution_id and tool. */
  log?: Logger | undefined;
  /** Step 2's parse, done ahead by orchestration to judge concurrency. */
  parsed?: PreParsed | undefined;
}

/** Builds the queued state of a call and writes its row. */
export function queueCall(use: ToolUse, session: Session, deps: PipelineDeps, executionId: string, actor: string | null): QueuedCall {
  const json = safeStringify(use.input);
  // The record keeps the input with the service's secrets masked (pipeline/mask.ts); a retry of it is
  // then compared by its input key, as one stored cut is.
  const mask = deps.results.mask;
  const masked = mask === undefined ? use.input : maskValue(use.input, mask);
  const stored = masked === use.input ? json : safeStringify(masked);
  // Fields in the order of every other state (states.ts).
  const call: QueuedCall = {
    status: 'queued',
    id: executionId,
    toolUseId: use.id,
    sessionId: session.id,
    name: use.name,
    rawInput: use.input,
    inputDigest: digestInput(json),
    createdAt: Date.now(),
    startedPerf: performance.now(),
    actor,
    timings: {},
    hookMessages: [],
  };
  deps.executions.start({
    id: executionId,
    sessionId: session.id,
    toolUseId: use.id,
    tool: use.name,
    status: 'queued',
    inputDigest: call.inputDigest,
    input: stored,
    // Only an input the record may keep cut, or keeps masked, needs it (the executor compares another as a value).
    inputKey: inputMayBeCut(json) || stored !== json ? inputKey(use.input) : undefined,
    actor,
    createdAt: call.createdAt,
  });
  deps.observer.onState(call);
  return call;
}

export async function runToolUse(
  use: ToolUse,
  session: Session,
  deps: PipelineDeps,
  opts: RunOptions,
): Promise<FinishedCall> {
  const queued = opts.queued ?? queueCall(use, session, deps, opts.executionId, opts.actor);
  const abort = opts.abort ?? (opts.signal !== undefined ? CallAbort.of(opts.signal) : new CallAbort());
  // Made on first use: most calls log nothing (observability/logging.ts).
  const log = lazyChild(opts.log ?? deps.log, { execution_id: queued.id, tool: use.name });
  // Until its row is committed the call belongs to this Session object: the
  // store must not evict it (and make a second one for the same id).
  session.active += 1;
  try {
    let result: FinishedCall;
    try {
      result = await steps(queued, use, session, deps, abort, log, opts.parsed);
    } catch (e) {
      // Ours, not the tool's: logged with its stack, reported to the model without one.
      log.error({ err: e }, 'pipeline error');
      result = finished(queued, 'failed', errorBlock(queued.toolUseId, `Internal error: ${errorText(e)}`), 'internal');
    }
    // Answered, stored and sent to subscribers masked, whichever step wrote the text.
    if (deps.results.mask) result = maskFinished(result, deps.results.mask);
    // A call cancelled before its permission decision (queued at a shutdown, its client gone, cancelled
    // by id) has no decision to audit: its audit row says it was cancelled, so that no call that could
    // have run leaves the audit without a trace. Recorded before the row is committed, as decisions are.
    if (result.status === 'cancelled' && result.decision === undefined) {
      deps.audit.record({
        ts: result.finishedAt,
        sessionId: result.sessionId,
        toolUseId: result.toolUseId,
        executionId: result.id,
        tool: result.tool?.name ?? result.name,
        behavior: 'deny',
        reasonType: 'cancelled',
        reasonDetail: `cancelled before its permission decision${abort.reason === undefined ? '' : `: ${abort.reason}`}`,
        actor: result.actor,
        inputDigest: result.inputDigest,
      });
    }
    // The row (after its audit row) is committed before the result is handed back. Awaited here rather than
    // in a function of its own: an async function's promise and a second await per call, for nothing.
    try {
      await deps.executions.finish(rowEnd(result));
    } catch (e) {
      log.error({ err: e }, 'could not commit the execution and its audit row');
      throw new ToolexecError(
        'TOOLEXEC_ERR_STORAGE_UNAVAILABLE',
        'The call ran, but its record could not be committed to the database; its result is withheld',
        { execution_id: result.id },
      );
    }
    deps.observer.onState(result);
    return result;
  } finally {
    session.active -= 1;
  }
}

/** The end of a finished call's row. */
function rowEnd(f: FinishedCall): ExecutionEnd {
  return {
    id: f.id,
    tool: f.tool?.name ?? f.name,
    status: f.status,
    decision: f.decision ? JSON.stringify({ behavior: f.decision.behavior, reason: f.decision.reason, chain: f.decision.chain, actor: f.decision.actor }) : null,
    errorClass: f.errorClass,
    isError: f.block.is_error === true,
    resultId: f.resultId,
    resultBlock: JSON.stringify(f.block),
    hookMessages: f.hookMessages.length > 0 ? JSON.stringify(f.hookMessages) : null,
    timings: timingsJson(f.timings),
    finishedAt: f.finishedAt,
    durationMs: f.durationMs,
  };
}

/**
 * The step timings as the row keeps them: milliseconds rounded to the
 * microsecond, as an answer's duration_ms is. JSON.stringify wrote each
 * difference of performance.now() in its shortest exact form (up to 17
 * digits: 0.007948719258980281), and those seven double-to-text conversions
 * were most of the cost of a call's row: 2.7-3.6 µs against 1.6-2.1 µs
 * rounded (seven timings, a million rows, three runs). The keys are step
 * names, written as they are; a value that is not finite (none is: they are
 * differences of performance.now()) is null, as JSON.stringify writes it.
 */
export function timingsJson(t: Timings): string {
  let s = '';
  for (const k in t) {
    const v = t[k as StepName];
    if (v !== undefined) s += `,"${k}":${Number.isFinite(v) ? Math.round(v * 1000) / 1000 : 'null'}`;
  }
  return s === '' ? '{}' : `{${s.slice(1)}}`;
}

function timed<T>(timings: Call['timings'], step: StepName, t0: number, v: T): T {
  timings[step] = performance.now() - t0;
  return v;
}

async function steps(
  queued: QueuedCall,
  use: ToolUse,
  session: Session,
  deps: PipelineDeps,
  abort: CallAbort,
  log: Logger,
  pre: PreParsed | undefined,
): Promise<FinishedCall> {
  const { timings } = queued;
  if (abort.aborted) return finished(queued, 'cancelled', errorBlock(queued.toolUseId, abort.reason ?? messages.cancelled), 'cancelled');

  // 1. Lookup.
  let t = performance.now();
  const found = timed(timings, 'lookup', t, lookup(queued, deps.pool()));
  if (found.status !== 'validating') return found;
  deps.observer.onState(found);

  // 2. Parse.
  t = performance.now();
  // A deferred tool's schema failure gets Claude Code's hint to load it with ToolSearch.
  const hint = isDeferred(found.tool) && deps.pool().lookup(TOOL_SEARCH_NAME) !== undefined;
  const parsed = timed(timings, 'parse', t, parse(found, use.input, use.inputError, pre, hint));
  if (parsed.status !== 'validating') return parsed;
  const tool = parsed.tool;

  const rules: RuleIndex = deps.rulesFor(session);
  const ctx = new CallContext(deps, session, tool, queued.id, queued.toolUseId, abort, rules, session.mode, log);

  // 3. Validate (a tool without checks of its own passes as it is: validate() would await its resolved OK,
  // three promises and a turn of the microtask queue for nothing).
  t = performance.now();
  const toValidate = parsed as typeof parsed & { input: Record<string, unknown> };
  const valid = timed(timings, 'validate', t, tool.validateInput === VALIDATES_NOTHING ? toValidate : await validate(toValidate, ctx));
  if (valid.status !== 'validating') return valid;

  // 4. PreToolUse hooks (skipped without a promise when none is registered for the tool).
  t = performance.now();
  let checked = valid;
  let hookPermission: HookPermission | undefined;
  let additionalContext = NO_CONTEXT;
  if (hasPreHooks(deps, tool.name)) {
    const pre4 = await preHooks(valid, ctx, deps, session, abort.signal);
    if (pre4.call.status !== 'validating') {
      timings.pre_hooks = performance.now() - t;
      return withContext(pre4.call, pre4.additionalContext);
    }
    checked = pre4.call;
    hookPermission = pre4.permission;
    additionalContext = pre4.additionalContext;
  }
  timings.pre_hooks = performance.now() - t;
  // A PreToolUse hook's additionalContext reaches the model whatever the outcome (a denial, a failure too).
  if (abort.aborted) return withContext(finished(checked, 'cancelled', errorBlock(queued.toolUseId, abort.reason ?? messages.cancelled), 'cancelled'), additionalContext);

  // 5. Permission.
  t = performance.now();
  const allowed = await permission(checked, ctx, session, rules, hookPermission, deps, abort, (c) => deps.observer.onState(c), valid.input);
  timings.permission = performance.now() - t;
  if (allowed.status !== 'running') return withContext(allowed, additionalContext);
  if (abort.aborted) return withContext(finished(allowed, 'cancelled', errorBlock(queued.toolUseId, abort.reason ?? messages.cancelled), 'cancelled'), additionalContext);
  deps.observer.onState(allowed);

  // 6. Call.
  const canUseTool: CanUseTool = async (name, input) => {
    const other = deps.pool().lookup(name);
    if (!other) return { behavior: 'deny', message: `No such tool available: ${name}` };
    const d = await decide({ tool: other, input, ctx, mode: session.mode, rules, hook: undefined });
    return { behavior: d.behavior, message: d.message };
  };
  // An MCP server's progress messages reach subscribers (and /mcp clients) masked, as its result does.
  const mask = deps.results.mask;
  const onProgress = (e: ProgressEvent): void => deps.observer.onProgress(allowed, mask ? maskValue(e, mask) : e);
  const callCtx = allowed.input === parsed.input && checked.input === parsed.input ? ctx : ctx.modified();
  t = performance.now();
  const out = await callTool(allowed, callCtx, deps, canUseTool, use, onProgress, abort);
  timings.call = performance.now() - t;

  // 7. PostToolUse / PostToolUseFailure hooks.
  t = performance.now();
  let result: FinishedCall;
  if (out.ok && out.errorClass !== null) {
    // A failure the tool reported in its result (a non-zero exit, an MCP
    // isError): Claude Code throws there, so the failure hooks run, not PostToolUse.
    let block = out.block;
    if (hasPostHooks(deps, true, tool.name)) {
      ({ block } = await postHooks(
        { call: allowed, toolName: tool.name, input: allowed.input, block, response: contentText(block.content), failed: true, interrupted: false },
        deps,
        session,
        abort.signal,
      ));
    }
    result = finished(allowed, 'failed', withText(block, additionalContext), out.errorClass, out.resultId !== null ? { resultId: out.resultId } : undefined);
  } else if (out.ok) {
    let block = out.block;
    let resultId = out.resultId;
    if (hasPostHooks(deps, false, tool.name)) {
      const post = await postHooks(
        { call: allowed, toolName: tool.name, input: allowed.input, block, resultId, response: out.data, failed: false, interrupted: false },
        deps,
        session,
        abort.signal,
      );
      block = post.block;
      // An MCP tool's output replaced by a hook (updatedMCPToolOutput).
      if (post.replacedResultId !== undefined) resultId = post.replacedResultId;
    }
    result = finished(allowed, 'succeeded', withText(block, additionalContext), null, resultId !== null ? { resultId } : undefined);
  } else if (hasPostHooks(deps, true, tool.name)) {
    // Failure hooks still run after a cancel, bounded by their own timeouts.
    const hookSignal = out.errorClass === 'cancelled' ? new AbortController().signal : abort.signal;
    const { block } = await postHooks(
      {
        call: allowed,
        toolName: tool.name,
        input: allowed.input,
        block: out.finished.block,
        response: out.error,
        failed: true,
        interrupted: out.errorClass === 'cancelled',
      },
      deps,
      session,
      hookSignal,
    );
    result = withContext(block === out.finished.block ? out.finished : refinished(out.finished, { block }), additionalContext);
  } else {
    result = withContext(out.finished, additionalContext);
  }
  timings.post_hooks = performance.now() - t;
  return result;
}

/** The block with the PreToolUse hooks' additionalContext appended. */
function withText(block: FinishedCall['block'], context: readonly string[]): FinishedCall['block'] {
  for (const c of context) block = appendText(block, c);
  return block;
}

/** The call with the PreToolUse hooks' additionalContext appended to its result. */
function withContext(f: FinishedCall, context: readonly string[]): FinishedCall {
  return context.length === 0 ? f : refinished(f, { block: withText(f.block, context) });
}
