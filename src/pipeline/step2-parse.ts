/**
 * Step 2: the input's types, with zod's safeParse. A failure ends the call
 * with an `is_error` result listing each issue in words a model can act on;
 * nothing later runs (no hook, no prompt). Orchestration may have parsed the
 * input already to judge concurrency (orchestration/run-batch.ts): its
 * result, for the same tool, is used rather than parsing twice.
 */
import { errorBlock, finished } from './finish.js';
import { formatIssues } from './input-errors.js';
import { validatingCall } from './states.js';
import type { FinishedCall, PreParsed, ValidatingCall } from './types.js';

/**
 * Claude Code's hint after a deferred tool's input fails its schema
 * (toolExecution.ts buildSchemaNotSentHint): the model most likely called it
 * without loading its schema, and wrote typed parameters as strings. toolexec
 * keeps no message history to tell whether it was loaded, so the hint is
 * given whenever ToolSearch is there to load it (Claude Code accepts the same
 * occasional misfire: one extra round trip on a call that failed anyway).
 */
function schemaNotSentHint(toolName: string): string {
  return (
    `\n\nThis tool is deferred: its schema is not in the tool list the model gets until it is loaded. ` +
    `Without the schema in your prompt, typed parameters (arrays, numbers, booleans) get emitted as strings and the parser rejects them. ` +
    `Load the tool first: call ToolSearch with query "select:${toolName}", then retry this call.`
  );
}

export function parse(call: ValidatingCall, raw: unknown, inputError?: string, pre?: PreParsed, deferredHint = false): ValidatingCall | FinishedCall {
  const { tool } = call;
  if (inputError !== undefined) {
    return finished(call, 'failed', errorBlock(call.toolUseId, `InputValidationError: ${inputError}`), 'validation');
  }
  if (pre !== undefined && pre.tool === tool && pre.raw === raw) return validatingCall(call, tool, pre.data);
  const r = tool.inputSchema.safeParse(raw);
  if (!r.success) {
    return finished(
      call,
      'failed',
      errorBlock(call.toolUseId, `InputValidationError: ${formatIssues(tool.name, r.error.issues, raw)}${deferredHint ? schemaNotSentHint(tool.name) : ''}`),
      'validation',
    );
  }
  return validatingCall(call, tool, r.data as Record<string, unknown>);
}
