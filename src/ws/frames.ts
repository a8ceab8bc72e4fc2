/**
 * Websocket frames (contract §9), validated at the boundary. Client frames:
 * subscribe / unsubscribe, permission.respond, cancel, ping. Server frames:
 * hello, execution.started / .progress / .finished, permission.request /
 * .resolved, ack, pong, error.
 */
import { z } from 'zod';
import type { FinishedCall, Call } from '../pipeline/types.js';
import type { ProgressEvent } from '../tool/types.js';

const SessionId = z.string().min(1).max(256);

export const ClientFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('subscribe'), session_id: SessionId }),
  z.strictObject({ type: z.literal('unsubscribe'), session_id: SessionId }),
  z.strictObject({
    type: z.literal('permission.respond'),
    request_id: z.string().min(1).max(256),
    decision: z.enum(['allow', 'deny']),
    message: z.string().max(10_000).optional(),
    remember: z.enum(['session', 'always']).optional(),
    rule: z.string().min(1).max(10_000).optional(),
    updated_input: z.record(z.string(), z.unknown()).optional(),
  }),
  z.strictObject({ type: z.literal('cancel'), execution_id: z.string().min(1).max(256) }),
  z.strictObject({ type: z.literal('ping') }),
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

export interface ExecutionFrameBody {
  id: string;
  session_id: string;
  tool_use_id: string;
  tool: string;
  status: string;
}

export function executionBody(call: Call): ExecutionFrameBody {
  return {
    id: call.id,
    session_id: call.sessionId,
    tool_use_id: call.toolUseId,
    tool: 'tool' in call && call.tool ? call.tool.name : call.name,
    status: call.status,
  };
}

export function finishedBody(call: FinishedCall) {
  return {
    ...executionBody(call),
    error_class: call.errorClass,
    is_error: call.block.is_error === true,
    result_id: call.resultId,
    duration_ms: Math.round(call.durationMs * 1000) / 1000,
    decision: call.decision ? { behavior: call.decision.behavior, reason: call.decision.reason } : null,
  };
}

export function progressBody(call: Call, p: ProgressEvent) {
  return { execution_id: call.id, session_id: call.sessionId, tool: executionBody(call).tool, ...p };
}
