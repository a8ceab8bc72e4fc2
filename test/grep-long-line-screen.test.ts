/**
 * The rg engine checks each file rg reports (files_with_matches, count) for a line too long to search,
 * which rg searched anyway. That check read every reported file over a third of MAX_LINE_BYTES whole, on
 * the service's thread: a search of node_modules for `function` held every other request for the read of
 * thousands of files. rg now lists the files with a line wide enough to be long once decoded, and only
 * those are read here, with the same verdicts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenStats } from '../src/grep/rg-engine.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { grepApp, loggedRg, runGrep } from './helpers-grep.js';

const apps: TestApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  cleanupTmp();
});

async function app(root: string, engine: 'rg' | 'js'): Promise<TestApp> {
  const a = await grepApp(root, engine);
  apps.push(a);
  return a;
}

function utf16le(text: string): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
}

describe('Grep (rg engine): the long-line check of reported files', () => {
  it('reads none of 200 matching files of 8 KB whose lines are short', async () => {
    const root = tmpDir('grep-screen-');
    const body = `${'const value = 1; // padding the line out\n'.repeat(200)}function needle() {}\n`;
    expect(Buffer.byteLength(body)).toBeGreaterThan(8000);
    for (let i = 0; i < 200; i++) {
      const dir = path.join(root, `pkg${i % 10}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `f${i}.js`), body);
    }
    const rg = await app(root, 'rg');
    for (const output_mode of ['files_with_matches', 'count'] as const) {
      const before = screenStats.wholeReads;
      const r = await runGrep(rg.app, { pattern: 'needle', output_mode });
      expect(r.isError).toBe(false);
      expect(r.text).toMatch(output_mode === 'count' ? /Found 200 total occurrences across 200 files\.$/ : /^Found 200 files\n/);
      // One read per file before.
      expect(screenStats.wholeReads - before).toBe(0);
    }
  });

  it('starts no second rg when every reported file is too small to hold a long line', async () => {
    const root = tmpDir('grep-screen-small-');
    for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(root, `s${i}.ts`), 'function needle() {}\n');
    fs.writeFileSync(path.join(root, 'big.ts'), `${'const value = 1; // padding the line out\n'.repeat(200)}function needle() {}\n`);
    const runs = loggedRg();
    const a = await grepApp(root, 'rg', {}, runs.env);
    apps.push(a);
    const wide = (r: string[]): string[] => r.filter((x) => x.includes('--max-depth 0'));
    for (const output_mode of ['files_with_matches', 'count'] as const) {
      fs.rmSync(path.join(root, 'big.ts'), { force: true });
      runs.take();
      expect((await runGrep(a.app, { pattern: 'needle', output_mode })).isError).toBe(false);
      // The search itself, and no listing of wide lines: five small files cannot hold one.
      expect(wide(runs.take()), output_mode).toEqual([]);
      fs.writeFileSync(path.join(root, 'big.ts'), `${'const value = 1; // padding the line out\n'.repeat(200)}function needle() {}\n`);
      expect((await runGrep(a.app, { pattern: 'needle', output_mode })).isError).toBe(false);
      // With one file large enough, the listing runs, over that file alone (the log holds its regex's newline: the
      // operands are on the line after the run's first).
      const got = runs.take();
      const at = got.flatMap((x, i) => (x.includes('--max-depth 0') ? [i] : []));
      expect(at, output_mode).toHaveLength(1);
      const tail = got[at[0]! + 1]!;
      expect(tail.slice(tail.indexOf(' -- ') + 4), output_mode).toBe('big.ts');
    }
  });

  describe('files with a long line are still judged exactly', () => {
    let rg: TestApp;
    let js: TestApp;
    beforeAll(async () => {
      const root = tmpDir('grep-screen-long-');
      const w = (name: string, data: string | Buffer): void => fs.writeFileSync(path.join(root, name), data);
      // A 2 MB line that matches, and a short one that does too: the file counts for its short line.
      w('long-and-short.txt', `needle ${'x'.repeat(2_000_000)}\nshort needle\n`);
      // Only the long line matches: no match left.
      w('long-only.txt', `needle ${'x'.repeat(2_000_000)}\nnothing\n`);
      // 6,000 invalid bytes: 18,000 bytes once decoded (U+FFFD each), a long line under MAX_LINE_BYTES raw bytes.
      w('invalid.txt', Buffer.concat([Buffer.from('needle '), Buffer.alloc(6000, 0xff), Buffer.from('\nneedle\n')]));
      // A 20 KB line of lone CRs (a line runs from \n to \n): rg --crlf would count it as 200 short ones.
      w('cr.txt', `needle ${`${'a'.repeat(100)}\r`.repeat(200)}\nneedle\n`);
      // Those two where only the long line matches: no match left.
      w('invalid-only.txt', Buffer.concat([Buffer.from('needle '), Buffer.alloc(6000, 0xff), Buffer.from('\nnothing\n')]));
      w('cr-only.txt', `needle ${`${'a'.repeat(100)}\r`.repeat(200)}\nnothing\n`);
      // UTF-16, transcoded by rg: a long line, and a line of 6,000 characters (over a third, not long).
      w('utf16-long.txt', utf16le(`needle ${'x'.repeat(20_000)}\nneedle\n`));
      w('utf16-wide.txt', utf16le(`needle ${'x'.repeat(6000)}\nneedle\n`));
      w('plain.txt', 'needle\n');
      rg = await app(root, 'rg');
      js = await app(root, 'js');
    });

    it('in count mode', async () => {
      const before = screenStats.wholeReads;
      const a = await runGrep(rg.app, { pattern: 'needle', output_mode: 'count' });
      expect(screenStats.wholeReads - before).toBeGreaterThanOrEqual(4);
      const b = await runGrep(js.app, { pattern: 'needle', output_mode: 'count' });
      expect(a.isError).toBe(false);
      expect(a.text).toBe(b.text);
      expect(a.text).toBe(
        'cr.txt:1\ninvalid.txt:1\nlong-and-short.txt:1\nplain.txt:1\nutf16-long.txt:1\nutf16-wide.txt:2\n\nFound 7 total occurrences across 6 files.',
      );
    });

    it('in files_with_matches mode', async () => {
      const a = await runGrep(rg.app, { pattern: 'needle', output_mode: 'files_with_matches' });
      const b = await runGrep(js.app, { pattern: 'needle', output_mode: 'files_with_matches' });
      expect(a.isError).toBe(false);
      expect(a.text).toBe(b.text);
      expect(a.text.split('\n').slice(1).sort()).toEqual(['cr.txt', 'invalid.txt', 'long-and-short.txt', 'plain.txt', 'utf16-long.txt', 'utf16-wide.txt']);
    });
  });
});
