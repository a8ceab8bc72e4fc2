/**
 * Claude Code's hook matcher against a tool name (utils/hooks.ts
 * matchesPattern): empty or `*` matches every tool; letters, digits, `_` and
 * `|` form an exact name or a `|`-list; anything else is an unanchored
 * JavaScript RegExp, and an invalid one matches nothing. Retired tool names
 * keep matching the renamed tool, as there: a name in an exact pattern or a
 * list is mapped to its current name (`KillShell` → TaskStop), and a regex
 * is also tried against the retired names of the tool (`^Task$` → Agent).
 */
import { LEGACY_TOOL_NAMES } from '../permissions/rule-parser.js';

export type ToolNameMatcher = (toolName: string) => boolean;

const SIMPLE = /^[a-zA-Z0-9_|]+$/;
const ALL: ToolNameMatcher = () => true;
const NONE: ToolNameMatcher = () => false;

function currentName(name: string): string {
  return Object.hasOwn(LEGACY_TOOL_NAMES, name) ? LEGACY_TOOL_NAMES[name]! : name;
}

/** The retired names of each renamed tool (computed once). */
const RETIRED = new Map<string, string[]>();
for (const [old, now] of Object.entries(LEGACY_TOOL_NAMES)) RETIRED.set(now, [...(RETIRED.get(now) ?? []), old]);

/** Why a matcher that is a regular expression does not compile (it then matches nothing), or undefined. */
export function matcherProblem(matcher: string | undefined): string | undefined {
  if (matcher === undefined || matcher === '' || matcher === '*' || SIMPLE.test(matcher)) return undefined;
  try {
    new RegExp(matcher);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

export function compileMatcher(matcher: string | undefined): ToolNameMatcher {
  if (matcher === undefined || matcher === '' || matcher === '*') return ALL;
  if (SIMPLE.test(matcher)) {
    const names = new Set(matcher.split('|').map(currentName));
    return (name) => names.has(name);
  }
  let re: RegExp;
  try {
    re = new RegExp(matcher);
  } catch {
    return NONE;
  }
  return (name) => {
    // A /g or /y flag cannot be given in a matcher string, so test() keeps no state between calls.
    if (re.test(name)) return true;
    const retired = RETIRED.get(name);
    return retired !== undefined && retired.some((n) => re.test(n));
  };
}
