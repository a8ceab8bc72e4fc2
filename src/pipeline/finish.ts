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

export function finished(
  call: Call,
  status: FinishedCall['status'],
  block: ToolResultBlock,
  errorClass: ErrorClass | null,
  extra: { tool?: AnyTool | undefined; input?: ToolInput | undefined; decision?: Decision | undefined; resultId?: string | null } = {},
): FinishedCall {
  const now = Date.now();
  const prev = call as Partial<{ tool: AnyTool; input: ToolInput; decision: Decision }>;
  return {
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
    status,
    tool: extra.tool ?? prev.tool,
    input: extra.input ?? prev.input,
    decision: extra.decision ?? prev.decision,
    block,
    errorClass,
    resultId: extra.resultId ?? null,
    finishedAt: now,
    durationMs: performance.now() - call.startedPerf,
  };
}
