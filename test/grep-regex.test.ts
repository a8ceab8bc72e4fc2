/**
 * Units of Grep's two engines' shared definitions: the regex dialect
 * (what is translated, what is refused) and ripgrep's glob semantics.
 */
import { describe, expect, it } from 'vitest';
import { Overrides, splitGlobParam } from '../src/grep/filter.js';
import { compileGlob, globSubject, parseIgnoreLine } from '../src/grep/glob.js';
import { compilePattern, PatternError } from '../src/grep/regex.js';

const line = (pattern: string, opts: { multiline?: boolean; ignoreCase?: boolean } = {}) =>
  new RegExp(compilePattern(pattern, { multiline: opts.multiline ?? false, ignoreCase: opts.ignoreCase ?? false }).jsLine, opts.ignoreCase ? 'iu' : 'u');

describe('regex dialect', () => {
  it('gives \\d, \\w, \\s and \\b their Unicode meaning, as Rust does', () => {
    expect(line('^\\d+$').test('٣٤٥')).toBe(true);
    expect(line('^\\w+$').test('naïve_über')).toBe(true);
    expect(line('\\s').test('a\u00a0b')).toBe(true);
    expect(line('\\bcafé\\b').test('un café noir')).toBe(true);
    expect(line('\\bfé').test('café')).toBe(false);
  });

  it('makes . and classes skip \\r without multiline (rg --crlf), and $ match before \\r\\n', () => {
    expect(line('a.b').test('a\rb')).toBe(false);
    expect(line('a[^x]b').test('a\rb')).toBe(false);
    expect(line('a\\sb').test('a\rb')).toBe(false);
    expect(line('end$').test('the end\r')).toBe(true);
    expect(line('a.b', { multiline: true }).test('a\rb')).toBe(true);
  });

  it('translates Rust-only spellings', () => {
    expect(line('[[:digit:]]{2}').test('x42')).toBe(true);
    expect(line('\\x{1F600}').test('😀')).toBe(true);
    expect(line('\\pL').test('é')).toBe(true);
    expect(line('(?P<n>ab)').test('ab')).toBe(true);
    expect(line('\\/\\:').test('/:')).toBe(true);
    expect(line('a]b}').test('a]b}')).toBe(true);
    expect(compilePattern('\\/\\:', { multiline: false, ignoreCase: false }).rust).toBe('/:');
    expect(compilePattern('(?<n>x)', { multiline: false, ignoreCase: false }).rust).toBe('(?:x)');
  });

  it('knows which patterns can match a newline', () => {
    const nl = (p: string) => compilePattern(p, { multiline: true, ignoreCase: false }).canMatchNewline;
    expect(nl('foo')).toBe(false);
    expect(nl('a\\nb')).toBe(true);
    expect(nl('a.b')).toBe(true);
    expect(nl('a\\sb')).toBe(true);
    expect(nl('[^x]')).toBe(true);
    expect(nl('\\S+')).toBe(false);
    expect(nl('[[:space:]]')).toBe(true);
  });

  it.each([
    ['foo(?=bar)', /look-around/],
    ['(?<!x)y', /look-around/],
    ['(a)\\1', /backreferences/],
    ['\\k<n>', /backreferences/],
    ['(?i)x', /-i parameter/],
    ['\\Afoo', /not supported by both/],
    ['\\<word\\>', /use \\b/],
    ['[a[b]]', /nested character classes/],
    ['[a&&b]', /set operations/],
    ['[\\W]', /inside a character class/],
    ['a{,3}', /counted repetition/],
    ['a{1001}', /above 1000/],
    ['^*', /anchor/],
    ['*a', /nothing to repeat/],
    ['a**', /follows another/],
    ['(a', /unclosed group/],
    ['a)', /unopened group/],
    ['[abc', /unclosed character class/],
    ['\\p{Klingon}', /Unicode property/],
    ['a\\nb', /unless multiline/],
    ['a\\rb', /unless multiline/],
    ['[\\r\\n]', /unless multiline/],
    ['x\\', /ends with/],
  ])('refuses %s', (pattern, msg) => {
    expect(() => compilePattern(pattern, { multiline: false, ignoreCase: false })).toThrow(PatternError);
    expect(() => compilePattern(pattern, { multiline: false, ignoreCase: false })).toThrow(msg);
  });
});

describe('globs with ripgrep’s semantics', () => {
  const m = (glob: string, p: string, literalSeparator = true) => compileGlob(glob, { literalSeparator }).test(globSubject(p));

  it('keeps * and ? within a component, and ** to whole components', () => {
    expect(m('*.ts', 'a.ts')).toBe(true);
    expect(m('*.ts', 'src/a.ts')).toBe(false);
    expect(m('**/*.ts', 'src/deep/a.ts')).toBe(true);
    expect(m('**/*.ts', 'a.ts')).toBe(true);
    expect(m('src/**', 'src/a/b')).toBe(true);
    expect(m('src/**', 'src')).toBe(false);
    expect(m('a/**/b', 'a/b')).toBe(true);
    expect(m('a/**/b', 'a/x/y/b')).toBe(true);
    expect(m('a**b', 'a/b')).toBe(false);
    expect(m('**', 'any/thing')).toBe(true);
  });

  it('supports classes, alternation and escapes, and matches bytes', () => {
    expect(m('[!a]x', 'bx')).toBe(true);
    expect(m('[!a]x', 'ax')).toBe(false);
    expect(m('*.{ts,tsx}', 'a.tsx')).toBe(true);
    expect(m('\\*', '*')).toBe(true);
    expect(m('?.txt', 'é.txt')).toBe(false);
    expect(m('??.txt', 'é.txt')).toBe(true);
    expect(() => compileGlob('{a', { literalSeparator: true })).toThrow(/unclosed alternate/);
  });

  it('parses gitignore lines as the ignore crate does', () => {
    const a = parseIgnoreLine('/build/')!;
    expect([a.whitelist, a.onlyDir, a.re.test('build'), a.re.test('x/build')]).toEqual([false, true, true, false]);
    const b = parseIgnoreLine('!keep.log')!;
    expect([b.whitelist, b.re.test('deep/keep.log')]).toEqual([true, true]);
    expect(parseIgnoreLine('# comment')).toBeUndefined();
    expect(parseIgnoreLine('   ')).toBeUndefined();
    expect(parseIgnoreLine('\\#hash')!.re.test('#hash')).toBe(true);
    expect(parseIgnoreLine('trailing   ')!.re.test('trailing')).toBe(true);
    expect(parseIgnoreLine('doc/*.md')!.re.test('doc/a.md')).toBe(true);
    expect(parseIgnoreLine('doc/*.md')!.re.test('x/doc/a.md')).toBe(false);
  });

  it('treats --glob as an override: includes win over ignore rules, files outside every include are out', () => {
    const o = new Overrides(['!.git', '*.ts', '!*.test.ts']);
    expect(o.match('a.ts', false)).toBe('whitelist');
    expect(o.match('a.test.ts', false)).toBe('ignore');
    expect(o.match('a.js', false)).toBe('ignore');
    expect(o.match('src', true)).toBeUndefined();
    expect(o.match('.git', true)).toBe('ignore');
  });

  it('splits the glob parameter as Claude Code does', () => {
    expect(splitGlobParam('*.ts,*.js  *.{md,txt}')).toEqual(['*.ts', '*.js', '*.{md,txt}']);
    expect(splitGlobParam(undefined)).toEqual([]);
  });
});
