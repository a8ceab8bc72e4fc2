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

/**
 * Whether a command word runs the program its base name says: a bare name (found on PATH), or a
 * path into the system's program directories. `./ls`, `bin/cat`, `/tmp/x/echo` or `~/bin/git` run
 * whatever file is there (one the Write tool or a cloned repository put there): deny rules still
 * match them by base name, but they are not the read-only, safe-wrapper or acceptEdits command of
 * that name.
 */
export function runsNamedProgram(w: Word): boolean {
  if (!w.value.includes('/')) return true;
  return w.literal && !w.tilde && !w.glob && /^\/(?:usr\/(?:local\/)?)?s?bin\/[^/]+$/.test(w.value);
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

/** A line continuation: a backslash (not itself escaped) before a newline. The index is the backslash's. */
const CONTINUATION = /(?<!\\)(?:\\\\)*\\\n/g;
/** Nodes inside which bash keeps a backslash-newline as it is. */
const KEEPS_CONTINUATION = new Set(['raw_string', 'ansi_c_string', 'comment']);
/** A heredoc delimiter with quoting: bash reads the body as it is. */
const QUOTED_DELIMITER = /['"\\]/;

function ancestors(n: Node): Node[] {
  const out: Node[] = [];
  for (let p: Node | null = n; p; p = p.parent) out.push(p);
  return out;
}

/**
 * Where bash's lexer reads the text differently from the grammar, below
 * the level of words (the words themselves are checked by the walk):
 *
 * - a carriage return, vertical tab or form feed is an ordinary character
 *   of a word in bash, but blank space to the grammar: `echo a\r# $(rm x)`
 *   is one word and a substitution in bash, a comment to the grammar;
 * - bash removes a line continuation before it reads words, also inside
 *   "…" and unquoted heredoc bodies: `"$\⏎(rm x)"`, `"${x@\⏎P}"` are
 *   expansions to bash, text to the grammar, and joined lines of a heredoc
 *   body can form its delimiter (`EO\⏎F`), ending it early;
 * - `$"…"` is translated by bash with the locale's message catalogue
 *   (TEXTDOMAINDIR can name one the command wrote), and the translation is
 *   expanded as a "…" is: `$"hello"` can run a command substitution. The
 *   grammar reads the `$` as a word of its own.
 *
 * Returns why, or undefined.
 */
export function lexicalDifference(root: Node, src: string): string | undefined {
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c !== '\r' && c !== '\v' && c !== '\f') continue;
    const n = root.descendantForIndex(i, i + 1);
    // Inside a token (a word, a quoted string, a comment, heredoc text) bash and the grammar agree; a "…" is read from its text.
    if (n && n.childCount > 0 && n.type !== 'string') return 'a carriage return, vertical tab or form feed separates words for the grammar but is part of a word in bash';
  }
  for (let i = src.indexOf('$"'); i !== -1; i = src.indexOf('$"', i + 1)) {
    const n = root.descendantForIndex(i, i + 1);
    // `$"…"` outside "…" (where `$"` is a `$` before the closing quote): the grammar reads `$` as a word of its own.
    if (n && n.type === '$' && n.parent?.type !== 'string') return 'a translated string ($"…"): bash replaces it with a translation from the locale, which it then expands';
  }
  for (const m of src.matchAll(CONTINUATION)) {
    const at = m.index + m[0].length - 2;
    const n = root.descendantForIndex(at, at + 2);
    if (!n) continue;
    const up = ancestors(n);
    if (up.some((a) => KEEPS_CONTINUATION.has(a.type))) continue;
    const heredoc = up.find((a) => a.type === 'heredoc_redirect');
    if (heredoc && up.some((a) => a.type === 'heredoc_body') && QUOTED_DELIMITER.test(heredoc.namedChildren.find((x) => x?.type === 'heredoc_start')?.text ?? '')) continue;
    if (src[at - 1] === '$') return 'a line continuation after $ (bash joins the lines into an expansion)';
    if (up.some((a) => a.type === 'expansion' || a.type === 'simple_expansion')) return 'a line continuation inside a parameter expansion';
  }
  for (const h of root.descendantsOfType('heredoc_redirect')) {
    const why = h ? heredocDifference(h, src) : undefined;
    if (why) return why;
  }
  return undefined;
}

/**
 * The delimiter bash reads from a heredoc's start word: quotes removed
 * (`\\EOF`, `'EOF'`, `"EOF"`, `$'EOF'` are all `EOF`), nothing expanded.
 * Undefined where it is not plain enough to be sure.
 */
export function heredocDelimiter(start: string): string | undefined {
  let out = '';
  for (let i = 0; i < start.length; i++) {
    let c = start[i]!;
    if (c === '\\') {
      if (i + 1 < start.length) out += start[++i];
      else out += c;
      continue;
    }
    if (c === '$' && (start[i + 1] === "'" || start[i + 1] === '"')) c = start[++i]!;
    if (c === "'" || c === '"') {
      const close = start.indexOf(c, i + 1);
      if (close === -1) return undefined;
      const inner = start.slice(i + 1, close);
      if (/[\\$`]/.test(inner)) return undefined;
      out += inner;
      i = close;
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * Whether bash ends a heredoc at another line than the grammar does: its
 * delimiter is the start word with quotes removed (the grammar kept
 * `$'EOF'` as it is and read the rest of the command as the body, where
 * bash ran it), compared with whole lines (leading tabs removed for `<<-`),
 * after continued lines are joined when the start word is unquoted.
 */
function heredocDifference(h: Node, src: string): string | undefined {
  const start = h.namedChildren.find((x) => x?.type === 'heredoc_start');
  const body = h.namedChildren.find((x) => x?.type === 'heredoc_body');
  const end = h.namedChildren.find((x) => x?.type === 'heredoc_end');
  if (!start) return undefined;
  const delimiter = heredocDelimiter(start.text);
  if (delimiter === undefined) return 'a heredoc delimiter that is not modelled';
  const stripTabs = h.children.some((x) => x?.text === '<<-');
  const line = (l: string): string => (stripTabs ? l.replace(/^\t+/, '') : l);
  if (body) {
    let text = src.slice(body.startIndex, body.endIndex);
    if (!QUOTED_DELIMITER.test(start.text)) text = text.replace(/\\\n/g, '');
    if (text.split('\n').some((l) => line(l) === delimiter)) return 'bash ends a heredoc at another line than the grammar reads';
  }
  if (end && end.text !== '') {
    const from = src.lastIndexOf('\n', end.startIndex - 1) + 1;
    if (line(src.slice(from, end.endIndex)) !== delimiter) return 'bash ends a heredoc at another line than the grammar reads';
  }
  return undefined;
}
