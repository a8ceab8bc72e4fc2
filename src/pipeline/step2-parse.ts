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

export function parse(call: ValidatingCall, raw: unknown, inputError?: string, pre?: PreParsed): ValidatingCall | FinishedCall {
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
      errorBlock(call.toolUseId, `InputValidationError: ${formatIssues(tool.name, r.error.issues, raw)}`),
      'validation',
    );
  }
  return validatingCall(call, tool, r.data as Record<string, unknown>);
}
