/**
 * rg 13 panics on some searches it accepts (grep-matcher's "self.start <= end": a multiline `$` over
 * CRLF lines): exit code 101 after part of the answer, or, when it searches in parallel
 * (files_with_matches), a hang until the time limit. The rg engine hands the search to the JS engine
 * from where rg died, and answers what the JS engine answers, with nothing given twice. rg runs behind a
 * script that logs its runs: each case fails unless rg did run the multiline search (else the JS engine
 * would be compared with itself, and a broken fallback pass unseen).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { grepApp, loggedRg, ranMultiline, runGrep, type RgRuns } from './helpers-grep.js';

let root: string;
let rg: TestApp;
let js: TestApp;
let runs: RgRuns;

beforeAll(async () => {
  root = tmpDir('grep-panic-');
  fs.writeFileSync(path.join(root, 'a-before.txt'), 'one\ntwo\n');
  fs.writeFileSync(path.join(root, 'crlf.txt'), 'x\r\ny\r\n\r\n');
  fs.writeFileSync(path.join(root, 'z-after.txt'), 'three\n');
  runs = loggedRg();
  rg = await grepApp(root, 'rg', {}, runs.env);
  js = await grepApp(root, 'js');
});

afterAll(async () => {
  await Promise.all([rg?.close(), js?.close()]);
  cleanupTmp();
});

describe('Grep (rg engine) where rg panics', () => {
  it.each(['$', '\\n?$'])('the installed rg does panic on a search for %s (else the tests below prove nothing)', (pattern) => {
    let status: number | null = 0;
    try {
      execFileSync('rg', ['--no-config', '--multiline', '--crlf', '--json', '--sort', 'path', '-e', pattern, '--', '.'], { cwd: root, stdio: 'pipe' });
    } catch (e) {
      status = (e as { status: number | null }).status;
    }
    expect(status).toBe(101);
  });

  const cases: Array<Record<string, unknown>> = [
    { pattern: '$', multiline: true, output_mode: 'count' },
    { pattern: '$', multiline: true, output_mode: 'files_with_matches' },
    // rg is asked for `(?:$)[^\n]*` here (a content search reports lines), and does not panic on it.
    { pattern: '$', multiline: true, output_mode: 'content' },
    { pattern: 'y$|^t', multiline: true, output_mode: 'count' }, // nor on this one
    // A pattern that can match \n is asked as it is: rg panics in crlf.txt after a-before.txt's lines.
    { pattern: '\\n?$', multiline: true, output_mode: 'content' },
    { pattern: '\\n?$', multiline: true, output_mode: 'content', '-C': 1 },
  ];
  for (const q of cases) {
    it(JSON.stringify(q), async () => {
      runs.take();
      const a = await runGrep(rg.app, q);
      expect(ranMultiline(runs.take())).toBe(true);
      const b = await runGrep(js.app, q);
      expect(a.isError).toBe(false);
      expect(b.isError).toBe(false);
      expect(a.text).toBe(b.text);
    });
  }

  it('counts each file once: the files rg answered before it died are not counted again', async () => {
    // rg's output is buffered, and flushed after its panic message, which makes the rg engine drop it: files
    // whose answer fills the buffer are read before rg reaches crlf.txt, and the JS engine goes on from there.
    const dir = tmpDir('grep-panic-resume-');
    for (const name of ['0-big.txt', '1-big.txt']) fs.writeFileSync(path.join(dir, name), 'line\n'.repeat(5000));
    fs.writeFileSync(path.join(dir, 'crlf.txt'), 'x\r\ny\r\n\r\n');
    fs.writeFileSync(path.join(dir, 'z-after.txt'), 'three\n');
    const rgBig = await grepApp(dir, 'rg', {}, runs.env);
    try {
      runs.take();
      const a = await runGrep(rgBig.app, { pattern: '$', multiline: true, output_mode: 'count' });
      expect(ranMultiline(runs.take())).toBe(true);
      expect(a.text).toBe('0-big.txt:5000\n1-big.txt:5000\ncrlf.txt:3\nz-after.txt:1\n\nFound 10004 total occurrences across 4 files.');
    } finally {
      await rgBig.close();
    }
  });

  it('counts each file once where rg died before its answer was read (the JS engine answers every file)', async () => {
    runs.take();
    const a = await runGrep(rg.app, { pattern: '$', multiline: true, output_mode: 'count' });
    expect(ranMultiline(runs.take())).toBe(true);
    expect(a.text).toBe('a-before.txt:2\ncrlf.txt:3\nz-after.txt:1\n\nFound 6 total occurrences across 3 files.');
  });

  it('shows each line once: the lines rg gave before it died are not given again', async () => {
    runs.take();
    const a = await runGrep(rg.app, { pattern: '\\n?$', multiline: true, output_mode: 'content' });
    expect(ranMultiline(runs.take())).toBe(true);
    expect(a.text).toBe('a-before.txt:1:one\na-before.txt:2:two\ncrlf.txt:1:x\ncrlf.txt:2:y\ncrlf.txt:3:\nz-after.txt:1:three');
  });
});

describe('Grep (rg engine) where rg panics in a tree with a file holding a long line', () => {
  // The JS engine searches that file apart (rg -U is quadratic on a long line); once rg dies, the JS
  // engine searching on from there leaves it out, or its hits would be given twice.
  it('gives each file once', async () => {
    const dir = tmpDir('grep-panic-long-');
    fs.writeFileSync(path.join(dir, 'a-before.txt'), 'one\ntwo\n');
    fs.writeFileSync(path.join(dir, 'crlf.txt'), 'x\r\ny\r\n\r\n');
    fs.writeFileSync(path.join(dir, 'long.txt'), `${'a'.repeat(20_000)}\nend\n`);
    fs.writeFileSync(path.join(dir, 'z-after.txt'), 'three\n');
    const rgLong = await grepApp(dir, 'rg', {}, runs.env);
    try {
      runs.take();
      const a = await runGrep(rgLong.app, { pattern: '$', multiline: true, output_mode: 'count' });
      expect(ranMultiline(runs.take())).toBe(true);
      expect(a.text).toBe('a-before.txt:2\ncrlf.txt:3\nlong.txt:1\nz-after.txt:1\n\nFound 7 total occurrences across 4 files.');
    } finally {
      await rgLong.close();
    }
  });
});

describe('Grep (rg engine) where rg dies of SIGBUS', () => {
  // rg -U maps the files it searches (--mmap); a file truncated meanwhile kills it with SIGBUS. That race
  // cannot be set up at will: this rg dies so on every multiline search (not on its listing of the files
  // with a long line, a plain search), and the installed rg does everything else.
  it('answers what the JS engine answers, not an error', async () => {
    const realRg = execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim();
    const bin = tmpDir('rg-sigbus-');
    fs.writeFileSync(
      path.join(bin, 'rg'),
      `#!/bin/sh\ncase " $* " in *" --multiline "*) ulimit -c 0; kill -BUS $$ ;; esac\nexec '${realRg}' "$@"\n`,
      { mode: 0o755 },
    );
    const dying = await grepApp(root, 'rg', {}, { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` });
    try {
      for (const output_mode of ['content', 'count', 'files_with_matches']) {
        const q = { pattern: 'o\\n|e$', multiline: true, output_mode };
        const a = await runGrep(dying.app, q);
        expect(a.isError, a.text).toBe(false);
        expect(a.text).toBe((await runGrep(js.app, q)).text);
        expect(a.text).toMatch(/a-before\.txt/);
      }
    } finally {
      await dying.close();
    }
  });
});
