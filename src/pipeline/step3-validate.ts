/** Step 3: the tool's own business checks (file exists, read before, …). */
import type { ToolContext, ToolInput } from '../tool/types.js';
import { classifyError, errorText } from './error-class.js';
import { errorBlock, finished } from './finish.js';
import type { FinishedCall, ValidatingCall } from './types.js';

export async function validate(
  call: ValidatingCall & { input: ToolInput },
  ctx: ToolContext,
): Promise<(ValidatingCall & { input: ToolInput }) | FinishedCall> {
  let r;
  try {
    r = await call.tool.validateInput(call.input, ctx);
  } catch (e) {
    const cls = classifyError(e);
    return finished(call, 'failed', errorBlock(call.toolUseId, errorText(e)), cls === 'tool_error' ? 'validation' : cls);
  }
  if (r.ok) return call;
  return finished(call, 'failed', errorBlock(call.toolUseId, r.message), 'validation');
}
