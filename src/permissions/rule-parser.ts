/**
 * Claude Code's rule syntax: `Tool` or `Tool(content)`, with `\(`, `\)` and
 * `\\` as escapes inside the content; `Tool()` and `Tool(*)` mean the whole
 * tool. Legacy tool names are mapped to their current ones.
 */

export interface ParsedRuleValue {
  toolName: string;
  content: string | undefined;
}

export const LEGACY_TOOL_NAMES: Readonly<Record<string, string>> = {
  Task: 'Agent',
  KillShell: 'TaskStop',
  AgentOutputTool: 'TaskOutput',
  BashOutputTool: 'TaskOutput',
};

const TOOL_NAME = /^[A-Za-z0-9_*.-]+$/;

/** The current name of a tool; own keys only, so that `constructor` or `__proto__` stay the names they are. */
function legacyName(name: string): string {
  return Object.hasOwn(LEGACY_TOOL_NAMES, name) ? LEGACY_TOOL_NAMES[name]! : name;
}

function isEscaped(s: string, i: number): boolean {
  let n = 0;
  for (let j = i - 1; j >= 0 && s[j] === '\\'; j--) n++;
  return n % 2 === 1;
}

export function unescapeRuleContent(s: string): string {
  return s.replace(/\\([()\\])/g, '$1');
}

export function escapeRuleContent(s: string): string {
  return s.replace(/([()\\])/g, '\\$1');
}

/** Parses one rule; returns an error message instead of throwing. */
export function parseRule(raw: string): ParsedRuleValue | { error: string } {
  const s = raw.trim();
  if (s.length === 0) return { error: 'empty rule' };
  let open = -1;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(' && !isEscaped(s, i)) {
      open = i;
      break;
    }
  }
  if (open === -1) {
    if (!TOOL_NAME.test(s)) return { error: `"${raw}" is not a tool name` };
    return { toolName: legacyName(s), content: undefined };
  }
  if (!s.endsWith(')') || isEscaped(s, s.length - 1)) {
    return { error: `"${raw}" opens "(" without a closing ")" at the end` };
  }
  const name = s.slice(0, open);
  if (!TOOL_NAME.test(name)) return { error: `"${raw}" does not start with a tool name` };
  const inner = s.slice(open + 1, -1);
  const content = unescapeRuleContent(inner);
  const toolName = legacyName(name);
  if (content === '' || content === '*') return { toolName, content: undefined };
  return { toolName, content };
}

