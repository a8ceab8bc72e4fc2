/**
 * Building the terminal states of a call and the `is_error` blocks the model
 * receives, in Claude Code's `<tool_use_error>` wrapping.
 */
import type { Decision } from '../permissions/types.js';
import type { AnyTool, ToolInput, ToolResultBlock } from '../tool/types.js';
import type { ErrorClass } from './error-class.js';
import type { Call, FinishedCall } from './types.js';

export function errorBlock(toolUseId: string, text: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content: `<tool_use_error>${text}</tool_use_error>`, is_error: true };
}

export function plainErrorBlock(toolUseId: string, text: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content: text, is_error: true };
}

type Extra = { tool?: AnyTool | undefined; input?: ToolInput | undefined; decision?: Decision | undefined; resultId?: string | null };

/**
 * The terminal state of a call. tool, input and decision carry over from the
 * state it ends in unless `extra` names them. An object literal of every
 * field (see states.ts for why not a spread).
 */
export function finished(
  call: Call,
  status: FinishedCall['status'],
  block: ToolResultBlock,
  errorClass: ErrorClass | null,
  extra?: Extra,
): FinishedCall {
  const prev = call as Partial<{ tool: AnyTool; input: ToolInput; decision: Decision }>;
  return {
    status,
    id: call.id,
    toolUseId: call.toolUseId,
    sessionId: call.sessionId,
    name: call.name,
    rawInput: call.rawInput,
    inputDigest: call.inputDigest,
    createdAt: call.createdAt,
    startedPerf: call.startedPerf,
    actor: call.actor,
    timings: call.timings,
    hookMessages: call.hookMessages,
    tool: extra?.tool ?? prev.tool,
    input: extra?.input ?? prev.input,
    decision: extra?.decision ?? prev.decision,
    block,
    errorClass,
    resultId: extra?.resultId ?? null,
    finishedAt: Date.now(),
    durationMs: performance.now() - call.startedPerf,
  };
}

/** The same terminal state with another block (PostToolUseFailure hooks appended text), decision or hook messages (masked). */
export function refinished(f: FinishedCall, change: { block?: ToolResultBlock; decision?: Decision | undefined; hookMessages?: FinishedCall['hookMessages'] }): FinishedCall {
  return {
    status: f.status,
    id: f.id,
    toolUseId: f.toolUseId,
    sessionId: f.sessionId,
    name: f.name,
    rawInput: f.rawInput,
    inputDigest: f.inputDigest,
    createdAt: f.createdAt,
    startedPerf: f.startedPerf,
    actor: f.actor,
    timings: f.timings,
    hookMessages: change.hookMessages ?? f.hookMessages,
    tool: f.tool,
    input: f.input,
    decision: change.decision ?? f.decision,
    block: change.block ?? f.block,
    errorClass: f.errorClass,
    resultId: f.resultId,
    finishedAt: f.finishedAt,
    durationMs: f.durationMs,
  };
}
