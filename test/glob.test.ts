/**
 * Glob against real directory trees, through POST /execute: glob semantics,
 * the 100 newest files, Read deny rules hiding files, symlink loops, and a
 * pattern that tries to walk out of the workspace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { globFiles, globSearch, globTool, mayBacktrack } from '../src/tools/glob.js';
import { Workspace } from '../src/workspace.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { call, decisionChain, directContext, fileApp } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const GLOB_ALLOWED = { permissions: { allow: ['Glob'] } };

function touch(p: string, mtimeSec?: number): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, path.basename(p));
  if (mtimeSec !== undefined) fs.utimesSync(p, mtimeSec, mtimeSec);
  return p;
}

const listed = (text: string): string[] => (text === 'No files found' ? [] : text.split('\n').filter((l) => !l.startsWith('(')));

describe('Glob: pattern semantics', () => {
  it('`*` stays in one directory, `**` crosses them, dotfiles and dot directories only when named', async () => {
    t = await fileApp(GLOB_ALLOWED);
    const w = t.workspace;
    for (const p of ['a.ts', 'b.js', 'src/c.ts', 'src/deep/d.ts', '.hidden.ts', '.cfg/e.ts', 'src/.f.ts']) touch(path.join(w, p));
    const top = listed((await call(t, 'Glob', { pattern: '*.ts' })).text);
    expect(top).toEqual([path.join(w, 'a.ts')]);
    const all = listed((await call(t, 'Glob', { pattern: '**/*.ts' })).text).sort();
    expect(all).toEqual([path.join(w, 'a.ts'), path.join(w, 'src/c.ts'), path.join(w, 'src/deep/d.ts')].sort());
    const named = listed((await call(t, 'Glob', { pattern: '.cfg/*.ts' })).text);
    expect(named).toEqual([path.join(w, '.cfg/e.ts')]);
    const braces = listed((await call(t, 'Glob', { pattern: '{a,b}.{ts,js}' })).text).sort();
    expect(braces).toEqual([path.join(w, 'a.ts'), path.join(w, 'b.js')]);
    const inPath = listed((await call(t, 'Glob', { pattern: '*.ts', path: path.join(w, 'src') })).text);
    expect(inPath).toEqual([path.join(w, 'src/c.ts')]);
    expect((await call(t, 'Glob', { pattern: '**/*.rs' })).text).toBe('No files found');
  });

  it('takes an absolute pattern inside the workspace', async () => {
    t = await fileApp(GLOB_ALLOWED);
    touch(path.join(t.workspace, 'src/x.ts'));
    const r = await call(t, 'Glob', { pattern: path.join(t.workspace, 'src', '*.ts') });
    expect(listed(r.text)).toEqual([path.join(t.workspace, 'src/x.ts')]);
  });

  it('returns at most 100 files, newest first, and says it truncated', async () => {
    t = await fileApp(GLOB_ALLOWED);
    const base = 1_700_000_000;
    for (let i = 0; i < 120; i++) touch(path.join(t.workspace, 'many', `f${String(i).padStart(3, '0')}.txt`), base + i);
    const r = await call(t, 'Glob', { pattern: 'many/*.txt' });
    const files = listed(r.text);
    expect(files).toHaveLength(100);
    expect(files[0]).toBe(path.join(t.workspace, 'many', 'f119.txt'));
    expect(files[99]).toBe(path.join(t.workspace, 'many', 'f020.txt'));
    expect(r.text).toContain('(Results are truncated. Consider using a more specific path or pattern.)');
  });
});

describe('Glob: what it must not show or follow', () => {
  it('hides files a Read deny rule covers, also reached through a symlink', async () => {
    t = await fileApp({ permissions: { allow: ['Glob'], deny: ['Read(./secrets/**)'] } });
    touch(path.join(t.workspace, 'secrets', 'key.pem'));
    touch(path.join(t.workspace, 'public', 'readme.pem'));
    fs.symlinkSync(path.join(t.workspace, 'secrets'), path.join(t.workspace, 'alias'));
    const r = await call(t, 'Glob', { pattern: '**/*.pem' });
    expect(listed(r.text)).toEqual([path.join(t.workspace, 'public', 'readme.pem')]);
  });

  it('walks a symlink loop once: it ends, and lists each file once', async () => {
    t = await fileApp(GLOB_ALLOWED);
    const a = path.join(t.workspace, 'a');
    touch(path.join(a, 'one.txt'));
    touch(path.join(a, 'b', 'two.txt'));
    fs.symlinkSync(a, path.join(a, 'b', 'back-to-a'));
    fs.symlinkSync('.', path.join(a, 'self'));
    const r = await call(t, 'Glob', { pattern: '**/*.txt' });
    expect(r.isError).toBe(false);
    const files = listed(r.text);
    expect(files.map((f) => path.basename(f)).sort()).toEqual(['one.txt', 'two.txt']);
  });

  it('does not follow a symlinked directory out of the workspace', async () => {
    const outside = tmpDir();
    touch(path.join(outside, 'leak.txt'));
    t = await fileApp(GLOB_ALLOWED);
    touch(path.join(t.workspace, 'in.txt'));
    fs.symlinkSync(outside, path.join(t.workspace, 'out'));
    const r = await call(t, 'Glob', { pattern: '**/*.txt' });
    expect(listed(r.text)).toEqual([path.join(t.workspace, 'in.txt')]);
  });

  it('asks (working_dir) for a pattern that climbs out of the workspace: denied headless, audited', async () => {
    // No whole-tool Glob rule: inside the workspace the read is allowed by the working directories.
    t = await fileApp();
    touch(path.join(t.workspace, 'in.txt'));
    expect(listed((await call(t, 'Glob', { pattern: '*.txt' })).text)).toEqual([path.join(t.workspace, 'in.txt')]);
    const r = await call(t, 'Glob', { pattern: '../../*' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(r.decision?.reason.type).toBe('headless');
    const chain = decisionChain(t, r.executionId);
    expect(chain.find((s) => s.layer === 'tool')).toMatchObject({ outcome: 'ask' });
    expect(chain.find((s) => s.layer === 'tool')?.detail).toMatch(/^working_dir: /);
    const audit = t.app.toolexec.audit.query({ limit: 10 });
    expect(audit.find((a) => a.execution_id === r.executionId)).toMatchObject({ tool: 'Glob', behavior: 'deny', reason_type: 'headless' });
  });

  it('computes the searched directory from the pattern\u2019s literal prefix', () => {
    const root = tmpDir();
    const ws = new Workspace(root);
    expect(globSearch({ pattern: '../x/*.ts' }, root, ws)).toEqual({ dir: path.resolve(root, '../x'), pattern: '*.ts' });
    expect(globSearch({ pattern: '/etc/**/*.conf' }, root, ws)).toEqual({ dir: '/etc', pattern: '**/*.conf' });
    expect(globSearch({ pattern: 'src/a.ts' }, root, ws)).toEqual({ dir: path.join(root, 'src'), pattern: 'a.ts' });
    expect(globSearch({ pattern: '**/*.ts', path: 'sub' }, root, ws)).toEqual({ dir: path.join(root, 'sub'), pattern: '**/*.ts' });
  });
});

describe('Glob: patterns that backtrack', () => {
  it('matches several wildcards in one component off the event loop, and ends a match that takes too long', async () => {
    expect(mayBacktrack('**/*.ts')).toBe(false);
    expect(mayBacktrack('src/*a*b.ts')).toBe(true);
    const root = tmpDir();
    const long = 'a'.repeat(200);
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(root, `${long}${i}`), '');
    fs.writeFileSync(path.join(root, 'xaybz.ts'), '');
    const ctx = { ...directContext({ root, allow: ['Glob'] }), signal: new AbortController().signal };
    // The same answers as picomatch gives.
    const found = await globFiles({ pattern: '*a*b*.ts' }, ctx);
    expect(found.files.map((f) => path.basename(f.abs))).toEqual(['xaybz.ts']);
    // Each long name costs picomatch's RegExp minutes here: the event loop must keep turning, and the call end.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    const r = await globFiles({ pattern: '*a*a*a*a*a*c' }, ctx).then(
      () => 'finished',
      (e: Error) => e.message,
    );
    clearInterval(ticker);
    expect(r).toContain('Glob timed out after 10 s');
    expect(ticks).toBeGreaterThan(10);
  }, 30_000);
});

describe('Glob: a walk cut short', () => {
  it('stops at its time budget or entry limit, and says so even when it found nothing', async () => {
    const root = tmpDir();
    for (let i = 0; i < 5; i++) fs.mkdirSync(path.join(root, `d${i}`, 'deep'), { recursive: true });
    fs.writeFileSync(path.join(root, 'd4', 'deep', 'wanted.txt'), '');
    const ctx = { ...directContext({ root, allow: ['Glob'] }), signal: new AbortController().signal };
    // A pattern rooted at / walks the machine: the walk stops at its budget (none here), having found nothing yet.
    const timed = await globFiles({ pattern: '**/wanted.txt' }, ctx, { maxVisited: 1_000_000, maxWalkMs: -1 });
    expect(timed).toEqual({ files: [], visitedLimitHit: true });
    // The entry limit likewise: two entries of the top directory seen, the file below not reached.
    const counted = await globFiles({ pattern: '**/wanted.txt' }, ctx, { maxVisited: 2, maxWalkMs: 60_000 });
    expect(counted).toEqual({ files: [], visitedLimitHit: true });
    // With room, it is found.
    expect((await globFiles({ pattern: '**/wanted.txt' }, ctx)).files.map((f) => path.basename(f.abs))).toEqual(['wanted.txt']);
    // What the model reads of a walk cut short with nothing found: not a bare "No files found".
    const block = globTool.mapToolResultToToolResultBlockParam(
      { filenames: [], numFiles: 0, truncated: true, durationMs: 1, totalMatches: 0, countIsComplete: false },
      'toolu_1',
    );
    expect(block.content).toMatch(/^No files found in the part searched: the search stopped after 500,000 entries or 10 s\./);
    const complete = globTool.mapToolResultToToolResultBlockParam({ filenames: [], numFiles: 0, truncated: false, durationMs: 1, totalMatches: 0, countIsComplete: true }, 'toolu_2');
    expect(complete.content).toBe('No files found');
  });
});
