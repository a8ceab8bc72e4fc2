/**
 * Step 2: the input's types, with zod's safeParse. A failure ends the call
 * with an `is_error` result listing each issue in words a model can act on;
 * nothing later runs (no hook, no prompt). Orchestration may have parsed the
 * input already to judge concurrency (orchestration/run-batch.ts): its
 * result, for the same tool, is used rather than parsing twice.
 */
import { isDeferred } from '../pool/pool.js';
import { errorBlock, finished } from './finish.js';
import { formatIssues } from './input-errors.js';
import { validatingCall } from './states.js';
import type { FinishedCall, PreParsed, ValidatingCall } from './types.js';

export function parse(call: ValidatingCall, raw: unknown, inputError?: string, pre?: PreParsed): ValidatingCall | FinishedCall {
  const { tool } = call;
  if (inputError !== undefined) {
    return finished(call, 'failed', errorBlock(call.toolUseId, `InputValidationError: ${inputError}`), 'validation');
  }
  if (pre !== undefined && pre.tool === tool && pre.raw === raw) return validatingCall(call, tool, pre.data);
  const r = tool.inputSchema.safeParse(raw);
  if (!r.success) {
    // As Claude Code does for a deferred tool whose schema the model may never have been given: the
    // model's own input only (not one a hook or an approver put in its place).
    const hint = isDeferred(tool) && raw === call.rawInput ? `\n${deferredHint(tool.name)}` : '';
    return finished(
      call,
      'failed',
      errorBlock(call.toolUseId, `InputValidationError: ${formatIssues(tool.name, r.error.issues, raw)}${hint}`),
      'validation',
    );
  }
  return validatingCall(call, tool, r.data as Record<string, unknown>);
}

/** What a model that called a deferred tool with the wrong parameters is told to do. */
export function deferredHint(name: string): string {
  return `${name} is a deferred tool: if its definition has not been loaded, call ToolSearch with query "select:${name}" first, then retry this call with the parameters it defines.`;
}
