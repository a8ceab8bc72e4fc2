/**
 * A lexical split for commands the analyser cannot model (Claude Code's
 * fallback when tree-sitter cannot be used): the text is cut at every
 * operator and substitution delimiter, quotes and backslashes are dropped
 * (whatever the nesting level of the escapes), and every word of each
 * piece is taken as the start of a command (the grammar may have lost where
 * a command began: `case … in a) bash -c 'rm x';;`). Grammar error recovery can fold a command
 * into an error node where the walk no longer sees it; these pieces let deny
 * and ask rules still find it. They never make a command allowed: the
 * analysis stays too complex.
 */
import type { SimpleCommand } from './types.js';
import { literalWord } from './words.js';

const MAX_TEXT = 200_000;
const MAX_COMMANDS = 4_000;
const MAX_WORDS = 200;
/** Words that start a piece without being its command. */
const LEADING = new Set(['!', '{', '}', 'then', 'do', 'else', 'elif', 'if', 'while', 'until', 'fi', 'done', 'esac', 'in', 'case', 'for', 'select', 'function']);
const SEPARATORS = /\$\(|\$\{|<\(|>\(|[;&|\n(){}`<>]/;

export function roughCommands(src: string): SimpleCommand[] {
  const text = src.slice(0, MAX_TEXT).replace(/\\\n/g, '').replace(/["'\\]/g, '');
  const out: SimpleCommand[] = [];
  for (const piece of text.split(SEPARATORS)) {
    const words = piece.trim().split(/\s+/).filter((w) => w.length > 0).slice(0, MAX_WORDS);
    while (words.length > 0 && LEADING.has(words[0]!)) words.shift();
    const argv = words.map(literalWord);
    for (let i = 0; i < argv.length && out.length < MAX_COMMANDS; i++) {
      out.push({ argv: argv.slice(i), assignments: [], redirects: [], origin: 'fallback', text: words.slice(i).join(' ') });
    }
    if (out.length >= MAX_COMMANDS) break;
  }
  return out;
}
