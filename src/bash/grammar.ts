/**
 * What the analyser knows about tree-sitter-bash's nodes and about the places
 * where the grammar reads text differently from bash itself.
 */
import type { Node } from 'web-tree-sitter';
import type { Redirect, Word } from './types.js';
import { literalWord, wordOf } from './words.js';

export const LIST_LIKE = new Set(['program', 'list', 'pipeline', 'subshell', 'do_group', 'else_clause', 'elif_clause', 'negated_command']);
const OUTPUT_OPS = new Set(['>', '>>', '&>', '&>>', '>|', '<>']);
const FD_DUP_OPS = new Set(['>&', '<&', '>&-', '<&-']);
export const SHELLS = new Set(['sh', 'bash', 'rbash', 'dash', 'zsh', 'ksh', 'mksh', 'lksh', 'pdksh', 'oksh', 'posh', 'yash', 'ash', 'busybox']);

/**
 * A script path that is a descriptor, stdin or a process's file (`/dev/stdin`,
 * `/dev/fd/0`, `/proc/self/fd/0`): a shell or `source` given one reads
 * commands that the command supplies on its input.
 */
export function isDescriptorPath(value: string): boolean {
  const parts: string[] = [];
  for (const p of value.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return value.startsWith('/') && (parts[0] === 'dev' || parts[0] === 'proc');
}
export const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
export const ARITH_TEST_OPS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** Text that runs a command if the shell evaluates it (a value for eval-like uses). */
export const CODE_TEXT = /\$\(|`/;
/** A subscript holding a command substitution: builtins that take variable names (`printf -v`, `read`, `declare`, `[[ -v`) evaluate it. */
export const SUBSCRIPT_CODE = /\[[^\]]*(\$\(|`)/;

/** Reserved words: where one stands as a command name, the grammar lost the structure bash sees. */
export const RESERVED = new Set(['{', '}', '!', 'then', 'fi', 'do', 'done', 'esac', 'in', 'function', 'case', 'if', 'elif', 'else', 'while', 'until', 'for', 'select', ']]']);

/** The part after an unescaped line break inside an unquoted word (a grammar error: bash ends the command there). */
export function lineBreakTail(node: Node): Word | undefined {
  if (node.type !== 'word') return undefined;
  const m = /(?:^|[^\\])\n([^\n]*)$/.exec(node.text);
  if (!m) return undefined;
  const tail = m[1]!.replace(/\\(.)/g, '$1');
  return tail.length > 0 ? literalWord(tail) : undefined;
}

/** Bash's backslash processing inside backticks: a backslash before a backslash, a backtick or `$` is dropped. */
export function unescapeBackticks(s: string): string {
  return s.replace(/\\([\\`$])/g, '$1');
}

export function baseName(w: Word): string {
  return w.value.includes('/') ? w.value.slice(w.value.lastIndexOf('/') + 1) : w.value;
}

/**
 * A file redirection. `>&` and `<&` to a descriptor (or `-`) duplicate or
 * close one; to a word they name a file. Destinations after the first are
 * words the grammar misplaced: arguments of the command in bash.
 */
export function fileRedirect(n: Node): { redirect: Redirect; destinations: Node[] } {
  let op = '';
  let fd: number | undefined;
  const destinations: Node[] = [];
  for (let i = 0; i < n.childCount; i++) {
    const c = n.child(i);
    if (!c) continue;
    const field = n.fieldNameForChild(i);
    if (field === 'descriptor') fd = Number.parseInt(c.text, 10);
    else if (field === 'destination') destinations.push(c);
    else if (!c.isNamed) op = c.text;
  }
  const tw = destinations[0] ? wordOf(destinations[0]) : undefined;
  const isDup = FD_DUP_OPS.has(op) && (!tw || (tw.literal && /^(\d+-?|-)$/.test(tw.value)));
  return {
    redirect: {
      op,
      fd,
      kind: isDup ? 'dup' : 'file',
      target: isDup ? undefined : tw,
      output: !isDup && (OUTPUT_OPS.has(op) || op === '>&'),
    },
    destinations,
  };
}
