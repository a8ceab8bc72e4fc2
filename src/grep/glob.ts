/**
 * Globs with ripgrep's semantics (the Rust `globset` crate as ripgrep 13
 * uses it for .gitignore lines, `--glob` and file types), so that the
 * JavaScript engine filters exactly the files rg filters:
 *
 * - `*` and `?` never match `/` (literal_separator); `[...]` classes (`!` or
 *   `^` negates, no escapes inside) may; `\` escapes the next character.
 * - `**` is recursive only as a whole component (`**∕a`, `a∕**`, `a∕**∕b`);
 *   elsewhere it is `*`. A glob that is just `**` matches everything.
 * - `{a,b}` alternates (not nested). A stray `}` is an empty group, as in rg 13.
 * - Matching is on bytes: globset compiles with Unicode off, so `?` is one
 *   byte of a UTF-8 path. Paths are therefore matched as latin1 strings of
 *   their UTF-8 bytes, and non-ASCII literals become byte escapes.
 */
import v8 from 'node:v8';

export class GlobError extends Error {
  constructor(
    readonly glob: string,
    reason: string,
  ) {
    super(`error parsing glob '${glob}': ${reason}`);
    this.name = 'GlobError';
  }
}

type Token =
  | { t: 'lit'; c: string }
  | { t: 'any' }
  | { t: 'star' }
  | { t: 'rprefix' }
  | { t: 'rsuffix' }
  | { t: 'rzero' }
  | { t: 'class'; negated: boolean; ranges: Array<[string, string]> }
  | { t: 'alt'; alts: Token[][] };

function parse(glob: string): Token[] {
  const chars = Array.from(glob);
  let i = 0;
  const stack: Token[][] = [[]];
  const top = (): Token[] => stack[stack.length - 1]!;
  let prev: string | undefined;
  const bump = (): string | undefined => {
    const c = chars[i++];
    prev = cur;
    cur = c;
    return c;
  };
  let cur: string | undefined;
  const peek = (): string | undefined => chars[i];

  const parseStar = (): void => {
    const before = prev;
    if (peek() !== '*') {
      top().push({ t: 'star' });
      return;
    }
    bump();
    if (top().length === 0) {
      const next = peek();
      if (next !== undefined && next !== '/') {
        top().push({ t: 'star' }, { t: 'star' });
      } else {
        top().push({ t: 'rprefix' });
        if (next === '/') bump();
      }
      return;
    }
    if (before !== '/') {
      if (stack.length <= 1 || (before !== ',' && before !== '{')) {
        top().push({ t: 'star' }, { t: 'star' });
        return;
      }
    }
    let isSuffix: boolean;
    const next = peek();
    if (next === undefined) isSuffix = true;
    else if ((next === ',' || next === '}') && stack.length >= 2) isSuffix = true;
    else if (next === '/') {
      bump();
      isSuffix = false;
    } else {
      top().push({ t: 'star' }, { t: 'star' });
      return;
    }
    // Replaces the separator before `**` (there is always a token here).
    const last = top().pop();
    if (last && (last.t === 'rprefix' || last.t === 'rsuffix')) top().push(last);
    else top().push(isSuffix ? { t: 'rsuffix' } : { t: 'rzero' });
  };

  const parseClass = (): void => {
    const ranges: Array<[string, string]> = [];
    let negated = false;
    if (peek() === '!' || peek() === '^') {
      bump();
      negated = true;
    }
    let first = true;
    let inRange = false;
    for (;;) {
      const c = bump();
      if (c === undefined) throw new GlobError(glob, 'unclosed character class; missing \']\'');
      if (c === ']') {
        if (first) ranges.push([']', ']']);
        else break;
      } else if (c === '-') {
        if (first) ranges.push(['-', '-']);
        else if (inRange) {
          const r = ranges[ranges.length - 1]!;
          r[1] = '-';
          if (r[1].codePointAt(0)! < r[0].codePointAt(0)!) throw new GlobError(glob, `invalid range; '${r[0]}' > '${r[1]}'`);
          inRange = false;
        } else inRange = true;
      } else {
        if (inRange) {
          const r = ranges[ranges.length - 1]!;
          r[1] = c;
          if (r[1].codePointAt(0)! < r[0].codePointAt(0)!) throw new GlobError(glob, `invalid range; '${r[0]}' > '${r[1]}'`);
        } else ranges.push([c, c]);
        inRange = false;
      }
      first = false;
    }
    if (inRange) ranges.push(['-', '-']);
    top().push({ t: 'class', negated, ranges });
  };

  for (let c = bump(); c !== undefined; c = bump()) {
    switch (c) {
      case '?':
        top().push({ t: 'any' });
        break;
      case '*':
        parseStar();
        break;
      case '[':
        parseClass();
        break;
      case '{':
        if (stack.length > 1) throw new GlobError(glob, 'nested alternate groups are not allowed');
        stack.push([]);
        break;
      case '}': {
        const alts: Token[][] = [];
        while (stack.length >= 2) alts.push(stack.pop()!);
        top().push({ t: 'alt', alts });
        break;
      }
      case ',':
        if (stack.length <= 1) top().push({ t: 'lit', c: ',' });
        else stack.push([]);
        break;
      case '\\': {
        const n = bump();
        if (n === undefined) throw new GlobError(glob, 'dangling \'\\\'');
        top().push({ t: 'lit', c: n });
        break;
      }
      default:
        top().push({ t: 'lit', c });
    }
  }
  if (stack.length > 1) throw new GlobError(glob, "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)");
  return stack[0]!;
}

/** A character as the regex source of its UTF-8 bytes (the haystack is latin1 bytes). */
function escapedBytes(c: string): string {
  const cp = c.codePointAt(0)!;
  if (cp < 0x80) {
    if (/[A-Za-z0-9_]/.test(c)) return c;
    return `\\x${cp.toString(16).padStart(2, '0')}`;
  }
  let out = '';
  for (const b of Buffer.from(c, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
  return out;
}

function tokensToRegex(tokens: readonly Token[], literalSeparator: boolean): string {
  let re = '';
  for (const tok of tokens) {
    switch (tok.t) {
      case 'lit':
        re += escapedBytes(tok.c);
        break;
      case 'any':
        re += literalSeparator ? '[^/]' : '[^\\n]';
        break;
      case 'star':
        re += literalSeparator ? '[^/]*' : '[^\\n]*';
        break;
      case 'rprefix':
        re += '(?:/?|[^\\n]*/)';
        break;
      case 'rsuffix':
        re += '/[^\\n]*';
        break;
      case 'rzero':
        re += '(?:/|/[^\\n]*/)';
        break;
      case 'class': {
        // The same text globset emits: each endpoint as its escaped UTF-8 bytes.
        re += tok.negated ? '[^' : '[';
        for (const [a, b] of tok.ranges) re += a === b ? escapedBytes(a) : `${escapedBytes(a)}-${escapedBytes(b)}`;
        re += ']';
        break;
      }
      case 'alt': {
        const parts = tok.alts.map((a) => tokensToRegex(a, literalSeparator)).filter((s) => s.length > 0);
        if (parts.length > 0) re += `(?:${parts.join('|')})`;
        break;
      }
    }
  }
  return re;
}

/**
 * V8's linear-time RegExp engine (the `l` flag), which globs are compiled for
 * where it takes them: V8's default engine backtracks, and a glob with several
 * stars (`*a*a*a*a*c`, in a `.gitignore` the agent can write, or in Grep's
 * `glob`) against a long name took seconds per file on the event loop, growing
 * with each star. The glob's regex (classes, stars, alternation; no
 * backreference or lookaround) is within what that engine takes; should one
 * not be, it is compiled for the default engine.
 */
let linearEngine = false;
try {
  v8.setFlagsFromString('--enable-experimental-regexp-engine');
  linearEngine = new RegExp('^a*b$', 'l').test('aab');
} catch {
  linearEngine = false;
}

/** Compiles a glob to a RegExp over latin1-encoded UTF-8 paths. Throws GlobError. */
export function compileGlob(glob: string, opts: { literalSeparator: boolean }): RegExp {
  const tokens = parse(glob);
  if (tokens.length === 1 && tokens[0]!.t === 'rprefix') return /^[^\n]*$/;
  const source = `^${tokensToRegex(tokens, opts.literalSeparator)}$`;
  if (linearEngine) {
    try {
      return new RegExp(source, 'l');
    } catch {
      /* not within the linear engine: the default one below */
    }
  }
  try {
    return new RegExp(source);
  } catch (e) {
    throw new GlobError(glob, (e as Error).message);
  }
}

const ASCII = /^[\x00-\x7f]*$/;

/** The form compiled globs match against: UTF-8 bytes as latin1 characters. */
export function globSubject(p: string): string {
  return ASCII.test(p) ? p : Buffer.from(p, 'utf8').toString('latin1');
}

/** One line of a .gitignore-style file (or a `--glob`), parsed as ripgrep's ignore crate does. */
export interface IgnoreGlob {
  /** `!pattern`: re-includes. */
  whitelist: boolean;
  /** `pattern/`: only directories. */
  onlyDir: boolean;
  re: RegExp;
  original: string;
}

/**
 * Parses one gitignore line; undefined for blank lines and comments. Throws
 * GlobError for a line whose glob does not parse (rg skips such a line in an
 * ignore file and refuses it as `--glob`).
 */
export function parseIgnoreLine(raw: string): IgnoreGlob | undefined {
  let line = raw;
  if (line.startsWith('#')) return undefined;
  if (!line.endsWith('\\ ')) line = line.replace(/\s+$/u, '');
  if (line.length === 0) return undefined;
  let whitelist = false;
  let absolute = false;
  if (line.startsWith('\\!') || line.startsWith('\\#')) {
    line = line.slice(1);
    absolute = line.startsWith('/');
  } else {
    if (line.startsWith('!')) {
      whitelist = true;
      line = line.slice(1);
    }
    if (line.startsWith('/')) {
      line = line.slice(1);
      absolute = true;
    }
  }
  let onlyDir = false;
  if (line.endsWith('/')) {
    onlyDir = true;
    line = line.slice(0, -1);
    if (line.endsWith('\\')) line = line.slice(0, -1);
  }
  let actual = line;
  if (!absolute && !line.includes('/')) {
    if (!(actual.startsWith('**/') || actual === '**')) actual = `**/${actual}`;
  }
  if (actual.endsWith('/**')) actual = `${actual}/*`;
  return { whitelist, onlyDir, re: compileGlob(actual, { literalSeparator: true }), original: raw };
}

export type MatchResult = 'ignore' | 'whitelist' | undefined;

/** A set of gitignore globs rooted at a directory: the last matching glob wins. */
export class IgnoreMatcher {
  constructor(
    /** Absolute directory the globs are relative to. */
    readonly dir: string,
    readonly globs: readonly IgnoreGlob[],
  ) {}

  get empty(): boolean {
    return this.globs.length === 0;
  }

  /** `rel` is the path relative to `dir`, already in globSubject form. */
  match(rel: string, isDir: boolean): MatchResult {
    for (let i = this.globs.length - 1; i >= 0; i--) {
      const g = this.globs[i]!;
      if (g.onlyDir && !isDir) continue;
      if (g.re.test(rel)) return g.whitelist ? 'whitelist' : 'ignore';
    }
    return undefined;
  }

  /** Parses an ignore file's text; lines that do not parse are skipped, as rg does. */
  static fromText(dir: string, text: string): IgnoreMatcher {
    const globs: IgnoreGlob[] = [];
    for (const line of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
      try {
        const g = parseIgnoreLine(line);
        if (g) globs.push(g);
      } catch {
        /* an unparsable line is ignored */
      }
    }
    return new IgnoreMatcher(dir, globs);
  }
}

/** Escapes a file name so that it is a literal glob. */
export function escapeGlobLiteral(name: string): string {
  return name.replace(/[\\*?[\]{}!,# ]/g, (c) => `\\${c}`);
}
