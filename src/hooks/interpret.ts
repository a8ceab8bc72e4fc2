/**
 * Turns what one hook did (exit code, stdout, stderr, or an HTTP answer) into
 * its judgement, following Claude Code's protocol:
 *
 * - exit 0: success; stdout starting with `{` is the JSON protocol
 *   (permissionDecision, updatedInput, additionalContext, continue,
 *   systemMessage, decision/reason);
 * - exit 2: blocking; stderr is the reason (PreToolUse → deny, Post* → shown
 *   to the model beside the result; PermissionDenied, after the refusal, has
 *   nothing to block: only recorded);
 * - anything else, a timeout, invalid JSON or an http hook's 2xx answer that
 *   is not JSON: a non-blocking error shown to the user, and the call goes on.
 *
 * JSON is honoured on exit 0 only, as Claude Code's documentation says (its
 * 2.1.x code also parses JSON on other exit codes; see the reference §5).
 */
import { z } from 'zod';
import type { HookEvent } from '../config/schema.js';
import type { Behavior } from '../permissions/types.js';
import type { ContentBlock, ToolInput } from '../tool/types.js';
import type { HookMessage, PermissionRequestDecision } from './types.js';

export interface HookRun {
  hook: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  error: string | undefined;
  /** An HTTP hook answered with JSON (status 2xx). */
  json?: unknown;
  /** stdout (or the HTTP body) passed the output cap and was cut. */
  truncated?: boolean;
  /** An HTTP hook answered 2xx with something that is not JSON: why (Claude Code's words). */
  invalid?: string;
}

export interface HookJudgement {
  hook: string;
  permission: { behavior: Behavior; reason: string | undefined } | undefined;
  updatedInput: ToolInput | undefined;
  additionalContext: string | undefined;
  blockingError: string | undefined;
  stop: { reason: string | undefined } | undefined;
  permissionRequest: PermissionRequestDecision | undefined;
  /** PermissionDenied `retry: true`: the hook's name. */
  retry: string | undefined;
  /** PreToolUse `permissionDecision: "defer"`: the hook's name (no decision of its own; see aggregate in runner.ts). */
  deferred: string | undefined;
  /** PostToolUse: the MCP tool output to give the model instead (validated; MCP tools only, pipeline step 7). */
  updatedMCPToolOutput: string | ContentBlock[] | undefined;
  messages: HookMessage[];
}

/**
 * What `updatedMCPToolOutput` may be: what an MCP tool's output is in Claude
 * Code, its text, or its content blocks (text, and base64 images).
 */
const McpToolOutput = z.union([
  z.string(),
  z.array(
    z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('text'), text: z.string() }),
      z.strictObject({
        type: z.literal('image'),
        source: z.strictObject({ type: z.literal('base64'), media_type: z.string().regex(/^image\/[a-z0-9.+-]+$/i), data: z.string() }),
      }),
    ]),
  ),
]);

const HookJson = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  decision: z.enum(['approve', 'block']).optional(),
  reason: z.string().optional(),
  systemMessage: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer']).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
      decision: z
        .union([
          z.looseObject({
            behavior: z.literal('allow'),
            updatedInput: z.record(z.string(), z.unknown()).optional(),
            // Claude Code's PermissionUpdate[]; each is checked where it is applied (permissions/permission-updates.ts).
            updatedPermissions: z.array(z.unknown()).optional(),
          }),
          z.looseObject({
            behavior: z.literal('deny'),
            message: z.string().optional(),
            interrupt: z.boolean().optional(),
          }),
        ])
        .optional(),
      // Read by PermissionDenied only: another event's hook is not refused for it.
      retry: z.unknown().optional(),
      // Read (and validated) by PostToolUse only.
      updatedMCPToolOutput: z.unknown().optional(),
    })
    .optional(),
});

/** The tool events whose hooks' additionalContext Claude Code gives the model. */
const CONTEXT_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);

/**
 * Nesting a hook's JSON may have. Deeper values parse, but JSON.stringify
 * overflows the stack on them when they reach the next hook's stdin (as an
 * updated input); the HTTP body has the same default bound.
 */
export const MAX_HOOK_JSON_DEPTH = 64;

function tooDeep(v: unknown, depth = 0): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (depth >= MAX_HOOK_JSON_DEPTH) return true;
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (tooDeep(x, depth + 1)) return true;
  return false;
}

function blank(hook: string): HookJudgement {
  return {
    hook,
    permission: undefined,
    updatedInput: undefined,
    additionalContext: undefined,
    blockingError: undefined,
    stop: undefined,
    permissionRequest: undefined,
    retry: undefined,
    deferred: undefined,
    updatedMCPToolOutput: undefined,
    messages: [],
  };
}

export function interpretHookRun(event: HookEvent, toolName: string, run: HookRun): HookJudgement {
  const j = blank(run.hook);
  const msg = (kind: HookMessage['kind'], text: string): void => {
    j.messages.push({ event, hook: run.hook, kind, text, exitCode: run.exitCode, durationMs: Math.round(run.durationMs) });
  };

  if (run.error !== undefined) {
    msg('non_blocking_error', `Hook failed to run: ${run.error}`);
    return j;
  }
  if (run.timedOut) {
    msg('non_blocking_error', `Hook timed out after ${Math.round(run.durationMs)} ms and was killed`);
    return j;
  }
  if (run.exitCode === 2) {
    const stderr = run.stderr.trim();
    const blocking = `[${run.hook}]: ${stderr.length > 0 ? stderr : 'No stderr output'}`;
    msg('blocking_error', blocking);
    if (event === 'PreToolUse') {
      j.permission = { behavior: 'deny', reason: `PreToolUse:${toolName} hook error: ${blocking}` };
    } else if (event === 'PermissionRequest') {
      j.permissionRequest = { behavior: 'deny', message: blocking, hook: run.hook };
    } else if (event !== 'PermissionDenied') {
      // PermissionDenied runs after the refusal: there is nothing left to block.
      j.blockingError = blocking;
    }
    return j;
  }
  if (run.exitCode !== 0) {
    const stderr = run.stderr.trim();
    // Claude Code's text; the exit code is the message's own field.
    msg('non_blocking_error', `Failed with non-blocking status code: ${stderr.length > 0 ? stderr : 'No stderr output'}`);
    return j;
  }

  if (run.invalid !== undefined) {
    msg('non_blocking_error', `JSON validation failed: ${run.invalid}`);
    return j;
  }

  let raw: unknown = run.json;
  if (raw === undefined) {
    const out = run.stdout.trim();
    if (!out.startsWith('{')) return j;
    if (run.truncated) {
      // A cut JSON document cannot parse; say why instead of blaming its syntax.
      msg('non_blocking_error', 'Hook output exceeded the output cap and was cut; its JSON was ignored');
      return j;
    }
    try {
      raw = JSON.parse(out);
    } catch {
      msg('non_blocking_error', 'Hook output looks like JSON but does not parse; ignored');
      return j;
    }
  }
  if (tooDeep(raw)) {
    msg('non_blocking_error', `Hook JSON output is nested deeper than ${MAX_HOOK_JSON_DEPTH} levels; ignored`);
    return j;
  }
  const parsed = HookJson.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    msg(
      'non_blocking_error',
      `Hook JSON output is not valid: ${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}`,
    );
    return j;
  }
  const o = parsed.data;
  if (o.systemMessage) msg('system_message', o.systemMessage);
  if (o.continue === false) {
    j.stop = { reason: o.stopReason };
    msg('stopped', o.stopReason ?? 'A hook asked to stop');
  }
  // Legacy top-level decision.
  if (o.decision === 'block') {
    if (event === 'PreToolUse') j.permission = { behavior: 'deny', reason: o.reason };
    else if (event !== 'PermissionRequest' && event !== 'PermissionDenied') j.blockingError = o.reason || 'Blocked by hook';
  } else if (o.decision === 'approve' && event === 'PreToolUse') {
    j.permission = { behavior: 'allow', reason: o.reason };
  }
  const h = o.hookSpecificOutput;
  if (h) {
    // Claude Code's schema requires hookEventName in every hookSpecificOutput and
    // rejects an output without it: its decision, updatedInput and context do not count.
    if (h.hookEventName !== event) {
      msg(
        'non_blocking_error',
        h.hookEventName === undefined
          ? `hookSpecificOutput has no hookEventName (Claude Code requires "${event}" there); ignored`
          : `hookSpecificOutput.hookEventName is "${h.hookEventName}", expected "${event}"; ignored`,
      );
      return j;
    }
    if (event === 'PreToolUse') {
      if (h.permissionDecision === 'defer') {
        // Claude Code (2.1.89 and later) defers the call only in print mode, for a call alone
        // in its batch: the turn ends with the call unrun, to be resumed. Elsewhere it ignores
        // the decision and the normal permission flow decides; toolexec, which cannot end the
        // agent's turn, always does that (docs/contract-deltas.md). The hook's updatedInput
        // goes with its decision, as there (only an allow's, an ask's or no decision's counts).
        j.deferred = run.hook;
        j.permission = undefined;
      } else {
        if (h.permissionDecision) j.permission = { behavior: h.permissionDecision, reason: h.permissionDecisionReason };
        if (h.updatedInput) j.updatedInput = h.updatedInput;
      }
    }
    if (event === 'PermissionRequest' && h.decision) {
      j.permissionRequest =
        h.decision.behavior === 'allow'
          ? {
              behavior: 'allow',
              hook: run.hook,
              ...(h.decision.updatedInput ? { updatedInput: h.decision.updatedInput } : {}),
              ...(h.decision.updatedPermissions ? { updatedPermissions: h.decision.updatedPermissions } : {}),
            }
          : {
              behavior: 'deny',
              hook: run.hook,
              ...(h.decision.message !== undefined ? { message: h.decision.message } : {}),
              ...(h.decision.interrupt !== undefined ? { interrupt: h.decision.interrupt } : {}),
            };
    }
    if (event === 'PermissionDenied' && h.retry === true) j.retry = run.hook;
    if (event === 'PostToolUse' && h.updatedMCPToolOutput !== undefined) {
      const out = McpToolOutput.safeParse(h.updatedMCPToolOutput);
      if (out.success) j.updatedMCPToolOutput = out.data as string | ContentBlock[];
      else {
        const first = out.error.issues[0];
        msg(
          'non_blocking_error',
          `hookSpecificOutput.updatedMCPToolOutput must be a string or an array of content blocks ({type:"text",text} or {type:"image",source:{type:"base64",media_type,data}}): ${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}; ignored`,
        );
      }
    }
    if (event === 'PostToolUseFailure' && h.updatedMCPToolOutput !== undefined) {
      // Claude Code's PostToolUseFailure takes additionalContext only (Docs: Hooks reference, PostToolUseFailure decision control).
      msg('non_blocking_error', 'hookSpecificOutput.updatedMCPToolOutput applies to PostToolUse only; after a failure the error the model gets is unchanged');
    }
    if (h.additionalContext && !CONTEXT_EVENTS.has(event)) {
      // Claude Code's schema has no additionalContext for these events, and its
      // PermissionDenied caller reads only retry (toolExecution.ts): the model never sees it.
      msg('non_blocking_error', `hookSpecificOutput.additionalContext does not apply to ${event} (Claude Code gives the model none from it); ignored`);
    } else if (h.additionalContext) {
      j.additionalContext = h.additionalContext;
      msg('additional_context', h.additionalContext);
    }
  }
  return j;
}
