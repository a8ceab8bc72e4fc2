/**
 * The classifier layer (mode `auto`): an HTTP endpoint from the config judges
 * the tool's toAutoClassifierInput text. A timeout, an error or an answer it
 * cannot read means `ask`, never `allow`.
 */
import { z } from 'zod';
import type { Behavior } from './types.js';
import { readCapped } from '../util/read-capped.js';

/** A classifier's answer is at most this large (as a hook's output), and its reason this long. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
export const MAX_REASON_CHARS = 2000;

export interface ClassifierVerdict {
  behavior: Behavior;
  reason: string;
}

export interface ClassifierRequest {
  sessionId: string;
  tool: string;
  text: string;
  input: unknown;
}

export interface Classifier {
  classify(req: ClassifierRequest, signal: AbortSignal): Promise<ClassifierVerdict>;
}

const Answer = z.looseObject({
  decision: z.enum(['allow', 'deny', 'ask']).optional(),
  behavior: z.enum(['allow', 'deny', 'ask']).optional(),
  reason: z.string().optional(),
});

export class HttpClassifier implements Classifier {
  constructor(
    private readonly opts: {
      url: string;
      timeoutMs: number;
      headers?: Record<string, string> | undefined;
      /** Masks secrets (the URL's userinfo, header values) in reasons, which reach responses and the audit. */
      mask?: ((text: string) => string) | undefined;
    },
  ) {}

  async classify(req: ClassifierRequest, signal: AbortSignal): Promise<ClassifierVerdict> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const res = await fetch(this.opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.opts.headers ?? {}) },
        body: JSON.stringify({ session_id: req.sessionId, tool: req.tool, input: req.text, tool_input: req.input }),
        signal: AbortSignal.any([signal, timeout]),
        redirect: 'error',
      });
      if (!res.ok) return { behavior: 'ask', reason: `classifier answered HTTP ${res.status}` };
      // Bounded: the answer is held whole, and its reason reaches the model, the audit and responses.
      const { text, truncated } = await readCapped(res, MAX_ANSWER_BYTES);
      if (truncated) return { behavior: 'ask', reason: `classifier answer larger than ${MAX_ANSWER_BYTES} bytes` };
      const parsed = Answer.safeParse(JSON.parse(text));
      if (!parsed.success) return { behavior: 'ask', reason: 'classifier answer not understood' };
      const behavior = parsed.data.decision ?? parsed.data.behavior;
      if (!behavior) return { behavior: 'ask', reason: 'classifier gave no decision' };
      const reason = parsed.data.reason ?? `classifier: ${behavior}`;
      return { behavior, reason: reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS)}… [reason cut at ${MAX_REASON_CHARS} characters]` : reason };
    } catch (e) {
      if (timeout.aborted) return { behavior: 'ask', reason: `classifier timed out after ${this.opts.timeoutMs} ms` };
      const reason = `classifier unavailable: ${(e as Error).message}`;
      return { behavior: 'ask', reason: this.opts.mask ? this.opts.mask(reason) : reason };
    }
  }
}
