/**
 * Grep's regex dialect: the part of ripgrep's (Rust `regex`) syntax that
 * JavaScript's RegExp (with the `u` flag) can reproduce exactly. A pattern is
 * parsed once and written out twice — for rg, and for the JS engine — so that
 * both engines match the same lines. Anything outside the common part is
 * refused, in both engines, with a message saying what to write instead.
 *
 * Translated so that JS behaves like Rust:
 * - `\d \w \s \b` (and negations) are Unicode-aware in Rust: `\p{Nd}`,
 *   Alphabetic+M+Nd+Pc+Join_Control, `\p{White_Space}`, and `\b` as
 *   look-around over that word class (JS's own are ASCII-only).
 * - `.` matches anything but `\n` (JS's also refuses `\r`, U+2028, U+2029);
 *   in multiline mode (rg `-U --multiline-dotall`) it matches `\n` too.
 * - `^`/`$` are line anchors, and `$` also matches before `\r\n` (rg
 *   `--crlf` writes `$` as `(?:\r??$)`, and so does the JS side).
 * - `[[:alpha:]]` POSIX classes, `\x{…}`, `\u{…}`, `\U…`, `\a`, `\pL`, a
 *   literal `]` or `}`, escaped punctuation (`\/`, `\:`), `(?P<name>…)` and
 *   `(?<name>…)` (captures do not matter to a search).
 * Refused in both:
 * - look-around `(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)` and backreferences
 *   `\1`, `\k<…>` — Rust's engine has neither (it stays linear-time);
 * - inline flags `(?i)` (use `-i`), `\A \z \< \>` and other escapes one side
 *   lacks, nested classes and class set operations (`&&`, `--`, `~~`),
 *   `\W` inside a class, `{,n}`, repetition counts above 1000, quantified
 *   anchors; without multiline, a literal newline (rg refuses it too).
 * Left as they are (documented differences): Unicode versions of the two
 * engines, loose property names (`\p{greek}`; write `\p{Greek}`), and rg's
 * compiled-size limit, which very large classes repeated many times can hit.
 */

export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

export interface CompiledPattern {
  /** For rg (`-e`): Rust syntax that ripgrep 13 and later accept. */
  rust: string;
  /** JS source matched against one line (without its `\n`). */
  jsLine: string;
  /** JS source matched against a whole file (multiline mode). */
  jsText: string;
  /** `u`, or `iu` with -i. */
  flags: string;
  /** Some part of the pattern can match `\n`: multiline searches then span lines. */
  canMatchNewline: boolean;
}

const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const JS_WORD = `[${WORD}]`;
const JS_NOT_WORD = `[^${WORD}]`;
const JS_BOUNDARY = `(?:(?<=${JS_WORD})(?!${JS_WORD})|(?<!${JS_WORD})(?=${JS_WORD}))`;
const JS_NOT_BOUNDARY = `(?:(?<=${JS_WORD})(?=${JS_WORD})|(?<!${JS_WORD})(?!${JS_WORD}))`;

/** Rust's POSIX classes (ASCII), as JS class contents. */
const POSIX: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\u{0}-\\u{7f}',
  blank: '\\t ',
  cntrl: '\\u{0}-\\u{1f}\\u{7f}',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\u{b}\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Escapes Rust's regex engine accepts with a special meaning we reproduce. */
const CLASS_ESCAPES: Readonly<Record<string, { rust: string; js: string; inClass: boolean }>> = {
  d: { rust: '\\d', js: '\\p{Nd}', inClass: true },
  D: { rust: '\\D', js: '\\P{Nd}', inClass: true },
  w: { rust: '\\w', js: JS_WORD, inClass: true },
  W: { rust: '\\W', js: JS_NOT_WORD, inClass: false },
  s: { rust: '\\s', js: '\\p{White_Space}', inClass: true },
  S: { rust: '\\S', js: '\\P{White_Space}', inClass: true },
};

const CHAR_ESCAPES: Readonly<Record<string, number>> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };

/** Rust's meta characters outside a class: escaped when written literally for rg. */
const RUST_META = new Set(Array.from('\\.+*?()|[]{}^$'));
/** JS's syntax characters: escaped when written literally for JS. */
const JS_SYNTAX = new Set(Array.from('^$\\.*+?()[]{}|/'));

function hex(cp: number): string {
  return cp.toString(16);
}

function isControl(cp: number): boolean {
  return cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0) || cp === 0x2028 || cp === 0x2029;
}

function rustLiteral(cp: number): string {
  const c = String.fromCodePoint(cp);
  if (RUST_META.has(c)) return `\\${c}`;
  return isControl(cp) ? `\\x{${hex(cp)}}` : c;
}

function jsLiteral(cp: number): string {
  const c = String.fromCodePoint(cp);
  if (JS_SYNTAX.has(c)) return `\\${c}`;
  return isControl(cp) ? `\\u{${hex(cp)}}` : c;
}

function rustClassLiteral(cp: number): string {
  const c = String.fromCodePoint(cp);
  if ('\\[]^-&~'.includes(c)) return `\\${c}`;
  return isControl(cp) ? `\\x{${hex(cp)}}` : c;
}

function jsClassLiteral(cp: number): string {
  const c = String.fromCodePoint(cp);
  if ('\\[]^-'.includes(c)) return `\\${c}`;
  return isControl(cp) ? `\\u{${hex(cp)}}` : c;
}

function compiles(src: string, flags: string): boolean {
  try {
    new RegExp(src, flags);
    return true;
  } catch {
    return false;
  }
}

const TEST_CACHE = new Map<string, boolean>();
/** Whether a JS class-like source matches a character (cached: the same classes recur). */
function classMatches(jsClass: string, ch: '\n' | '\r'): boolean {
  const key = `${ch}${jsClass}`;
  let hit = TEST_CACHE.get(key);
  if (hit === undefined) {
    hit = new RegExp(jsClass, 'u').test(ch);
    if (TEST_CACHE.size < 1000) TEST_CACHE.set(key, hit);
  }
  return hit;
}

type Last = 'none' | 'atom' | 'assertion' | 'quantifier' | 'lazy';

class Translator {
  private readonly cps: number[];
  private i = 0;
  rust = '';
  jsLine = '';
  jsText = '';
  canMatchNewline = false;
  private last: Last = 'none';
  private depth = 0;
  /** A `$` was written, and nothing but `$` and `^` since (see `^`). */
  private afterDollar = false;

  constructor(
    private readonly pattern: string,
    private readonly multiline: boolean,
  ) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0)!);
  }

  private peek(k = 0): string | undefined {
    const cp = this.cps[this.i + k];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  private next(): string | undefined {
    const c = this.peek();
    if (c !== undefined) this.i++;
    return c;
  }

  private fail(msg: string): never {
    throw new PatternError(`${msg} (in the pattern ${JSON.stringify(this.pattern)})`);
  }

  private emit(rust: string, jsLine: string, jsText: string, last: Last): void {
    if (rust !== '^' && rust !== '$') this.afterDollar = false;
    this.rust += rust;
    this.jsLine += jsLine;
    this.jsText += jsText;
    this.last = last;
  }

  private emitLiteral(cp: number): void {
    if (cp === 10) this.canMatchNewline = true;
    if ((cp === 10 || cp === 13) && !this.multiline) this.lineTerminator(cp);
    this.emit(rustLiteral(cp), jsLiteral(cp), jsLiteral(cp), 'atom');
  }

  /** rg (line mode, --crlf) refuses a pattern that names \n or \r outright. */
  private lineTerminator(cp: number): never {
    this.fail(`the literal "${cp === 10 ? '\\n' : '\\r'}" is not allowed in a regex unless multiline is true`);
  }

  /**
   * A class-like atom. Without multiline, rg (--crlf) removes \r and \n
   * from every class, so the per-line JS form refuses \r explicitly.
   */
  private emitClass(rust: string, js: string): void {
    if (classMatches(js, '\n')) this.canMatchNewline = true;
    const line = !this.multiline && classMatches(js, '\r') ? `(?:(?!\\r)${js})` : js;
    this.emit(rust, line, js, 'atom');
  }

  run(): void {
    for (let c = this.next(); c !== undefined; c = this.next()) {
      switch (c) {
        case '\\':
          this.escape();
          break;
        case '.':
          if (this.multiline) this.canMatchNewline = true;
          this.emit('.', this.multiline ? '[^\\n]' : '[^\\n\\r]', this.multiline ? '[^]' : '[^\\n]', 'atom');
          break;
        case '^':
          // rg 13 (Rust regex before 1.9: its DFA) never matches a `^` right after a `$` (`$^`, `$$^`), not even
          // on an empty line, where both hold; `^$` it does match. The JS side follows rg. (With `\b` or `\B`
          // between them, rg's answer depends on the file: its DFA gives up on non-ASCII text, and its NFA
          // matches the empty line; left as it is.)
          if (this.afterDollar) this.emit('^', '(?!)', '(?!)', 'assertion');
          else this.emit('^', '^', '(?<![^\\n])', 'assertion');
          break;
        case '$':
          this.emit('$', '(?:\\r??$)', '(?:\\r??(?![^\\n]))', 'assertion');
          this.afterDollar = true;
          break;
        case '[':
          this.charClass();
          break;
        case '(':
          this.group();
          break;
        case ')':
          if (this.depth === 0) this.fail('unopened group: an unescaped ")" (write \\) for a literal parenthesis)');
          this.depth--;
          this.emit(')', ')', ')', 'atom');
          break;
        case '|':
          this.emit('|', '|', '|', 'none');
          break;
        case '*':
        case '+':
        case '?':
          this.quantifier(c);
          break;
        case '{':
          this.counted();
          break;
        default:
          this.emitLiteral(c.codePointAt(0)!);
      }
    }
    if (this.depth > 0) this.fail('unclosed group: a "(" without its ")"');
  }

  private quantifier(q: string): void {
    if (this.last === 'lazy' || (this.last === 'quantifier' && q !== '?')) this.fail(`a repetition operator "${q}" follows another one`);
    if (this.last === 'quantifier' && q === '?') {
      this.emit('?', '?', '?', 'lazy');
      return;
    }
    if (this.last === 'none') this.fail(`the repetition operator "${q}" has nothing to repeat (write \\${q} for a literal "${q}")`);
    if (this.last === 'assertion') this.fail(`the repetition operator "${q}" follows an anchor or a word boundary, which cannot be repeated`);
    this.emit(q, q, q, 'quantifier');
  }

  private counted(): void {
    let body = '';
    for (let c = this.next(); c !== undefined && c !== '}'; c = this.next()) body += c;
    const m = /^(\d+)(,(\d*))?$/.exec(body);
    if (!m || this.cps[this.i - 1] !== '}'.codePointAt(0)) {
      this.fail('a "{" must start a counted repetition like {2}, {2,} or {2,5} (write \\{ for a literal brace)');
    }
    const lo = Number(m[1]);
    const hi = m[3] === undefined ? lo : m[3] === '' ? undefined : Number(m[3]);
    if (lo > 1000 || (hi !== undefined && hi > 1000)) this.fail('repetition counts above 1000 are not supported');
    if (hi !== undefined && hi < lo) this.fail(`invalid counted repetition {${body}}: the minimum is larger than the maximum`);
    if (this.last === 'lazy' || this.last === 'quantifier') this.fail(`a counted repetition {${body}} follows another repetition`);
    if (this.last === 'none') this.fail(`the counted repetition {${body}} has nothing to repeat (write \\{ for a literal brace)`);
    if (this.last === 'assertion') this.fail(`the counted repetition {${body}} follows an anchor or a word boundary`);
    const q = `{${body}}`;
    this.emit(q, q, q, 'quantifier');
  }

  private group(): void {
    if (this.peek() !== '?') {
      this.depth++;
      this.emit('(', '(', '(', 'none');
      return;
    }
    const rest = this.cps.slice(this.i, this.i + 4).map((cp) => String.fromCodePoint(cp)).join('');
    if (rest.startsWith('?:')) {
      this.i += 2;
      this.depth++;
      this.emit('(?:', '(?:', '(?:', 'none');
      return;
    }
    if (rest.startsWith('?=') || rest.startsWith('?!') || rest.startsWith('?<=') || rest.startsWith('?<!')) {
      this.fail('look-around such as (?=…), (?!…), (?<=…) and (?<!…) is not supported: ripgrep\'s regex engine has none');
    }
    const named = /^\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(this.restString());
    if (named) {
      this.i += Array.from(named[0]).length;
      this.depth++;
      this.emit('(?:', '(?:', '(?:', 'none');
      return;
    }
    this.fail('inline flags and other "(?" groups are not supported (use the -i parameter for case-insensitive search, (?:…) to group)');
  }

  private restString(): string {
    return this.cps.slice(this.i).map((cp) => String.fromCodePoint(cp)).join('');
  }

  /** `\` outside a class. */
  private escape(): void {
    const c = this.next();
    if (c === undefined) this.fail('the pattern ends with an unescaped "\\"');
    const cls = CLASS_ESCAPES[c];
    if (cls) return this.emitClass(cls.rust, cls.js);
    if (c === 'b') return this.emit('\\b', JS_BOUNDARY, JS_BOUNDARY, 'assertion');
    if (c === 'B') return this.emit('\\B', JS_NOT_BOUNDARY, JS_NOT_BOUNDARY, 'assertion');
    if (c === 'p' || c === 'P') {
      const p = this.property(c === 'P');
      return this.emitClass(p.rust, p.js);
    }
    const cp = this.charEscape(c);
    this.emitLiteral(cp);
  }

  /** An escape that stands for one character (after the `\`); fails on others. */
  private charEscape(c: string): number {
    if (Object.hasOwn(CHAR_ESCAPES, c)) return CHAR_ESCAPES[c]!;
    if (c === 'x' || c === 'u' || c === 'U') {
      let digits: string;
      if (this.peek() === '{') {
        this.next();
        digits = '';
        for (let d = this.next(); d !== '}'; d = this.next()) {
          if (d === undefined) this.fail(`unclosed \\${c}{…} escape`);
          digits += d;
        }
      } else {
        const n = c === 'x' ? 2 : c === 'u' ? 4 : 8;
        digits = '';
        for (let k = 0; k < n; k++) digits += this.next() ?? '';
      }
      if (!/^[0-9A-Fa-f]{1,8}$/.test(digits)) this.fail(`invalid hexadecimal escape \\${c}${digits}`);
      const cp = parseInt(digits, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) this.fail(`\\${c}${digits} is not a Unicode scalar value`);
      return cp;
    }
    if (/^[0-9]$/.test(c)) this.fail('backreferences and octal escapes (\\1, \\0) are not supported: ripgrep\'s regex engine has none');
    if (c === 'k') this.fail('backreferences (\\k<name>) are not supported: ripgrep\'s regex engine has none');
    if (c === '<' || c === '>') this.fail(`\\${c} is not supported; use \\b for a word boundary`);
    if (/^[A-Za-z]$/.test(c)) this.fail(`the escape \\${c} is not supported by both search engines`);
    const cp = c.codePointAt(0)!;
    if (cp >= 0x80) this.fail(`the escape \\${c} is not valid (only ASCII punctuation may be escaped)`);
    // Escaped ASCII punctuation (or a space) is that character.
    return cp;
  }

  private property(negated: boolean): { rust: string; js: string } {
    let name: string;
    if (this.peek() === '{') {
      this.next();
      name = '';
      for (let d = this.next(); d !== '}'; d = this.next()) {
        if (d === undefined) this.fail('unclosed \\p{…} escape');
        name += d;
      }
    } else {
      const d = this.next();
      if (d === undefined || !/^[A-Za-z]$/.test(d)) this.fail('\\p must be followed by a letter or {Name}');
      name = d;
    }
    const p = negated ? 'P' : 'p';
    const rust = `\\${p}{${name}}`;
    const eq = /^\s*(General_Category|gc|Script|sc|Script_Extensions|scx)\s*[=:]\s*([A-Za-z_]+)\s*$/.exec(name);
    let js: string | undefined;
    if (eq) {
      const key = eq[1]!;
      const js1 = `\\${p}{${key}=${eq[2]}}`;
      if (compiles(js1, 'u')) js = js1;
    } else if (/^[A-Za-z_]+$/.test(name)) {
      if (compiles(`\\p{gc=${name}}`, 'u') || ['Any', 'ASCII', 'Assigned', 'Alphabetic', 'Uppercase', 'Lowercase', 'White_Space', 'Emoji'].includes(name)) {
        js = `\\${p}{${name}}`;
      } else if (compiles(`\\p{Script=${name}}`, 'u')) {
        // A bare script name is the Script property in Rust's regex (not Script_Extensions).
        js = `\\${p}{Script=${name}}`;
      }
    }
    if (!js || !compiles(js, 'u')) {
      this.fail(`the Unicode property \\${p}{${name}} is not supported (use a general category like \\p{L}, \\p{Lu}, a script like \\p{Greek}, or \\p{Alphabetic})`);
    }
    return { rust, js };
  }

  /** `[` … `]` with Rust's rules. */
  private charClass(): void {
    let rust = '[';
    let js = '[';
    if (this.peek() === '^') {
      this.next();
      rust += '^';
      js += '^';
    }
    const negated = rust.endsWith('^');
    let first = true;
    // rg removes \r and \n from classes in line mode; a class of nothing else is refused.
    let onlyLineTerminators = true;
    for (;;) {
      const c = this.next();
      if (c === undefined) this.fail('unclosed character class: a "[" without its "]"');
      if (c === ']' && !first) break;
      const pair = c + (this.peek() ?? '');
      if (!first && (pair === '&&' || pair === '--' || pair === '~~')) {
        this.fail(`class set operations ("${pair}") are not supported`);
      }
      let single: number | undefined;
      if (c === '[') {
        if (this.peek() === ':') {
          const m = /^:(\^?)([a-z]+):\]/.exec(this.restString());
          if (!m) this.fail('nested character classes are not supported (escape a literal "[" as \\[)');
          if (m[1]) this.fail(`negated POSIX classes like [:^${m[2]}:] are not supported`);
          const body = POSIX[m[2]!];
          if (!body) this.fail(`unknown POSIX class [:${m[2]}:]`);
          this.i += Array.from(m[0]).length;
          rust += `[:${m[2]}:]`;
          js += body;
          onlyLineTerminators = false;
        } else {
          this.fail('nested character classes are not supported (escape a literal "[" as \\[)');
        }
      } else if (c === '\\') {
        const e = this.next();
        if (e === undefined) this.fail('the pattern ends with an unescaped "\\"');
        const cls = CLASS_ESCAPES[e];
        if (cls) {
          if (!cls.inClass) this.fail(`\\${e} inside a character class is not supported (write the class the other way round, e.g. [^\\w…])`);
          rust += cls.rust;
          js += cls.js.startsWith('[') ? cls.js.slice(1, -1) : cls.js;
          onlyLineTerminators = false;
        } else if (e === 'p' || e === 'P') {
          const p = this.property(e === 'P');
          rust += p.rust;
          js += p.js;
          onlyLineTerminators = false;
        } else if (e === 'b' || e === 'B') {
          this.fail(`\\${e} is not allowed inside a character class`);
        } else {
          single = this.charEscape(e);
        }
      } else {
        single = c.codePointAt(0)!;
      }
      if (single !== undefined) {
        // A range `a-z`: this character, then "-" and one more character (not "]").
        if (this.peek() === '-' && this.peek(1) !== undefined && this.peek(1) !== ']') {
          this.next();
          let endCp: number;
          const e = this.next()!;
          if (e === '\\') {
            const x = this.next();
            if (x === undefined) this.fail('the pattern ends with an unescaped "\\"');
            if (CLASS_ESCAPES[x] || x === 'p' || x === 'P') this.fail('a class range must end with a single character');
            endCp = this.charEscape(x);
          } else if (e === '[') {
            this.fail('a class range must end with a single character');
          } else endCp = e.codePointAt(0)!;
          if (endCp < single) this.fail(`invalid class range ${String.fromCodePoint(single)}-${String.fromCodePoint(endCp)}: the start is after the end`);
          rust += `${rustClassLiteral(single)}-${rustClassLiteral(endCp)}`;
          js += `${jsClassLiteral(single)}-${jsClassLiteral(endCp)}`;
          if (!(single >= 10 && endCp <= 10) && !(single >= 13 && endCp <= 13)) onlyLineTerminators = false;
        } else {
          rust += rustClassLiteral(single);
          js += jsClassLiteral(single);
          if (single !== 10 && single !== 13) onlyLineTerminators = false;
        }
      }
      first = false;
    }
    rust += ']';
    js += ']';
    if (!this.multiline && !negated && onlyLineTerminators) this.lineTerminator(js.includes('\\r') || js.includes('{d}') ? 13 : 10);
    this.emitClass(rust, js);
  }
}

/** Parses and translates a pattern; throws PatternError with a message a model can act on. */
export function compilePattern(pattern: string, opts: { multiline: boolean; ignoreCase: boolean }): CompiledPattern {
  const t = new Translator(pattern, opts.multiline);
  t.run();
  const flags = opts.ignoreCase ? 'iu' : 'u';
  for (const src of [t.jsLine, t.jsText]) {
    try {
      new RegExp(src, flags);
    } catch (e) {
      const msg = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
      throw new PatternError(`Invalid regex: ${msg} (in the pattern ${JSON.stringify(pattern)})`);
    }
  }
  return { rust: t.rust, jsLine: t.jsLine, jsText: t.jsText, flags, canMatchNewline: t.canMatchNewline };
}
