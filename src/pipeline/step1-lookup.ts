/** Step 1: find the tool by exact name, alias, or MCP namespace. */
import type { ToolPool } from '../pool/pool.js';
import { errorBlock, finished } from './finish.js';
import { validatingCall } from './states.js';
import type { FinishedCall, QueuedCall, ValidatingCall } from './types.js';

export function lookup(call: QueuedCall, pool: ToolPool): ValidatingCall | FinishedCall {
  const tool = pool.lookup(call.name);
  if (!tool) {
    return finished(call, 'failed', errorBlock(call.toolUseId, `Error: No such tool available: ${call.name}`), 'not_found');
  }
  return validatingCall(call, tool, undefined);
}
