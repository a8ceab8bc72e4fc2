/**
 * The rg engine reads rg's --json output, whose messages carry the matched
 * lines: a file of one huge matching line makes a message of a gigabyte (a
 * submatch for every character), and a file of millions of short matching
 * lines makes millions of messages. Neither may cost more than a bounded
 * amount of memory and a few seconds, nor change the answer: a line longer
 * than 16 KiB is never searched, and lines come out in order with their
 * context, as the JS engine gives them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { grepApp, loggedRg, ranMultiline, runGrep } from './helpers-grep.js';

const apps: TestApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  cleanupTmp();
});

async function app(root: string, engine: 'rg' | 'js', env?: NodeJS.ProcessEnv): Promise<TestApp> {
  const a = await grepApp(root, engine, {}, env);
  apps.push(a);
  return a;
}

describe('Grep (rg engine) on huge lines and huge numbers of lines', () => {
  it('answers at once for a file of one 12 MB matching line (a line that long is never searched)', async () => {
    const root = tmpDir();
    fs.writeFileSync(path.join(root, 'one-line.txt'), Buffer.alloc(12_000_000, 'a'));
    fs.writeFileSync(path.join(root, 'small.txt'), 'a\n');
    const t = await app(root, 'rg');
    for (const output_mode of ['content', 'count'] as const) {
      const r = await runGrep(t.app, { pattern: 'a', output_mode });
      expect(r.isError).toBe(false);
      expect(r.text).toBe(output_mode === 'content' ? 'small.txt:1:a' : 'small.txt:1\n\nFound 1 total occurrence across 1 file.');
    }
    // rg took a few seconds to write its gigabyte of JSON (reading it was quadratic: 120 s, then a timeout);
    // now rg reports one match per line, and a line too long to report hands the file to the JS engine.
  });

  describe('a 12 MB line among short ones, searched for `.` (rg wrote 650 MB of JSON for it: 6-11 s) or shown as context', () => {
    const long = 'a'.repeat(12_000_000);
    const cut = `${'a'.repeat(500)} [... line truncated, 12000000 characters in all]`;
    let rg: TestApp;
    let js: TestApp;
    beforeAll(async () => {
      const root = tmpDir();
      fs.writeFileSync(path.join(root, 'a-before.txt'), 'x0\n');
      fs.writeFileSync(path.join(root, 'mixed.txt'), `x1\nx2\n${long}\nx4\n`);
      fs.writeFileSync(path.join(root, 'z-after.txt'), 'x5\n');
      rg = await app(root, 'rg');
      js = await app(root, 'js');
    });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ pattern: '.', output_mode: 'count' }, 'a-before.txt:1\nmixed.txt:3\nz-after.txt:1\n\nFound 5 total occurrences across 3 files.'],
      [{ pattern: '.', output_mode: 'content' }, 'a-before.txt:1:x0\nmixed.txt:1:x1\nmixed.txt:2:x2\nmixed.txt:4:x4\nz-after.txt:1:x5'],
      // The long line as context: cut where any shown line is cut, with the marker (rg's report of it was too long to read).
      [{ pattern: 'x[24]', output_mode: 'content', '-C': 1 }, `mixed.txt-1-x1\nmixed.txt:2:x2\nmixed.txt-3-${cut}\nmixed.txt:4:x4`],
      [{ pattern: '.', output_mode: 'content', '-C': 1 }, `a-before.txt:1:x0\n--\nmixed.txt:1:x1\nmixed.txt:2:x2\nmixed.txt-3-${cut}\nmixed.txt:4:x4\n--\nz-after.txt:1:x5`],
      [{ pattern: 'a{3}', output_mode: 'files_with_matches' }, 'No files found'],
      [{ pattern: 'x4' }, 'Found 1 file\nmixed.txt'],
    ];
    for (const [q, want] of cases) {
      it(JSON.stringify(q), async () => {
        const a = await runGrep(rg.app, { head_limit: 0, ...q });
        expect(a.isError).toBe(false);
        expect(a.text).toBe(want);
        expect((await runGrep(js.app, { head_limit: 0, ...q })).text).toBe(want);
      });
    }
  });

  // rg -U searches the other files; the file with the long line is left out of its run and searched by the JS
  // engine, its hits merged in walk order. Were rg -U given that file, a case would time out.
  describe('a multiline search where a file holds a 3 MB line (rg 13 -U took over 100 s on it: quadratic)', () => {
    let rg: TestApp;
    let js: TestApp;
    const runs = loggedRg();
    beforeAll(async () => {
      const root = tmpDir();
      fs.writeFileSync(path.join(root, 'a-small.txt'), 'ab\nc\n');
      fs.writeFileSync(path.join(root, 'bundle.min.js'), `x\n${'a'.repeat(3_000_000)}\nb\n`);
      fs.writeFileSync(path.join(root, 'z-small.txt'), 'q\n');
      // A name rg's globs would read as a pattern, in a directory: it is left out of rg's run all the same.
      fs.mkdirSync(path.join(root, 'lib [2]'));
      fs.writeFileSync(path.join(root, 'lib [2]', '*odd{1,2}!#.js'), `${'a'.repeat(3_000_000)}\nodd\n`);
      // files_with_matches lists the newest first: this one last.
      fs.utimesSync(path.join(root, 'lib [2]', '*odd{1,2}!#.js'), 1_000_000_000, 1_000_000_000);
      rg = await app(root, 'rg', runs.env);
      js = await app(root, 'js');
    });
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { pattern: '.', output_mode: 'content' },
        'a-small.txt:1:ab\na-small.txt:2:c\nbundle.min.js:1:x\nbundle.min.js:3:b\nlib [2]/*odd{1,2}!#.js:2:odd\nz-small.txt:1:q',
      ],
      [{ pattern: '^a', output_mode: 'content' }, 'a-small.txt:1:ab'],
      // With --multiline-dotall `.` matches each newline too; the long line, with its newline, is not searched.
      [
        { pattern: '.', output_mode: 'count' },
        'a-small.txt:5\nbundle.min.js:4\nlib [2]/*odd{1,2}!#.js:4\nz-small.txt:2\n\nFound 15 total occurrences across 4 files.',
      ],
      [{ pattern: '^a', output_mode: 'count' }, 'a-small.txt:1\n\nFound 1 total occurrence across 1 file.'],
      [{ pattern: '^', output_mode: 'count' }, 'a-small.txt:2\nbundle.min.js:2\nlib [2]/*odd{1,2}!#.js:1\nz-small.txt:1\n\nFound 6 total occurrences across 4 files.'],
      [{ pattern: '^a' }, 'Found 1 file\na-small.txt'],
      [{ pattern: '^[bo]' }, 'Found 2 files\nbundle.min.js\nlib [2]/*odd{1,2}!#.js'],
      // A glob of the user's that names the file does not bring it back into rg's run.
      [{ pattern: '^[abx]\n?', output_mode: 'content', glob: '*.js' }, 'bundle.min.js:1:x\nbundle.min.js:3:b'],
      // The JS engine's hits count toward head_limit where they fall.
      [{ pattern: '.', output_mode: 'content', head_limit: 3 }, 'a-small.txt:1:ab\na-small.txt:2:c\nbundle.min.js:1:x\n\n[Showing results with pagination = limit: 3]'],
    ];
    for (const [q, want] of cases) {
      it(JSON.stringify(q), async () => {
        const input = { multiline: true, head_limit: 0, ...q };
        runs.take();
        const a = await runGrep(rg.app, input);
        expect(ranMultiline(runs.take())).toBe(true);
        expect(a.isError).toBe(false);
        expect(a.text).toBe(want);
        expect((await runGrep(js.app, input)).text).toBe(want);
      });
    }
  });

  it('stops reading once head_limit lines are out, holding no more than a few lines of a file of millions', async () => {
    const root = tmpDir();
    fs.writeFileSync(path.join(root, 'many.txt'), 'a\n'.repeat(3_000_000));
    const t = await app(root, 'rg');
    const r = await runGrep(t.app, { pattern: 'a', output_mode: 'content', head_limit: 3, '-A': 1 });
    expect(r.text).toBe('many.txt:1:a\nmany.txt:2:a\nmany.txt:3:a\n\n[Showing results with pagination = limit: 3]');
    // A context as long as the file (or longer) does not make it wait for the end either.
    const wide = await runGrep(t.app, { pattern: 'a', output_mode: 'content', head_limit: 2, '-C': 100_000_000 });
    expect(wide.text).toBe('many.txt:1:a\nmany.txt:2:a\n\n[Showing results with pagination = limit: 2]');
  });

  it('gives the lines and context the JS engine gives, in any arrangement of matches', async () => {
    const root = tmpDir();
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const words = ['alpha', 'beta', 'gamma', 'delta'];
    for (let f = 0; f < 4; f++) {
      const lines = Array.from({ length: 300 }, () => words[rand(4)]!);
      fs.writeFileSync(path.join(root, `f${f}.txt`), `${lines.join('\n')}\n`);
    }
    const rg = await app(root, 'rg');
    const js = await app(root, 'js');
    const queries: Array<Record<string, unknown>> = [
      { pattern: 'alpha', '-B': 2, '-A': 1 },
      { pattern: 'alpha|beta', '-C': 3 },
      { pattern: 'gamma', '-A': 5 },
      { pattern: 'alpha\\nbeta', multiline: true, '-C': 1 },
      { pattern: '(?:alpha|beta)\\n(?:beta|gamma)\\n', multiline: true, '-B': 2 },
      { pattern: 'delta', '-C': 2, head_limit: 40, offset: 7 },
      { pattern: 'gamma', '-C': 1000 },
      { pattern: 'alpha\\ngamma', multiline: true, '-A': 1000, '-B': 3 },
    ];
    for (const q of queries) {
      const input = { output_mode: 'content', head_limit: 0, ...q };
      const a = await runGrep(rg.app, input);
      const b = await runGrep(js.app, input);
      expect(a.isError, JSON.stringify(q)).toBe(false);
      expect(a.text, JSON.stringify(q)).toBe(b.text);
    }
  });
});
