/**
 * The ToolContext a call's tool receives. A class rather than a literal of
 * closures: its methods live on the prototype, and the parts most calls never
 * touch (the AbortSignal, the permission query) are made on first read.
 */
import type { Logger } from 'pino';
import type { PermissionMode } from '../config/schema.js';
import { carryJudgement } from '../permissions/filesystem.js';
import { SessionPermissionQuery } from '../permissions/query.js';
import type { RuleIndex } from '../permissions/rule-index.js';
import type { PermissionQuery } from '../permissions/types.js';
import { SpillingOutputSink } from '../results/output-sink.js';
import type { Session } from '../sessions/session.js';
import type { AnyTool, ToolContext } from '../tool/types.js';
import type { CallAbort } from './cancel.js';
import type { PipelineDeps } from './types.js';

/** The threshold above which this tool's results are persisted (contract §6). */
export function persistThreshold(tool: AnyTool, deps: Pick<PipelineDeps, 'persistThresholdChars'>): number {
  // Infinity (Read) means never: its own line and token limits bound it.
  if (!Number.isFinite(tool.maxResultSizeChars)) return Number.POSITIVE_INFINITY;
  return Math.min(tool.maxResultSizeChars, deps.persistThresholdChars);
}

export class CallContext implements ToolContext {
  private query: PermissionQuery | undefined = undefined;

  constructor(
    private readonly deps: PipelineDeps,
    readonly session: Session,
    private readonly tool: AnyTool,
    readonly executionId: string,
    readonly toolUseId: string,
    private readonly abort: CallAbort,
    private readonly rules: RuleIndex,
    /** The mode when the call started: a mode change mid-call does not change what it was judged under. */
    private readonly mode: PermissionMode,
    readonly log: Logger,
    readonly userModified = false,
  ) {}

  get workspace(): PipelineDeps['workspace'] {
    return this.deps.workspace;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get results(): PipelineDeps['results'] {
    return this.deps.results;
  }

  get permissions(): PermissionQuery {
    return (this.query ??= new SessionPermissionQuery(this.rules, this.mode, this.deps.workspace));
  }

  get childEnv(): NodeJS.ProcessEnv {
    return this.deps.childEnv;
  }

  get config(): PipelineDeps['config'] {
    return this.deps.config;
  }

  get tasks(): PipelineDeps['tasks'] {
    return this.deps.tasks;
  }

  createOutput(): SpillingOutputSink {
    const threshold = persistThreshold(this.tool, this.deps);
    return new SpillingOutputSink({
      store: this.deps.results,
      // A tool that is never persisted (Infinity) still streams through a sink bounded by its own limits.
      thresholdChars: Number.isFinite(threshold) ? threshold : Number.MAX_SAFE_INTEGER,
      previewChars: this.deps.previewChars,
      sessionId: this.session.id,
      executionId: this.executionId,
      tool: this.tool.name,
    });
  }

  listTools(): readonly AnyTool[] {
    return this.deps.pool().view(this.session.mode);
  }

  /** The same call's context for an input an approver or a hook edited. */
  modified(): CallContext {
    const c = new CallContext(this.deps, this.session, this.tool, this.executionId, this.toolUseId, this.abort, this.rules, this.mode, this.log, true);
    c.query = this.query;
    // What step 5 judged the edited input as, for the file tools' recheck when they open or write it.
    carryJudgement(this, c);
    return c;
  }
}

/** A context outside a pipeline run (the dry-run check), with a signal and a permission query of its own. */
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
    tasks: deps.tasks,
  };
}
