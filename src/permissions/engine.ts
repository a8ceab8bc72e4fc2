/**
 * The rule, tool, mode and hook layers of a permission decision (contract §3
 * step 5), in Claude Code's order (hasPermissionsToUseToolInner):
 *
 *   whole-tool deny rule → tool's own check (content rules, paths, safety)
 *   → hook deny → whole-tool ask rule / bypass-immune asks → hook ask
 *   → bypassPermissions → outside the working directories: ask → hook allow
 *   → whole-tool allow rule → tool allow → remaining asks → passthrough = ask
 *
 * then the mode's after-pass: plan denies what is not read-only, dontAsk turns
 * ask into deny. Net effect: deny beats ask beats allow, and a hook's allow
 * never beats a deny or ask rule. The classifier and the user layers act on
 * what is still `ask` (pipeline/step5-permission.ts).
 */
import type { PermissionMode } from '../config/schema.js';
import type { AnyTool, PermissionResult, ToolContext, ToolInput } from '../tool/types.js';
import { messages } from './messages.js';
import { PASSES_THROUGH, PASSTHROUGH } from '../tool/build-tool.js';
import type { RuleIndex } from './rule-index.js';
import type { Behavior, ChainStep, Decision, ReasonType } from './types.js';

/** The aggregated opinion of the PreToolUse hooks. */
export interface HookPermission {
  behavior: Behavior;
  /** permissionDecisionReason, or the blocking stderr. */
  reason: string | undefined;
  /** Which hook(s) said it. */
  source: string;
}

export interface DecideInput {
  tool: AnyTool;
  input: ToolInput;
  ctx: ToolContext;
  mode: PermissionMode;
  rules: RuleIndex;
  hook: HookPermission | undefined;
}

function decision(
  behavior: Behavior,
  type: ReasonType,
  detail: string,
  message: string | undefined,
  chain: ChainStep[],
): Decision {
  return { behavior, reason: { type, detail }, message, chain };
}

/** The tool layer's chain detail when the tool passes through (one string, not one made per call). */
const PASSTHROUGH_DETAIL = 'tool: passthrough';

const BYPASS_IMMUNE: ReadonlySet<ReasonType> = new Set<ReasonType>(['rule', 'safety']);

export async function decide(d: DecideInput): Promise<Decision> {
  const { tool, input, ctx, mode, rules, hook } = d;
  const chain: ChainStep[] = [];
  const name = tool.name;

  // 1a. A whole-tool deny rule ends it.
  const denyRule = rules.wholeTool(tool, 'deny');
  if (denyRule) {
    chain.push({ layer: 'rules', outcome: 'deny', detail: denyRule.raw });
    return decision('deny', 'rule', denyRule.raw, messages.ruleDenied(name), chain);
  }

  // 1c. The tool's own opinion: content rules, paths, protected files.
  // A tool without a check of its own passes through at once (no promise to wait for).
  let own: PermissionResult = PASSTHROUGH;
  if (tool.checkPermissions !== PASSES_THROUGH) {
    try {
      own = await tool.checkPermissions(input, ctx);
    } catch (e) {
      // A tool that cannot judge its input does not get to run it unasked.
      own = { behavior: 'ask', message: `Could not check permissions: ${(e as Error).message}`, type: 'tool' };
    }
  }
  const ownType: ReasonType = own.behavior === 'passthrough' ? 'tool' : (own.type ?? 'tool');
  const ownDetail = own.behavior === 'passthrough' ? 'passthrough' : (own.detail ?? own.behavior);
  chain.push({ layer: 'tool', outcome: own.behavior, detail: own.behavior === 'passthrough' ? PASSTHROUGH_DETAIL : `${ownType}: ${ownDetail}` });

  // 1d. Its deny.
  if (own.behavior === 'deny') return decision('deny', ownType, ownDetail, own.message, chain);

  // Hook deny (exit 2 or permissionDecision "deny").
  if (hook?.behavior === 'deny') {
    chain.push({ layer: 'hooks', outcome: 'deny', detail: hook.source });
    const msg = hook.reason ?? messages.hookDenied('PreToolUse', name);
    return decision('deny', 'hook', hook.source, msg, chain);
  }

  // 1b. A whole-tool ask rule; 1f/1g. content ask rules and safety checks, immune to bypass.
  const askRule = rules.wholeTool(tool, 'ask');
  if (askRule) {
    chain.push({ layer: 'rules', outcome: 'ask', detail: askRule.raw });
    return finishAsk(d, decision('ask', 'rule', askRule.raw, messages.notGranted(name), chain));
  }
  if (own.behavior === 'ask' && BYPASS_IMMUNE.has(ownType)) {
    return finishAsk(d, decision('ask', ownType, ownDetail, own.message, chain));
  }

  // A hook's ask forces the prompt, but still only after the deny layers.
  if (hook?.behavior === 'ask') {
    chain.push({ layer: 'hooks', outcome: 'ask', detail: hook.source });
    return finishAsk(
      d,
      decision('ask', 'hook', hook.source, hook.reason ?? messages.hookAsked('PreToolUse', name), chain),
    );
  }

  // 2a. bypassPermissions allows what no deny, ask rule or safety check stopped.
  if (mode === 'bypassPermissions') {
    chain.push({ layer: 'mode', outcome: 'allow', detail: 'bypassPermissions' });
    return planGate(d, decision('allow', 'mode', 'bypassPermissions', undefined, chain));
  }

  // A path outside the working directories is never allowed by a whole-tool
  // rule or a hook: only a path rule (inside the tool's check), bypass mode,
  // the classifier or a person can let it through.
  if (own.behavior === 'ask' && ownType === 'working_dir') {
    return finishAsk(d, decision('ask', ownType, ownDetail, own.message, chain));
  }

  if (hook?.behavior === 'allow') {
    chain.push({ layer: 'hooks', outcome: 'allow', detail: hook.source });
    return planGate(d, decision('allow', 'hook', hook.source, undefined, chain));
  }

  // 2b. A whole-tool allow rule.
  const allowRule = rules.wholeTool(tool, 'allow');
  if (allowRule) {
    chain.push({ layer: 'rules', outcome: 'allow', detail: allowRule.raw });
    return planGate(d, decision('allow', 'rule', allowRule.raw, undefined, chain));
  }

  if (own.behavior === 'allow') {
    const dec = decision('allow', ownType, ownDetail, undefined, chain);
    if (own.updatedInput) dec.updatedInput = own.updatedInput;
    return planGate(d, dec);
  }
  if (own.behavior === 'ask') return finishAsk(d, decision('ask', ownType, ownDetail, own.message, chain));

  // 3. Nobody decided: ask.
  return finishAsk(d, decision('ask', 'tool', 'no rule covers this call', messages.notGranted(name), chain));
}

/** plan mode: whatever is not read-only is denied (toolexec enforces it; Claude Code only reminds). */
function planGate(d: DecideInput, dec: Decision): Decision {
  if (d.mode !== 'plan') return dec;
  let readOnly = false;
  try {
    readOnly = d.tool.isReadOnly(d.input);
  } catch {
    readOnly = false;
  }
  if (readOnly) return dec;
  dec.chain.push({ layer: 'mode', outcome: 'deny', detail: 'plan: not read-only' });
  return decision('deny', 'mode', 'plan', messages.planMode(d.tool.name), dec.chain);
}

function finishAsk(d: DecideInput, dec: Decision): Decision {
  const gated = planGate(d, dec);
  if (gated.behavior === 'deny') return gated;
  if (d.mode === 'dontAsk') {
    dec.chain.push({ layer: 'mode', outcome: 'deny', detail: 'dontAsk' });
    return decision('deny', 'mode', 'dontAsk', messages.dontAsk(d.tool.name), dec.chain);
  }
  return dec;
}
