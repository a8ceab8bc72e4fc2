/** Text on one line (whitespace runs become one space), cut to `max` characters with an ellipsis. */
export function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${sliceWhole(t, max - 1)}…` : t;
}

/**
 * The first `max` UTF-16 units of a text, one fewer when the cut would split a
 * surrogate pair: a lone surrogate in a tool_result (or in a classifier's
 * prompt) makes Anthropic's API refuse the whole request (400 "no low
 * surrogate in string").
 */
export function sliceWhole(s: string, max: number): string {
  if (s.length <= max) return s;
  const c = s.charCodeAt(max - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}
