/**
 * The two Grep engines give the same results: every query of a table runs
 * through POST /execute twice, once with `grep.engine: "rg"` and once with
 * `"js"`, over the fixture corpus (nested directories, several file types,
 * Unicode, CRLF, UTF-16, a BOM, binary files, .gitignore/.ignore/.rgignore,
 * a nested repository, hidden files, long lines), and the texts must be
 * identical. A second table checks the regex dialect on a file of awkward
 * lines. Both engines are forced, so this needs rg installed (CI installs it);
 * rg runs behind a script that logs its runs, so that a multiline row fails
 * if rg did not search it with -U (the JS engine compared with itself).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { grepApp, loggedRg, makeCorpus, ranMultiline, runGrep, type RgRuns } from './helpers-grep.js';

type Query = Record<string, unknown>;

const CORPUS_QUERIES: Query[] = [
  { pattern: 'TODO' },
  { pattern: 'TODO', output_mode: 'content' },
  { pattern: 'todo', '-i': true, output_mode: 'count' },
  { pattern: 'TODO', output_mode: 'content', '-n': false },
  { pattern: 'function\\s+\\w+', output_mode: 'content', '-C': 1 },
  { pattern: 'function\\s+\\w+', output_mode: 'content', '-B': 2, '-A': 0 },
  { pattern: 'return', output_mode: 'content', '-A': 1, '-n': false },
  { pattern: 'import', glob: '*.{ts,tsx}', output_mode: 'content' },
  { pattern: 'TODO', glob: '*.{ts,tsx} *.go', output_mode: 'count' },
  { pattern: 'TODO', glob: '*.md,*.sh' },
  { pattern: 'TODO', glob: 'src/**', output_mode: 'content' },
  { pattern: 'TODO', glob: '!src/**' },
  { pattern: 'secret', glob: '!*.md', output_mode: 'content' },
  { pattern: 'TODO', glob: '*.cache' },
  { pattern: 'TODO', glob: '**/c/*.txt', output_mode: 'content' },
  { pattern: 'TODO', type: 'py', output_mode: 'content', '-A': 2 },
  { pattern: 'TODO', type: 'make' },
  { pattern: 'TODO', type: 'ts', glob: '*.md' },
  { pattern: 'TODO', type: 'sh', output_mode: 'count' },
  { pattern: 'café|naïve', output_mode: 'content' },
  { pattern: '\\bπ\\w*', output_mode: 'content' },
  { pattern: 'ω', '-i': true, output_mode: 'content' },
  { pattern: '\\p{Greek}+', output_mode: 'content' },
  { pattern: '\\p{Lu}\\p{Ll}+', output_mode: 'count' },
  { pattern: '[^\\x00-\\x7F]+', output_mode: 'count' },
  { pattern: '\\d+', output_mode: 'content', glob: 'unicode.txt' },
  { pattern: '[[:upper:]]{3,}', output_mode: 'count' },
  { pattern: 'end$', output_mode: 'content' },
  { pattern: 'line$', output_mode: 'content', path: 'src/windows.txt' },
  { pattern: 'mid.carriage', output_mode: 'content' },
  { pattern: 'mid.carriage', multiline: true, output_mode: 'content' },
  { pattern: '^\\s*//', output_mode: 'count' },
  { pattern: '^$', output_mode: 'count' },
  { pattern: '', output_mode: 'count', head_limit: 0 },
  { pattern: '\\$\\d+\\.\\d\\d', output_mode: 'content' },
  { pattern: '\\/\\*', output_mode: 'content' },
  { pattern: 'interface\\{\\}', output_mode: 'content' },
  { pattern: '(?P<word>greet)\\(', output_mode: 'content' },
  { pattern: 'e\\u{301}', output_mode: 'content' },
  { pattern: 'struct \\{[\\s\\S]*?field', multiline: true, output_mode: 'content' },
  { pattern: 'struct \\{.*?field', multiline: true },
  { pattern: 'alpha\\nbeta', multiline: true, output_mode: 'count' },
  { pattern: 'alpha\\nbeta', multiline: true, output_mode: 'content', '-B': 1 },
  { pattern: 'beta$\\n^gamma', multiline: true, output_mode: 'content' },
  { pattern: '(?:alpha|beta)\\n(?:alpha|beta|gamma)', multiline: true, output_mode: 'content', '-C': 1 },
  { pattern: '\\n', multiline: true, output_mode: 'count', glob: '*.txt' },
  { pattern: 'TODO', multiline: true, output_mode: 'count' },
  { pattern: '.', head_limit: 5, offset: 3, output_mode: 'content' },
  { pattern: 'e', head_limit: 0 },
  { pattern: 'e', head_limit: 4, offset: 2 },
  { pattern: 'e', head_limit: 3, output_mode: 'count' },
  { pattern: 'TODO', offset: 1000 },
  { pattern: 'TODO', output_mode: 'content', '-C': 2, head_limit: 7 },
  { pattern: 'TODO', path: 'src/windows.txt', output_mode: 'content' },
  { pattern: 'TODO', path: 'build/out.js', output_mode: 'content' },
  { pattern: 'secret', path: '.hidden', output_mode: 'content' },
  { pattern: 'TODO', path: 'vendor' },
  { pattern: 'TODO', path: 'assets', output_mode: 'content' },
  { pattern: 'PNG|IHDR' },
  { pattern: 'utf16|∑', output_mode: 'content' },
  { pattern: 'byte order mark', output_mode: 'content' },
  { pattern: 'bundleEnd|tail', output_mode: 'content' },
  { pattern: 'blob|after', path: 'lib', output_mode: 'count' },
  { pattern: 'y{100}' },
  { pattern: 'x{20}', output_mode: 'content', '-C': 1 },
  { pattern: 'DEBUG|rotate|report|schema' },
];

/** Lines chosen to meet the places where Rust's and JS's regexes differ. */
const TRICKY_LINES = [
  'plain ascii line',
  'tab\tseparated\tvalues',
  'trailing spaces   ',
  'crlf line\r',
  'mid\rcarriage',
  'unicode digits ٣٤٥ and ４２ fullwidth',
  'nbsp\u00a0here and\u2003em space',
  'word boundary: naïve_café-x über',
  'ZWJ 👩‍💻 and e\u0301',
  'Ελληνικά κείμενα ΣΊΣΥΦΟΣ σίσυφος',
  'Kelvin \u212a k K; long s \u017f s S',
  'brackets [a] {b} (c) <d> ^caret$ dollar',
  'emoji 😀😁 astral 𝒳𝒴',
  'backslash \\ and slash /',
  '',
  '   ',
  'NEL\u0085here',
  'LS\u2028PS\u2029here',
  'BOM\ufeffinside',
  'ab\u00adsoft hyphen',
];

const TRICKY_PATTERNS: Query[] = [
  { pattern: '\\w+$' },
  { pattern: '\\d+' },
  { pattern: '\\D{3}\\d' },
  { pattern: '\\s+$' },
  { pattern: '\\S+\\s+\\S+$' },
  { pattern: '\\bx\\b' },
  { pattern: '\\bcaf' },
  { pattern: 'e\\b' },
  { pattern: '\\B\\w' },
  { pattern: '^\\S+$' },
  { pattern: '.$' },
  { pattern: '^.{4}$' },
  { pattern: 'd.c' },
  { pattern: '[[:punct:]]+' },
  { pattern: '[[:space:]]here' },
  { pattern: '[^\\w\\s]' },
  { pattern: '[\\w&&x]|-' },
  { pattern: '\\p{L}+\\s\\p{Nd}' },
  { pattern: '\\p{Emoji_Presentation}' },
  { pattern: '\\P{L}{4}' },
  { pattern: '[😀-😁]' },
  { pattern: '\\u{1D4B3}' },
  { pattern: '\\x{212A}' },
  { pattern: 'σίσυφος', '-i': true },
  { pattern: 'k', '-i': true },
  { pattern: 'ſ', '-i': true },
  { pattern: '[a-z]+', '-i': true },
  { pattern: '\\[a\\] \\{b\\}' },
  { pattern: '\\^caret\\$' },
  { pattern: '\\\\' },
  { pattern: 'a|' },
  { pattern: '()x' },
  { pattern: 'x*' },
  { pattern: 'e{2,}|l{2}' },
  { pattern: '(?:ab)+?' },
  { pattern: 'NEL.here' },
  { pattern: 'LS.PS' },
  { pattern: 'BOM.inside' },
  { pattern: 'mid.carriage' },
  { pattern: 'line$' },
  { pattern: 'carriage$', multiline: true },
  { pattern: 'line\\r?$', multiline: true },
  { pattern: '\\s+\\n\\S', multiline: true },
  { pattern: 'here\\n.', multiline: true },
  { pattern: '^$\\n^', multiline: true },
  { pattern: '[^a]\\n\\s*\\n', multiline: true },
  { pattern: '\\n\\n', multiline: true, output_mode: 'count' },
  { pattern: 'x*\\n?', multiline: true, output_mode: 'count' },
  // rg 13 never matches `^` right after `$`, even on an empty line (where `^$` matches).
  { pattern: '$^' },
  { pattern: '$^', output_mode: 'count' },
  { pattern: '$^', output_mode: 'files_with_matches' },
  { pattern: '$$^|plain' },
  { pattern: '^$' },
  { pattern: '$^', multiline: true, output_mode: 'count' },
  { pattern: 'here$\\n^$^', multiline: true },
];

let corpus: string;
let tricky: string;
let rg: TestApp;
let js: TestApp;
let rgTricky: TestApp;
let jsTricky: TestApp;
let runs: RgRuns;

beforeAll(async () => {
  corpus = makeCorpus();
  tricky = tmpDir('grep-tricky-');
  fs.writeFileSync(path.join(tricky, 'tricky.txt'), TRICKY_LINES.join('\n') + '\n');
  // Not lines that already end in \r: rg itself answers `\r\r\n` differently depending on
  // the pattern (a literal takes a path that drops the terminator first, `\w+$` does not).
  const crlf = TRICKY_LINES.filter((l) => !l.endsWith('\r'));
  fs.writeFileSync(path.join(tricky, 'crlf.txt'), crlf.join('\r\n') + '\r\n');
  runs = loggedRg();
  rg = await grepApp(corpus, 'rg', {}, runs.env);
  js = await grepApp(corpus, 'js');
  rgTricky = await grepApp(tricky, 'rg', {}, runs.env);
  jsTricky = await grepApp(tricky, 'js');
});

afterAll(async () => {
  await Promise.all([rg?.close(), js?.close(), rgTricky?.close(), jsTricky?.close()]);
  cleanupTmp();
});

describe('Grep engines agree on the corpus', () => {
  it.each(CORPUS_QUERIES.map((q) => [JSON.stringify(q), q] as const))('%s', async (_name, q) => {
    runs.take();
    const a = await runGrep(rg.app, q);
    expect(ranMultiline(runs.take())).toBe(q.multiline === true);
    const b = await runGrep(js.app, q);
    expect(a.isError).toBe(false);
    expect(b.text).toBe(a.text);
  });

  it('finds what the table is about (the comparisons are not between two empty answers)', async () => {
    let nonEmpty = 0;
    for (const q of CORPUS_QUERIES) {
      const r = await runGrep(js.app, q);
      if (!/^No (files|matches) found/.test(r.text)) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThanOrEqual(CORPUS_QUERIES.length - 6);
  });
});

describe('Grep engines agree on the regex dialect', () => {
  it.each(TRICKY_PATTERNS.map((q) => [JSON.stringify(q), q] as const))('%s', async (_name, q) => {
    const input = { output_mode: 'content', ...q };
    runs.take();
    const a = await runGrep(rgTricky.app, input);
    expect(ranMultiline(runs.take())).toBe(q.multiline === true);
    const b = await runGrep(jsTricky.app, input);
    expect(b.isError).toBe(a.isError);
    expect(b.text).toBe(a.text);
  });
});
