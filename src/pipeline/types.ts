/**
 * A call through the pipeline, as a discriminated union on `status`
 * (queued → validating → awaiting_permission → running → succeeded | failed |
 * denied | cancelled), and what the pipeline needs from the rest of the
 * service. Each step takes the call in one state and returns the next.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { HookMessage, HookRunner } from '../hooks/types.js';
import type { Approvals } from '../permissions/approvals.js';
import type { Classifier } from '../permissions/classifier.js';
import type { RuleIndex } from '../permissions/rule-index.js';
import type { RememberInput } from '../permissions/rule-store.js';
import type { Decision } from '../permissions/types.js';
import type { ToolPool } from '../pool/pool.js';
import type { ResultStore } from '../results/store.js';
import type { Session } from '../sessions/session.js';
import type { BackgroundTasks } from '../tasks/background.js';
import type { AuditLog } from '../storage/audit.js';
import type { ExecutionLog } from '../storage/executions.js';
import type { AnyTool, ProgressEvent, ToolInput, ToolResultBlock } from '../tool/types.js';
import type { Workspace } from '../workspace.js';
import type { ErrorClass } from './error-class.js';

export type StepName = 'lookup' | 'parse' | 'validate' | 'pre_hooks' | 'permission' | 'call' | 'post_hooks';
export type Timings = Partial<Record<StepName, number>>;

export type ExecutionStatus =
  | 'queued'
  | 'validating'
  | 'awaiting_permission'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'denied'
  | 'cancelled';

export const TERMINAL_STATUSES: ReadonlySet<ExecutionStatus> = new Set(['succeeded', 'failed', 'denied', 'cancelled']);

/** What a caller asks the pipeline to run. */
export interface ToolUse {
  id: string;
  name: string;
  input: unknown;
  /** The shape it came in, so the answer can be given back in it (`openai-responses`: a Responses API function_call item). */
  format: 'anthropic' | 'openai' | 'openai-responses';
  /** Set when the input could not even be read (OpenAI arguments that are not JSON). */
  inputError?: string | undefined;
}

/** A successful parse of a tool use's input done ahead of step 2 (orchestration). */
export interface PreParsed {
  readonly tool: AnyTool;
  /** The input parsed, identical (===) to the use's. */
  readonly raw: unknown;
  readonly data: ToolInput;
}

interface CallBase {
  readonly id: string;
  readonly toolUseId: string;
  readonly sessionId: string;
  /** The name as requested. */
  readonly name: string;
  readonly rawInput: unknown;
  readonly inputDigest: string;
  readonly createdAt: number;
  /** performance.now() at creation, for durations. */
  readonly startedPerf: number;
  /** The token that submitted the call. */
  readonly actor: string | null;
  /** ms per step; filled as steps run. */
  readonly timings: Timings;
  readonly hookMessages: HookMessage[];
}

export type QueuedCall = CallBase & { status: 'queued' };
export type ValidatingCall = CallBase & { status: 'validating'; tool: AnyTool; input: ToolInput | undefined };
export type AwaitingPermissionCall = CallBase & {
  status: 'awaiting_permission';
  tool: AnyTool;
  input: ToolInput;
  requestId: string | undefined;
};
export type RunningCall = CallBase & { status: 'running'; tool: AnyTool; input: ToolInput; decision: Decision };
export type FinishedCall = CallBase & {
  status: 'succeeded' | 'failed' | 'denied' | 'cancelled';
  tool: AnyTool | undefined;
  input: ToolInput | undefined;
  decision: Decision | undefined;
  block: ToolResultBlock;
  errorClass: ErrorClass | null;
  resultId: string | null;
  finishedAt: number;
  durationMs: number;
};

export type Call = QueuedCall | ValidatingCall | AwaitingPermissionCall | RunningCall | FinishedCall;

/** Everything the pipeline uses; built once by the app. */
export interface PipelineDeps {
  pool(): ToolPool;
  rulesFor(session: Session): RuleIndex;
  hooks: HookRunner;
  approvals: Approvals;
  classifier: Classifier | undefined;
  executions: ExecutionLog;
  audit: AuditLog;
  results: ResultStore;
  workspace: Workspace;
  childEnv: NodeJS.ProcessEnv;
  persistThresholdChars: number;
  previewChars: number;
  log: Logger;
  observer: CallObserver;
  config: Config;
  /** Remembers a rule (a PermissionRequest hook's updatedPermissions); absent: such updates are ignored with a message. */
  rememberRule?: ((r: RememberInput) => unknown) | undefined;
  /** Background Bash tasks; absent when bash.background is switched off. */
  tasks?: BackgroundTasks | undefined;
}

/** Live state for dashboards and the websocket. */
export interface CallObserver {
  onState(call: Call): void;
  onProgress(call: Call, event: ProgressEvent): void;
}

export const NOOP_OBSERVER: CallObserver = { onState: () => {}, onProgress: () => {} };
