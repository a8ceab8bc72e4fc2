/** The ToolContext a call's tool receives. */
import type { Logger } from 'pino';
import type { PermissionQuery } from '../permissions/types.js';
import { SpillingOutputSink } from '../results/output-sink.js';
import type { Session } from '../sessions/session.js';
import type { AnyTool, ToolContext } from '../tool/types.js';
import type { PipelineDeps } from './types.js';

/** The threshold above which this tool's results are persisted (contract §6). */
export function persistThreshold(tool: AnyTool, deps: Pick<PipelineDeps, 'persistThresholdChars'>): number {
  // Infinity (Read) means never: its own line and token limits bound it.
  if (!Number.isFinite(tool.maxResultSizeChars)) return Number.POSITIVE_INFINITY;
  return Math.min(tool.maxResultSizeChars, deps.persistThresholdChars);
}

export function makeContext(
  deps: PipelineDeps,
  session: Session,
  tool: AnyTool,
  ids: { executionId: string; toolUseId: string },
  signal: AbortSignal,
  permissions: PermissionQuery,
  log: Logger,
  userModified = false,
): ToolContext {
  const threshold = persistThreshold(tool, deps);
  return {
    session,
    workspace: deps.workspace,
    toolUseId: ids.toolUseId,
    executionId: ids.executionId,
    signal,
    log,
    userModified,
    createOutput: () =>
      new SpillingOutputSink({
        store: deps.results,
        // A tool that is never persisted (Infinity) still streams through a sink bounded by its own limits.
        thresholdChars: Number.isFinite(threshold) ? threshold : Number.MAX_SAFE_INTEGER,
        previewChars: deps.previewChars,
        sessionId: session.id,
        executionId: ids.executionId,
        tool: tool.name,
      }),
    results: deps.results,
    permissions,
    childEnv: deps.childEnv,
    listTools: () => deps.pool().view(session.mode),
    config: deps.config,
  };
}
