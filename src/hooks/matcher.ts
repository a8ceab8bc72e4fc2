/**
 * Claude Code's hook matcher against a tool name (utils/hooks.ts
 * matchesPattern): empty or `*` matches every tool; letters, digits, `_` and
 * `|` form an exact name or a `|`-list; anything else is an unanchored
 * JavaScript RegExp, and an invalid one matches nothing.
 */
export type ToolNameMatcher = (toolName: string) => boolean;

const SIMPLE = /^[a-zA-Z0-9_|]+$/;
const ALL: ToolNameMatcher = () => true;
const NONE: ToolNameMatcher = () => false;

export function compileMatcher(matcher: string | undefined): ToolNameMatcher {
  if (matcher === undefined || matcher === '' || matcher === '*') return ALL;
  if (SIMPLE.test(matcher)) {
    const names = new Set(matcher.split('|').filter((s) => s.length > 0));
    return (name) => names.has(name);
  }
  let re: RegExp;
  try {
    re = new RegExp(matcher);
  } catch {
    return NONE;
  }
  return (name) => re.test(name);
}
