/**
 * Quote removal for one word of the syntax tree, following bash: backslash
 * escapes outside quotes, `'…'` taken as is, `"…"` with its few escapes,
 * `$'…'` decoded (and cut at a NUL, as bash does), concatenations joined.
 * A word with any expansion is not literal and keeps its source text.
 */
import type { Node } from 'web-tree-sitter';
import type { Word } from './types.js';

interface Piece {
  value: string;
  literal: boolean;
  /** The unquoted characters as written, quoted or escaped ones as `_` (for glob, brace and tilde checks). */
  shape: string;
}

const BRACE_EXPANSION = /\{[^{}]*(,|\.\.)[^{}]*\}/;
const GLOB = /[*?]|\[[^\]]*\]/;
const NON_LITERAL: Piece = { value: '', literal: false, shape: '' };

function mask(s: string): string {
  return '_'.repeat(s.length);
}

/** An unquoted word: backslash escapes; `$` or a backtick means an expansion the grammar did not split out. */
function unquoted(text: string): Piece {
  let value = '';
  let shape = '';
  let literal = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) {
        value += '\\';
        shape += '_';
      } else if (next !== '\n') {
        value += next;
        shape += '_';
      }
      i++;
      continue;
    }
    if (c === '$' || c === '`') literal = false;
    value += c;
    shape += c;
  }
  return { value, literal, shape };
}

/** The inside of "…": backslash escapes only `$`, backtick, `"`, `\` and newline. */
export function unescapeDouble(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const next = s[i + 1];
    if (c === '\\' && next !== undefined && '$`"\\\n'.includes(next)) {
      if (next !== '\n') out += next;
      i++;
      continue;
    }
    out += c;
  }
  return out;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\u0007',
  b: '\b',
  e: '\u001b',
  E: '\u001b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The inside of $'…'. Bash ends the string at the first NUL it decodes. `\xHH` and `\NNN` are
 * bytes (`$'\xff'` is the one byte 0xff, `$'\303\277'` the two of ÿ), `\u`/`\U` characters: the
 * bytes are read as UTF-8, and undefined when they are not UTF-8 (a name no string here can
 * spell: realpath of the code point U+00FF asks about another file than bash opens), or when a
 * `\u`/`\U` past ASCII names a character (its bytes depend on bash's locale).
 */
export function decodeAnsiC(s: string): string | undefined {
  let out = '';
  let bytes: number[] = [];
  const flush = (): boolean => {
    if (bytes.length === 0) return true;
    try {
      out += UTF8.decode(Uint8Array.from(bytes));
    } catch {
      return false;
    }
    bytes = [];
    return true;
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const e = s[i + 1];
    const byteEscape = c === '\\' && e !== undefined && ((e >= '0' && e <= '7') || (e === 'x' && /^[0-9a-fA-F]/.test(s[i + 2] ?? '')));
    if (!byteEscape && !flush()) return undefined;
    if (c !== '\\' || e === undefined) {
      out += c;
      continue;
    }
    let code: number | undefined;
    let consumed = 1;
    const hex = (max: number): void => {
      const m = /^[0-9a-fA-F]+/.exec(s.slice(i + 2, i + 2 + max));
      if (m) {
        code = parseInt(m[0], 16);
        consumed = 1 + m[0].length;
      }
    };
    if (SIMPLE_ESCAPES[e] !== undefined) {
      out += SIMPLE_ESCAPES[e];
      i += 1;
      continue;
    } else if (e >= '0' && e <= '7') {
      const m = /^[0-7]{1,3}/.exec(s.slice(i + 1, i + 4))!;
      code = parseInt(m[0], 8) & 0xff;
      consumed = m[0].length;
    } else if (e === 'x') hex(2);
    else if (e === 'u') hex(4);
    else if (e === 'U') hex(8);
    else if (e === 'c' && i + 2 < s.length) {
      // bash's TOCTRL: `?` is DEL, a letter its capital's control character; `\c\\` one backslash's.
      // It takes one byte: after a character past ASCII the rest of its bytes stay, not UTF-8.
      const ch = s.charCodeAt(i + 2);
      if (ch >= 0x80) return undefined;
      code = ch === 0x3f ? 0x7f : (ch >= 0x61 && ch <= 0x7a ? ch - 0x20 : ch) & 0x1f;
      consumed = ch === 0x5c && s[i + 3] === '\\' ? 3 : 2;
    }
    if (code === undefined) {
      out += c + e;
      i += 1;
      continue;
    }
    if (code === 0) return flush() ? out : undefined;
    // \u and \U past ASCII are spelled in the locale bash has as it reads the line (`\u00E9`
    // as is in C, which an earlier line's LC_ALL=C sets; bytes that are not UTF-8 past U+10FFFF
    // or for a surrogate in UTF-8): not known here.
    if ((e === 'u' || e === 'U') && code >= 0x80) return undefined;
    if (byteEscape) bytes.push(code);
    else out += code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
    i += consumed;
  }
  return flush() ? out : undefined;
}

function stripQuotes(text: string, open: number): string {
  return text.length >= open + 1 ? text.slice(open, -1) : '';
}

function piece(node: Node): Piece {
  switch (node.type) {
    case 'word':
    case 'variable_name':
    case 'extglob_pattern':
    case 'test_operator':
    case 'regex':
      return unquoted(node.text);
    case 'number':
      return node.childCount === 0 ? unquoted(node.text) : NON_LITERAL;
    case 'raw_string': {
      const v = stripQuotes(node.text, 1);
      return { value: v, literal: true, shape: mask(node.text) };
    }
    case 'ansi_c_string': {
      const value = decodeAnsiC(stripQuotes(node.text, 2));
      return value === undefined ? NON_LITERAL : { value, literal: true, shape: mask(node.text) };
    }
    case 'string': {
      for (const c of node.namedChildren) if (c && c.type !== 'string_content') return NON_LITERAL;
      return { value: unescapeDouble(stripQuotes(node.text, 1)), literal: true, shape: mask(node.text) };
    }
    case 'concatenation':
    case 'command_name': {
      let value = '';
      let shape = '';
      let literal = true;
      if (node.childCount === 0) return unquoted(node.text);
      for (const c of node.children) {
        if (!c) continue;
        const p = c.isNamed ? piece(c) : unquoted(c.text);
        if (!p.literal) literal = false;
        value += p.value;
        shape += p.shape;
      }
      return literal ? { value, literal, shape } : NON_LITERAL;
    }
    default:
      return NON_LITERAL;
  }
}

export function wordOf(node: Node): Word {
  const raw = node.text;
  const p = node.isNamed ? piece(node) : NON_LITERAL;
  if (!p.literal || BRACE_EXPANSION.test(p.shape)) {
    return { raw, value: raw, literal: false, glob: false, tilde: false };
  }
  return { raw, value: p.value, literal: true, glob: GLOB.test(p.shape), tilde: p.shape.startsWith('~') };
}

/** `w` with its value from `at` on as its value: an option's attached value (`--file=F`, `-oF`, `if=F`). */
export function wordTail(w: Word, at: number): Word {
  const v = w.value.slice(at);
  return { ...w, raw: v, value: v };
}

/** A word made from text (wrappers' and derived commands' synthetic words). */
export function literalWord(value: string): Word {
  return { raw: value, value, literal: true, glob: false, tilde: false };
}
