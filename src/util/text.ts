/** Text on one line (whitespace runs become one space), cut to `max` characters with an ellipsis. */
export function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${sliceWhole(t, max - 1)}…` : t;
}

/**
 * Half a character at a text's cut dropped: a lone surrogate in a tool_result
 * (or in a classifier's prompt) makes Anthropic's API refuse the whole request
 * (400 "no low surrogate in string").
 */
export function withoutHalfAtEnd(s: string): string {
  const c = s.charCodeAt(s.length - 1);
  return c >= 0xd800 && c <= 0xdbff ? s.slice(0, -1) : s;
}

/** The same at a text's start: a cut that keeps the last characters. */
export function withoutHalfAtStart(s: string): string {
  const c = s.charCodeAt(0);
  return c >= 0xdc00 && c <= 0xdfff ? s.slice(1) : s;
}

/** The first `max` UTF-16 units of a text, one fewer when the cut would split a surrogate pair. */
export function sliceWhole(s: string, max: number): string {
  return s.length <= max ? s : withoutHalfAtEnd(s.slice(0, max));
}
