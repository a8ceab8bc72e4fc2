/**
 * The service's secrets (results.mask: its tokens, the credentials its
 * configuration holds, `server.redact`) kept out of everything a call's
 * answer and record carry, not only the tool's own output (step 6 masks
 * that): the input as stored and shown (a model that writes a token into a
 * command), the decision's reasons and messages (a denial quoting the
 * command, a hook's reason), hook messages, and the text the other steps put
 * in the result (a hook's stderr echoing its input, a validation error naming
 * a parameter). What runs is never masked: the call, hooks and approvals get
 * the input as sent.
 */
import { maskValue } from '../observability/logging.js';
import type { Decision } from '../permissions/types.js';
import type { ToolResultBlock } from '../tool/types.js';
import { refinished } from './finish.js';
import type { FinishedCall } from './types.js';

type Mask = (text: string) => string;

/** The block with the secrets masked in its text (images and other parts are left whole). */
export function maskBlock(block: ToolResultBlock, mask: Mask): ToolResultBlock {
  if (typeof block.content === 'string') {
    const masked = mask(block.content);
    return masked === block.content ? block : { ...block, content: masked };
  }
  let changed = false;
  const content = block.content.map((b) => {
    if (b.type !== 'text') return b;
    const masked = mask(b.text);
    if (masked === b.text) return b;
    changed = true;
    return { ...b, text: masked };
  });
  return changed ? { ...block, content } : block;
}

/** The decision with its reason, message and chain masked; its updatedInput (what runs) kept. */
export function maskDecision(d: Decision, mask: Mask): Decision {
  const reason = maskValue(d.reason, mask);
  const message = d.message === undefined ? undefined : mask(d.message);
  const chain = maskValue(d.chain, mask);
  if (reason === d.reason && message === d.message && chain === d.chain) return d;
  return { ...d, reason, message, chain };
}

/** The finished call with its result, decision and hook messages masked. */
export function maskFinished(f: FinishedCall, mask: Mask): FinishedCall {
  const block = maskBlock(f.block, mask);
  const decision = f.decision === undefined ? undefined : maskDecision(f.decision, mask);
  const hookMessages = maskValue(f.hookMessages, mask);
  if (block === f.block && decision === f.decision && hookMessages === f.hookMessages) return f;
  return refinished(f, { block, decision, hookMessages });
}
