/**
 * Step 5: the permission decision in five layers. Rules, mode and hooks are
 * the engine's (permissions/engine.ts); what is still `ask` then goes to the
 * classifier (mode auto), to PermissionRequest hooks, and to a person
 * (approvals), or is denied as headless or on timeout. The final decision is
 * audited with its reason type and detail before anything runs.
 */
import { hookPayload, observableInput, type HookOutcome, type HookPayload } from '../hooks/types.js';
import { decide, type HookPermission } from '../permissions/engine.js';
import { suggestRule } from '../permissions/approval-broker.js';
import { applyPermissionUpdates, suggestionsOf } from '../permissions/permission-updates.js';
import { messages } from '../permissions/messages.js';
import type { RuleIndex } from '../permissions/rule-index.js';
import type { Decision } from '../permissions/types.js';
import type { Session } from '../sessions/session.js';
import type { ToolContext, ToolInput } from '../tool/types.js';
import type { CallAbort } from './cancel.js';
import { errorText } from './error-class.js';
import { errorBlock, finished, plainErrorBlock, refinished } from './finish.js';
import { maskDecision } from './mask.js';
import { awaitingPermissionCall, runningCall, validatingCall } from './states.js';
import { digestInput, safeStringify } from './digest.js';
import { parse } from './step2-parse.js';
import { validate } from './step3-validate.js';
import type { AwaitingPermissionCall, FinishedCall, PipelineDeps, RunningCall, ValidatingCall } from './types.js';
import { sliceWhole } from '../util/text.js';

/** What the audit says of an ask denied with nobody to answer it: where a person answers, and how asks can wait for one. */
const HEADLESS_DETAIL = 'no approver subscribed (open /console or subscribe over /ws; or set permissions.headless: "wait" and answer with toolexec approve)';

type Parsed = ValidatingCall & { input: ToolInput };

/** Claude Code's DENIAL_LIMITS: after these, auto mode asks a person instead. */
export const CLASSIFIER_DENIAL_LIMITS = { maxConsecutive: 3, maxTotal: 20 } as const;

export async function permission(
  call: Parsed,
  ctx: ToolContext,
  session: Session,
  rules: RuleIndex,
  hook: HookPermission | undefined,
  deps: PipelineDeps,
  abort: CallAbort,
  onAwaiting: (c: AwaitingPermissionCall) => void,
  received: ToolInput = call.input,
): Promise<RunningCall | FinishedCall> {
  const { tool } = call;
  let input = call.input;
  // The digest names the input as received; once a hook or an approver has
  // rewritten it, the prompt and the audit name what is judged and run instead.
  const digestOf = (x: ToolInput): string => (x === received ? call.inputDigest : digestInput(safeStringify(x)));
  // The mode the decision is taken in: the session's may change while the call waits for the classifier, a
  // PermissionRequest hook or a person (PATCH /sessions/:id).
  let decidedIn = session.mode;
  let d: Decision = await decide({ tool, input, ctx, mode: decidedIn, rules, hook });

  if (d.behavior === 'ask' && session.mode === 'auto') {
    d = await classifierLayer(d, call, session, deps, abort.signal);
    if (d.behavior === 'deny' && deps.hooks.matches('PermissionDenied', tool.name)) d = await permissionDeniedHooks(d, call, session, deps, abort.signal);
  }
  if (d.behavior === 'ask' && deps.hooks.matches('PermissionRequest', tool.name)) {
    d = await permissionRequestHooks(d, call, session, deps, abort.signal, () => {
      // A hook that allows the call and sets the session's mode decides in that mode.
      decidedIn = session.mode;
    });
    if (d.updatedInput) input = d.updatedInput;
  }
  if (d.behavior === 'ask') {
    onAwaiting(awaitingPermissionCall(call, tool, call.input, undefined));
    const outcome = await deps.approvals.request({
      executionId: call.id,
      sessionId: call.sessionId,
      toolUseId: call.toolUseId,
      tool,
      input,
      inputDigest: digestOf(input),
      summary: safeSummary(tool, input),
      decision: d,
      signal: abort.signal,
    });
    // A call cancelled while it waited was not decided: nothing to audit.
    if (abort.aborted) return finished(call, 'cancelled', errorBlock(call.toolUseId, abort.reason ?? messages.cancelled), 'cancelled');
    const chain = d.chain;
    const edited = outcome.behavior === 'allow' && outcome.updatedInput ? ` ${updatedNote(outcome.updatedInput)}` : '';
    chain.push({ layer: 'user', outcome: outcome.behavior, detail: `${outcome.actor ?? outcome.reason}${edited}` });
    if (outcome.behavior === 'allow') {
      d = { behavior: 'allow', reason: { type: 'user', detail: outcome.actor }, message: undefined, chain, actor: outcome.actor };
      if (outcome.updatedInput) {
        d.updatedInput = outcome.updatedInput;
        input = outcome.updatedInput;
      }
    } else {
      const message =
        outcome.reason === 'headless'
          ? messages.headless(tool.name)
          : outcome.reason === 'timeout'
            ? messages.timeout(tool.name)
            : outcome.message
              ? `${messages.userRejected}\nThe user said: ${outcome.message}`
              : messages.userRejected;
      d = {
        behavior: 'deny',
        reason: { type: outcome.reason, detail: outcome.actor ?? (outcome.reason === 'headless' ? HEADLESS_DETAIL : outcome.reason) },
        message,
        chain,
        actor: outcome.actor,
      };
    }
  } else if (d.updatedInput) {
    input = d.updatedInput;
  }

  // An approver's or PermissionRequest hook's input runs only if it is still
  // valid, and never past a deny: the rule, tool and safety layers judge it
  // again (the person's allow answers the asks; it cannot lift a deny).
  let checked: Parsed | FinishedCall | undefined;
  if (d.behavior === 'allow' && input === call.input && session.mode === 'plan' && decidedIn !== 'plan') {
    // Switched to plan mode while the call waited for its answer (the classifier's, a hook's or a person's):
    // plan mode's gate holds whatever the answer (as it does for an updated input, judged below in the
    // session's mode).
    const again = await decide({ tool, input, ctx, mode: session.mode, rules, hook: undefined });
    if (again.behavior === 'deny') {
      d = {
        ...again,
        chain: [...d.chain, { layer: 'mode', outcome: 'deny', detail: `the session was switched to plan mode while the call waited: ${again.reason.type}: ${again.reason.detail}` }],
      };
    }
  } else if (d.behavior === 'allow' && input !== call.input) {
    const reparsed = parse(validatingCall(call, tool, undefined), input);
    checked = reparsed.status !== 'validating' ? reparsed : await validate(reparsed as Parsed, ctx);
    if (checked.status === 'validating') {
      input = checked.input;
      const again = await decide({ tool, input, ctx, mode: session.mode, rules, hook: undefined });
      // dontAsk's deny stands for an ask nobody answers: this one was answered (as an unedited allow is,
      // after a switch to dontAsk while the call waited).
      const answeredAsk = again.reason.type === 'mode' && again.reason.detail === 'dontAsk';
      if (again.behavior === 'deny' && !answeredAsk) {
        d = {
          ...again,
          chain: [...d.chain, { layer: 'rules', outcome: 'deny', detail: `the updated input, judged again: ${again.reason.type}: ${again.reason.detail}` }],
        };
      }
    }
  }

  // Its reasons may quote the input or a hook's words: audited, recorded and shown masked (pipeline/mask.ts).
  if (deps.results.mask) d = maskDecision(d, deps.results.mask);
  deps.audit.record({
    ts: Date.now(),
    sessionId: call.sessionId,
    toolUseId: call.toolUseId,
    executionId: call.id,
    tool: tool.name,
    behavior: d.behavior,
    reasonType: d.reason.type,
    reasonDetail: d.reason.detail,
    actor: d.actor ?? call.actor,
    inputDigest: digestOf(input),
  });
  // On the execution's row too, while the call runs (and if a crash ends it), not only at finish.
  deps.executions.decide(call.id, () => JSON.stringify({ behavior: d.behavior, reason: d.reason, chain: d.chain, actor: d.actor }));

  if (d.behavior !== 'allow') {
    return finished(call, 'denied', plainErrorBlock(call.toolUseId, d.message ?? messages.ruleDenied(tool.name)), 'permission', {
      decision: d,
    });
  }
  if (checked !== undefined && checked.status !== 'validating') return refinished(checked, { decision: d });
  return runningCall(call, tool, input, d);
}

/**
 * What the decision chain says of an input an approver or a PermissionRequest
 * hook replaced: the execution's `input` is the model's, so without this its
 * record would not say what ran (the audit row's digest is of the new input).
 */
function updatedNote(input: ToolInput): string {
  const json = safeStringify(input);
  return `(updated the input: ${json.length > UPDATED_NOTE_MAX_CHARS ? `${sliceWhole(json, UPDATED_NOTE_MAX_CHARS)}…` : json})`;
}
const UPDATED_NOTE_MAX_CHARS = 1000;

function safeSummary(tool: Parsed['tool'], input: ToolInput): string {
  try {
    return tool.renderToolUseMessage(input);
  } catch (e) {
    return `${tool.name} (${errorText(e)})`;
  }
}

async function classifierLayer(
  d: Decision,
  call: Parsed,
  session: Session,
  deps: PipelineDeps,
  signal: AbortSignal,
): Promise<Decision> {
  const counters = session.classifierDenials;
  // What even bypassPermissions still asks about (an explicit ask rule, a
  // protected path) is a person's to answer, not a model's.
  if (d.reason.type === 'rule' || d.reason.type === 'safety') {
    d.chain.push({ layer: 'classifier', outcome: 'skip', detail: `${d.reason.type === 'rule' ? 'an ask rule' : 'a protected path'} is for a person to answer` });
    return d;
  }
  if (!deps.classifier) {
    d.chain.push({ layer: 'classifier', outcome: 'skip', detail: 'no classifier configured' });
    return d;
  }
  if (
    counters.consecutive >= CLASSIFIER_DENIAL_LIMITS.maxConsecutive ||
    counters.total >= CLASSIFIER_DENIAL_LIMITS.maxTotal
  ) {
    d.chain.push({
      layer: 'classifier',
      outcome: 'skip',
      detail: `denial limit reached (${counters.consecutive} in a row, ${counters.total} in all): asking a person`,
    });
    return d;
  }
  let text = '';
  try {
    text = call.tool.toAutoClassifierInput(call.input);
  } catch {
    text = '';
  }
  if (text === '') {
    d.chain.push({ layer: 'classifier', outcome: 'skip', detail: 'the tool gives the classifier nothing to judge' });
    return d;
  }
  const v = await deps.classifier.classify({ sessionId: session.id, tool: call.tool.name, text, input: call.input }, signal);
  d.chain.push({ layer: 'classifier', outcome: v.behavior, detail: v.reason });
  if (v.behavior === 'allow') {
    counters.consecutive = 0;
    return { behavior: 'allow', reason: { type: 'classifier', detail: v.reason }, message: undefined, chain: d.chain };
  }
  if (v.behavior === 'deny') {
    counters.consecutive += 1;
    counters.total += 1;
    return {
      behavior: 'deny',
      reason: { type: 'classifier', detail: v.reason },
      message: messages.classifierDenied(call.tool.name, v.reason),
      chain: d.chain,
    };
  }
  return d;
}

/** One permission event's hooks for the call; what they said is kept with the call. */
async function runHooks(
  event: 'PermissionRequest' | 'PermissionDenied',
  extra: Partial<HookPayload>,
  call: Parsed,
  session: Session,
  deps: PipelineDeps,
  signal: AbortSignal,
): Promise<HookOutcome> {
  const outcome = await deps.hooks.run(event, { ...hookPayload(event, session, call.tool.name, observableInput(call.tool, call.input, deps.workspace, session.cwd), undefined), ...extra }, signal);
  for (const m of outcome.messages) call.hookMessages.push(m);
  return outcome;
}

/**
 * PermissionDenied hooks, after a classifier denial (as in Claude Code: rule,
 * hook and person denials do not run them). The refusal stands; a hook's
 * `retry: true` tells the model it may try the call again (the hook may have
 * changed something, such as a rule). Claude Code reads nothing else from
 * them: no additionalContext reaches the model (interpret.ts says so).
 */
async function permissionDeniedHooks(
  d: Decision,
  call: Parsed,
  session: Session,
  deps: PipelineDeps,
  signal: AbortSignal,
): Promise<Decision> {
  const outcome = await runHooks('PermissionDenied', { tool_use_id: call.toolUseId, reason: d.reason.detail ?? d.reason.type }, call, session, deps, signal);
  if (outcome.retry === undefined) return d;
  d.chain.push({ layer: 'hooks', outcome: 'deny', detail: `PermissionDenied: ${outcome.retry} allows a retry` });
  return { ...d, message: [d.message ?? messages.ruleDenied(call.tool.name), messages.retryAllowed].join('\n\n') };
}

async function permissionRequestHooks(
  d: Decision,
  call: Parsed,
  session: Session,
  deps: PipelineDeps,
  signal: AbortSignal,
  onModeSet: () => void,
): Promise<Decision> {
  // The rule an approver is offered (approval-broker.ts suggestRule), in Claude Code's PermissionUpdate shape.
  let suggested: string | undefined;
  try {
    suggested = suggestRule(call.tool, call.input, deps.workspace, session.cwd);
  } catch {
    suggested = undefined;
  }
  const outcome = await runHooks('PermissionRequest', { permission_suggestions: suggestionsOf(suggested) }, call, session, deps, signal);
  const pr = outcome.permissionRequest;
  if (!pr) return d;
  const edited = pr.behavior === 'allow' && pr.updatedInput ? ` ${updatedNote(pr.updatedInput)}` : '';
  d.chain.push({ layer: 'hooks', outcome: pr.behavior, detail: `PermissionRequest: ${pr.hook}${edited}` });
  if (pr.behavior === 'allow') {
    const allowed: Decision = { behavior: 'allow', reason: { type: 'hook', detail: pr.hook }, message: undefined, chain: d.chain };
    if (pr.updatedInput) allowed.updatedInput = pr.updatedInput;
    if (pr.updatedPermissions && pr.updatedPermissions.length > 0) applyHookUpdates(pr.updatedPermissions, pr.hook, call, session, deps, d, onModeSet);
    return allowed;
  }
  const denied: Decision = {
    behavior: 'deny',
    reason: { type: 'hook', detail: pr.hook },
    message: pr.message ?? messages.hookDenied('PermissionRequest', call.tool.name),
    chain: d.chain,
  };
  if (pr.interrupt === true) {
    d.chain.push({ layer: 'hooks', outcome: 'deny', detail: 'PermissionRequest interrupt: the calls of the batch not finished are cancelled' });
    denied.interrupt = true;
  }
  return denied;
}

/**
 * A PermissionRequest hook's `updatedPermissions`, applied as it allows the
 * call: rules for the session, the session's mode (permission-updates.ts).
 * What is applied goes into the decision chain; what is not, into the call's
 * hook messages.
 */
function applyHookUpdates(
  updates: readonly unknown[],
  hook: string,
  call: Parsed,
  session: Session,
  deps: PipelineDeps,
  d: Decision,
  onModeSet: () => void,
): void {
  const perms = deps.config.permissions;
  const report = applyPermissionUpdates(updates, {
    sessionId: session.id,
    mode: session.mode,
    setMode: (mode) => {
      session.mode = mode;
      // A new mode starts the auto-mode denial count afresh (as PATCH /sessions/:id does).
      session.classifierDenials = { consecutive: 0, total: 0 };
      session.touch();
      onModeSet();
    },
    allowBypass: perms.allowBypass && perms.disableBypassPermissionsMode !== 'disable',
    remember: deps.rememberRule,
    createdBy: `hook:${hook}`.slice(0, 500),
  });
  for (const a of report.applied) d.chain.push({ layer: 'hooks', outcome: 'allow', detail: `PermissionRequest updatedPermissions: ${a}` });
  for (const text of report.ignored) call.hookMessages.push({ event: 'PermissionRequest', hook, kind: 'non_blocking_error', text });
  if (report.applied.length > 0) deps.log.info({ session_id: session.id, hook, applied: report.applied }, 'a PermissionRequest hook updated the session’s permissions');
  if (report.notWritten.length > 0) {
    deps.log.warn(
      { session_id: session.id, hook, not_written: report.notWritten },
      'a PermissionRequest hook asked for updates to settings files; they hold for this session only (toolexec writes no settings file)',
    );
  }
}
