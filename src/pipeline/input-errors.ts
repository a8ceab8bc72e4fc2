/**
 * zod issues in words a model can act on, as Claude Code words them
 * (utils/toolErrors.ts): a missing parameter, an unexpected parameter, a wrong
 * type with what was expected and what was received.
 */
import type { z } from 'zod';

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  // A JSON number too large for a double (1e400) arrives as Infinity: not "a number".
  if (typeof v === 'number' && !Number.isFinite(v)) return 'number out of range';
  return typeof v;
}

function fmtPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else s += s.length === 0 ? String(p) : `.${String(p)}`;
  }
  return s;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let cur: unknown = root;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, p)) {
      return { found: false, value: undefined };
    }
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return { found: true, value: cur };
}

export function formatIssues(toolName: string, issues: readonly z.core.$ZodIssue[], input: unknown): string {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = fmtPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const p = path ? `${path}.${k}` : k;
        lines.push(`An unexpected parameter \`${p}\` was provided`);
      }
      continue;
    }
    if (issue.code === 'invalid_type') {
      const at = valueAt(input, issue.path);
      if (path === '') {
        lines.push(`The input is expected as \`${issue.expected}\` but provided as \`${typeName(input)}\``);
      } else if (!at.found || at.value === undefined) {
        lines.push(`The required parameter \`${path}\` is missing`);
      } else {
        lines.push(`The parameter \`${path}\` type is expected as \`${issue.expected}\` but provided as \`${typeName(at.value)}\``);
      }
      continue;
    }
    lines.push(path ? `The parameter \`${path}\` is invalid: ${issue.message}` : issue.message);
  }
  return `${toolName} failed due to the following issue${lines.length === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}
