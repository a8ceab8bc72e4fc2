/**
 * Step 4: the PreToolUse hooks registered for the tool. Their aggregated
 * permission opinion goes to step 5; an `updatedInput` replaces the input and
 * is parsed and validated again, so that step 5 judges what will really run.
 * `continue: false` stops the call as a hook denial (a deliberate difference:
 * Claude Code runs it and ends the turn; docs/contract-deltas.md).
 */
import { additionalContextText, hookPayload, observableInput } from '../hooks/types.js';
import type { HookPermission } from '../permissions/engine.js';
import type { Session } from '../sessions/session.js';
import type { ToolContext, ToolInput } from '../tool/types.js';
import { parse } from './step2-parse.js';
import { validate } from './step3-validate.js';
import { validatingCall } from './states.js';
import type { FinishedCall, PipelineDeps, ValidatingCall } from './types.js';

type Parsed = ValidatingCall & { input: ToolInput };

export interface PreHookResult {
  call: Parsed | FinishedCall;
  permission: HookPermission | undefined;
  /** The hooks' additionalContext, each as the model reads it (additionalContextText). */
  additionalContext: readonly string[];
}

export const NO_CONTEXT: readonly string[] = Object.freeze([]);

/** Whether step 4 has anything to run for this tool (the pipeline skips the step, and its promise, when not). */
export function hasPreHooks(deps: PipelineDeps, toolName: string): boolean {
  return deps.hooks.matches('PreToolUse', toolName);
}

export async function preHooks(
  call: Parsed,
  ctx: ToolContext,
  deps: PipelineDeps,
  session: Session,
  signal: AbortSignal,
): Promise<PreHookResult> {
  if (!hasPreHooks(deps, call.tool.name)) return { call, permission: undefined, additionalContext: NO_CONTEXT };
  const outcome = await deps.hooks.run(
    'PreToolUse',
    hookPayload('PreToolUse', session, call.tool.name, observableInput(call.tool, call.input, ctx.workspace, session.cwd), call.toolUseId),
    signal,
  );
  for (const m of outcome.messages) call.hookMessages.push(m);
  const context = outcome.additionalContext.length === 0 ? NO_CONTEXT : outcome.additionalContext.map((c) => additionalContextText('PreToolUse', call.tool.name, c));
  let permission = outcome.permission;
  if (outcome.stop) {
    // Claude Code's words for a call a stopping hook left unrun (toolExecution.ts).
    const why = outcome.stop.reason;
    permission = { behavior: 'deny', reason: `Execution stopped by PreToolUse hook${why ? `: ${why}` : ''}`, source: 'continue:false' };
  }
  if (outcome.updatedInput && permission?.behavior !== 'deny') {
    const reparsed = parse(validatingCall(call, call.tool, undefined), outcome.updatedInput);
    if (reparsed.status !== 'validating') return { call: reparsed, permission, additionalContext: context };
    const revalidated = await validate(reparsed as Parsed, ctx);
    return { call: revalidated, permission, additionalContext: context };
  }
  return { call, permission, additionalContext: context };
}
