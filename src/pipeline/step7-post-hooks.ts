/**
 * Step 7: PostToolUse hooks (or PostToolUseFailure after a failure) receive
 * the tool's name, input and result. The tool already ran: exit 2 or
 * decision "block" only sends its text to the model beside the result, and
 * additionalContext is appended.
 */
import { hookPayload } from '../hooks/types.js';
import type { Session } from '../sessions/session.js';
import type { ToolInput, ToolResultBlock } from '../tool/types.js';
import type { Call, PipelineDeps } from './types.js';

export interface PostHookInput {
  call: Call & { tool: NonNullable<unknown> };
  toolName: string;
  input: ToolInput;
  block: ToolResultBlock;
  /** The tool's output (PostToolUse) or the error text (PostToolUseFailure). */
  response: unknown;
  failed: boolean;
  interrupted: boolean;
}

/** Appends text to a result block, whatever the shape of its content. */
export function appendText(block: ToolResultBlock, text: string): ToolResultBlock {
  if (typeof block.content === 'string') return { ...block, content: `${block.content}\n\n${text}` };
  return { ...block, content: [...block.content, { type: 'text', text }] };
}

/** Whether step 7 has anything to run (the pipeline skips the step, and its promise, when not). */
export function hasPostHooks(deps: PipelineDeps, failed: boolean, toolName: string): boolean {
  return deps.hooks.matches(failed ? 'PostToolUseFailure' : 'PostToolUse', toolName);
}

export async function postHooks(
  p: PostHookInput,
  deps: PipelineDeps,
  session: Session,
  signal: AbortSignal,
): Promise<ToolResultBlock> {
  const event = p.failed ? 'PostToolUseFailure' : 'PostToolUse';
  if (!deps.hooks.matches(event, p.toolName)) return p.block;
  const outcome = await deps.hooks.run(
    event,
    {
      ...hookPayload(event, session, p.toolName, p.input, p.call.toolUseId),
      ...(p.failed ? { error: String(p.response), is_interrupt: p.interrupted } : { tool_response: p.response }),
    },
    signal,
  );
  for (const m of outcome.messages) p.call.hookMessages.push(m);
  let block = p.block;
  for (const e of outcome.blockingErrors) block = appendText(block, `${event}:${p.toolName} hook error: ${e}`);
  for (const c of outcome.additionalContext) block = appendText(block, c);
  if (outcome.stop) block = appendText(block, `A ${event} hook asked to stop: ${outcome.stop.reason}`);
  return block;
}
