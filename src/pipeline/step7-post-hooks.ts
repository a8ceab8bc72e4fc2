/**
 * Step 7: PostToolUse hooks (or PostToolUseFailure after a failure) receive
 * the tool's name, input and result. The tool already ran: exit 2 or
 * decision "block" only sends its text to the model beside the result, and
 * additionalContext is appended, framed as Claude Code frames it. For an MCP
 * tool, a PostToolUse hook's `updatedMCPToolOutput` replaces the output the model receives (sized as
 * the tool's own output is; the original's stored copy is dropped); for
 * other tools it is ignored with a message, as in Claude Code.
 */
import { additionalContextText, hookPayload, observableInput, systemReminder, type HookMessage } from '../hooks/types.js';
import type { Session } from '../sessions/session.js';
import type { AnyTool, ToolInput, ToolResultBlock } from '../tool/types.js';
import { sizeBlock } from './step6-call.js';
import type { Call, PipelineDeps } from './types.js';

export interface PostHookResult {
  block: ToolResultBlock;
  /** Set when a hook replaced the output: the stored result of the replacement, if it was stored. */
  replacedResultId?: string | null;
}

export interface PostHookInput {
  call: Call & { tool: AnyTool };
  /** The result the tool's output was stored as, when it was. */
  resultId?: string | null;
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
): Promise<PostHookResult> {
  const event = p.failed ? 'PostToolUseFailure' : 'PostToolUse';
  if (!deps.hooks.matches(event, p.toolName)) return { block: p.block };
  const outcome = await deps.hooks.run(
    event,
    {
      ...hookPayload(event, session, p.toolName, observableInput(p.call.tool, p.input, deps.workspace, session.cwd), p.call.toolUseId),
      ...(p.failed ? { error: String(p.response), is_interrupt: p.interrupted } : { tool_response: p.response }),
    },
    signal,
  );
  for (const m of outcome.messages) p.call.hookMessages.push(m);
  let block = p.block;
  let replacedResultId: string | null | undefined;
  const updated = outcome.updatedMCPToolOutput;
  if (updated !== undefined && p.call.tool.mcpInfo === undefined) {
    const note: HookMessage = {
      event,
      hook: updated.hook,
      kind: 'non_blocking_error',
      text: `hookSpecificOutput.updatedMCPToolOutput applies to MCP tools only; ${p.toolName} is not one, so its output is unchanged`,
    };
    p.call.hookMessages.push(note);
  } else if (updated !== undefined) {
    // Sized as the tool's own output is (an empty one gets the marker, a long one is stored).
    const sized = sizeBlock({ ...block, content: updated.output }, { id: p.call.id, tool: p.call.tool }, { session }, deps);
    block = sized.block;
    replacedResultId = sized.resultId;
    // What the hook took out (a secret, personal data) must not stay readable through result://.
    if (p.resultId) deps.results.delete(p.resultId);
  }
  // Claude Code's hook_blocking_error, as its messages.ts words (and frames) it for the model.
  for (const e of outcome.blockingErrors) block = appendText(block, systemReminder(`${event}:${p.toolName} hook blocking error from command: "${e.hook}": ${e.text}`));
  for (const c of outcome.additionalContext) block = appendText(block, additionalContextText(event, p.toolName, c));
  // Claude Code's hook_stopped_continuation, as its messages.ts words (and frames) it for the model.
  if (outcome.stop) block = appendText(block, systemReminder(`${event}:${p.toolName} hook stopped continuation: ${outcome.stop.reason || `Execution stopped by ${event} hook`}`));
  return replacedResultId === undefined ? { block } : { block, replacedResultId };
}
