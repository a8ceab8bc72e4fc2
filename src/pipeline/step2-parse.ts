/**
 * Step 2: the input's types, with zod's safeParse. A failure ends the call
 * with an `is_error` result listing each issue in words a model can act on;
 * nothing later runs (no hook, no prompt).
 */
import { errorBlock, finished } from './finish.js';
import { formatIssues } from './input-errors.js';
import type { FinishedCall, ValidatingCall } from './types.js';

export function parse(call: ValidatingCall, raw: unknown, inputError?: string): ValidatingCall | FinishedCall {
  const { tool } = call;
  if (inputError !== undefined) {
    return finished(call, 'failed', errorBlock(call.toolUseId, `InputValidationError: ${inputError}`), 'validation');
  }
  const r = tool.inputSchema.safeParse(raw);
  if (!r.success) {
    return finished(
      call,
      'failed',
      errorBlock(call.toolUseId, `InputValidationError: ${formatIssues(tool.name, r.error.issues, raw)}`),
      'validation',
    );
  }
  return { ...call, input: r.data as Record<string, unknown> };
}
