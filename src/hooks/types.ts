/**
 * The hook-runner interface the pipeline's steps 4 and 7 use, and the shapes
 * of Claude Code's hook protocol (stdin JSON, outcomes).
 */
import type { HookEvent, PermissionMode } from '../config/schema.js';
import type { HookPermission } from '../permissions/engine.js';
import type { AnyTool, ContentBlock, ToolInput } from '../tool/types.js';
import type { Workspace } from '../workspace.js';

/** The JSON a hook receives on stdin (or as the HTTP body). */
export interface HookPayload {
  session_id: string;
  transcript_path: string;
  cwd: string;
  permission_mode: PermissionMode;
  hook_event_name: HookEvent;
  tool_name: string;
  tool_input: ToolInput;
  tool_use_id?: string;
  tool_response?: unknown;
  error?: string;
  is_interrupt?: boolean;
  permission_suggestions?: unknown[];
  /** PermissionDenied: why the call was refused. */
  reason?: string;
}

/**
 * The input hooks see: the tool's backfillObservableInput copy (file paths
 * absolute, from the session's directory), or the input itself.
 */
export function observableInput(tool: AnyTool, input: ToolInput, workspace: Pick<Workspace, 'resolve'>, cwd: string): ToolInput {
  if (!tool.backfillObservableInput) return input;
  try {
    return tool.backfillObservableInput(input, (p) => workspace.resolve(p, cwd));
  } catch {
    return input;
  }
}

/** The fields every tool event's payload carries (the session's, the event's and the tool's). */
export function hookPayload(
  event: HookEvent,
  session: { id: string; cwd: string; mode: PermissionMode },
  toolName: string,
  input: ToolInput,
  toolUseId: string | undefined,
): HookPayload {
  const p: HookPayload = {
    session_id: session.id,
    transcript_path: '',
    cwd: session.cwd,
    permission_mode: session.mode,
    hook_event_name: event,
    tool_name: toolName,
    tool_input: input,
  };
  if (toolUseId !== undefined) p.tool_use_id = toolUseId;
  return p;
}

/** Claude Code's wrapInSystemReminder (utils/messages.ts): how hook text it adds for the model is framed. */
export function systemReminder(text: string): string {
  return `<system-reminder>\n${text}\n</system-reminder>`;
}

/**
 * One hook's additionalContext as Claude Code gives it to the model: its
 * hook_additional_context attachment, named `<Event>:<Tool>`, rendered by
 * messages.ts in a system reminder (one per hook, in the order they finish).
 */
export function additionalContextText(event: HookEvent, toolName: string, context: string): string {
  return systemReminder(`${event}:${toolName} hook additional context: ${context}`);
}

export type HookMessageKind =
  | 'non_blocking_error'
  | 'blocking_error'
  | 'system_message'
  | 'additional_context'
  | 'stopped';

/** Something a hook said that a person (or the model) should see. */
export interface HookMessage {
  event: HookEvent;
  hook: string;
  kind: HookMessageKind;
  text: string;
  exitCode?: number | null;
  durationMs?: number;
}

/** The decision of a PermissionRequest hook. */
export type PermissionRequestDecision =
  | { behavior: 'allow'; updatedInput?: ToolInput; updatedPermissions?: unknown[]; hook: string }
  | { behavior: 'deny'; message?: string; interrupt?: boolean; hook: string };

/** All matching hooks of one event, aggregated (deny > ask > allow). */
export interface HookOutcome {
  /** PreToolUse: the aggregated permission opinion. */
  permission: HookPermission | undefined;
  /** PreToolUse: a replacement input (the last hook that gave one wins). */
  updatedInput: ToolInput | undefined;
  /** Text appended to what the model receives. */
  additionalContext: string[];
  /** PostToolUse exit 2 / decision "block": text the model receives beside the result. */
  blockingErrors: Array<{ hook: string; text: string }>;
  /** continue:false: stop, with the hook's stopReason when it gave one. */
  stop: { reason: string | undefined } | undefined;
  /** PermissionRequest: the first deny, else the first allow. */
  permissionRequest: PermissionRequestDecision | undefined;
  /** PermissionDenied: a hook said the model may try the call again (`retry: true`). */
  retry: string | undefined;
  /** PostToolUse: the output an MCP tool's result is replaced with (the last hook that gave one wins), and that hook. */
  updatedMCPToolOutput: { output: string | ContentBlock[]; hook: string } | undefined;
  messages: HookMessage[];
  /** How many hooks ran. */
  ran: number;
}

export interface HookRunner {
  /** Whether any hook is registered for this event and tool (precomputed, cheap). */
  matches(event: HookEvent, toolName: string): boolean;
  run(event: HookEvent, payload: HookPayload, signal: AbortSignal): Promise<HookOutcome>;
  /** Stops the hooks still running in the background (shutdown). */
  close?(): void;
}

export function emptyOutcome(): HookOutcome {
  return {
    permission: undefined,
    updatedInput: undefined,
    additionalContext: [],
    blockingErrors: [],
    stop: undefined,
    permissionRequest: undefined,
    retry: undefined,
    updatedMCPToolOutput: undefined,
    messages: [],
    ran: 0,
  };
}
