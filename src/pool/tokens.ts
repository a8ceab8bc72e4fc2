/**
 * Token counts for the catalog's `tokens` field. A documented approximation:
 * one token per 4 characters of the JSON the model provider receives (the
 * usual figure for English and JSON with Anthropic's and OpenAI's tokenizers;
 * Claude Code's own fallback is 2.5 characters per token, which overstates
 * schemas). Both figures of `tokens` use the same measure, so their ratio (the
 * saving from deferral) does not depend on it.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateTokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
