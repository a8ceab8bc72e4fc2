/**
 * Step 6: the call itself, with an AbortSignal and a progress callback. A
 * cancel ends the call at once even if the tool ignores its signal. The
 * output is mapped to a `tool_result` block and sized: a result longer than
 * min(tool.maxResultSizeChars, results.persistThresholdChars) is stored in
 * SQLite and replaced by its preview and a result:// reference.
 */
import { formatPersisted } from '../results/output-sink.js';
import type { CanUseTool, ContentBlock, OnProgress, ToolContext, ToolResultBlock } from '../tool/types.js';
import { classifyError, errorText, type ErrorClass } from './error-class.js';
import { persistThreshold } from './context.js';
import { errorBlock, finished } from './finish.js';
import { maskBlock } from './mask.js';
import { messages } from '../permissions/messages.js';
import type { FinishedCall, PipelineDeps, RunningCall } from './types.js';
import { CANCELLED, type CallAbort } from './cancel.js';

export interface CallSucceeded {
  ok: true;
  block: ToolResultBlock;
  resultId: string | null;
  /** The tool's output, for PostToolUse hooks. */
  data: unknown;
  /** A failure the tool reported in its result (the block has is_error). */
  errorClass: ErrorClass | null;
}
export interface CallFailed {
  ok: false;
  finished: FinishedCall;
  error: string;
  errorClass: ErrorClass;
}

function cancelled(call: RunningCall, abort: CallAbort): CallFailed {
  const text = abort.reason ?? messages.interrupted;
  return {
    ok: false,
    finished: finished(call, 'cancelled', errorBlock(call.toolUseId, text), 'cancelled'),
    error: text,
    errorClass: 'cancelled',
  };
}

export async function callTool(
  call: RunningCall,
  ctx: ToolContext,
  deps: PipelineDeps,
  canUseTool: CanUseTool,
  parentMessage: unknown,
  onProgress: OnProgress,
  abort: CallAbort,
): Promise<CallSucceeded | CallFailed> {
  const { tool } = call;
  if (abort.aborted) return cancelled(call, abort);

  let out: Awaited<ReturnType<typeof tool.call>> | typeof CANCELLED;
  try {
    // A throw before the tool's first await is a failure like a rejection.
    out = await abort.race(tool.call(call.input, ctx, canUseTool, parentMessage, onProgress));
  } catch (e) {
    if (abort.aborted) return cancelled(call, abort);
    const cls = classifyError(e);
    const text = errorText(e);
    return {
      ok: false,
      finished: finished(call, cls === 'cancelled' ? 'cancelled' : 'failed', errorBlock(call.toolUseId, `Error: ${text}`), cls),
      error: text,
      errorClass: cls,
    };
  }
  if (out === CANCELLED || abort.aborted) return cancelled(call, abort);

  let block: ToolResultBlock;
  try {
    block = tool.mapToolResultToToolResultBlockParam(out.data, call.toolUseId);
  } catch (e) {
    const text = `Could not map the tool's result: ${errorText(e)}`;
    return { ok: false, finished: finished(call, 'failed', errorBlock(call.toolUseId, text), 'internal'), error: text, errorClass: 'internal' };
  }
  if (deps.results.mask) block = maskBlock(block, deps.results.mask);
  const sized = sizeBlock(block, call, ctx, deps);
  const errorClass = sized.block.is_error ? (out.errorClass ?? 'tool_error') : null;
  return { ok: true, block: sized.block, resultId: out.resultId ?? sized.resultId, data: out.data, errorClass };
}

function textOf(content: ToolResultBlock['content']): { text: string; others: ContentBlock[] } {
  if (typeof content === 'string') return { text: content, others: [] };
  let text = '';
  const others: ContentBlock[] = [];
  for (const b of content) {
    if (b.type === 'text') text += text.length > 0 ? `\n${b.text}` : b.text;
    else others.push(b);
  }
  return { text, others };
}

/** Empty output gets Claude Code's marker; oversized text is persisted. */
export function sizeBlock(
  block: ToolResultBlock,
  call: Pick<RunningCall, 'id' | 'tool'>,
  ctx: Pick<ToolContext, 'session'>,
  deps: Pick<PipelineDeps, 'results' | 'persistThresholdChars' | 'previewChars'>,
): { block: ToolResultBlock; resultId: string | null } {
  const { text, others } = textOf(block.content);
  if (text.length === 0 && others.length === 0) {
    return { block: { ...block, content: `(${call.tool.name} completed with no output)` }, resultId: null };
  }
  const threshold = persistThreshold(call.tool, deps);
  if (!Number.isFinite(threshold) || text.length <= threshold) return { block, resultId: null };
  const meta = deps.results.put({ sessionId: ctx.session.id, executionId: call.id, tool: call.tool.name }, text);
  const persisted = formatPersisted({
    id: meta.id,
    totalChars: meta.total_chars,
    totalBytes: meta.total_bytes,
    preview: text.slice(0, deps.previewChars),
  });
  const content: ToolResultBlock['content'] =
    others.length === 0 ? persisted : [{ type: 'text', text: persisted }, ...others];
  return { block: { ...block, content }, resultId: meta.id };
}
