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

/**
 * A UTF-16 surrogate without its pair. SQLite stores text as UTF-8, where it
 * becomes U+FFFD: an id holding one came back from the database as another
 * id, so session "x\uD800" was stored as "x\uFFFD", and after a restart
 * session "x\uFFFD" was refused (TOOL_USE_ID_REUSED) or replayed calls of
 * the other.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why an id (a session's, a tool use's) cannot be stored as sent, or undefined. */
export function idProblem(id: string): string | undefined {
  const m = LONE_SURROGATE.exec(id);
  if (!m) return undefined;
  return `holds a lone UTF-16 surrogate (\\u${m[0].charCodeAt(0).toString(16).toUpperCase()} at ${m.index}), which the database cannot store as sent; ids must be whole Unicode characters`;
}
