/**
 * The FileStateCache (a bounded LRU and Claude Code's freshness rules), the
 * text helpers behind Edit and Write (matching, line endings, snippets,
 * patches), and the atomic writer, on real files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeTarget } from '../src/file-state/atomic-write.js';
import { FileStateCache, freshness, type FileState } from '../src/file-state/cache.js';
import { applyEditToFile, getSnippet, planEdit, structuredPatch } from '../src/file-state/edit-text.js';
import { decodeText, detectLineEndings, encodeText, formatFileSize, readTextFile, sliceLines } from '../src/file-state/text-file.js';
import { cleanupTmp, tmpDir } from './helpers.js';
import { directContext } from './helpers-files.js';

afterAll(cleanupTmp);

const entry = (content: string, timestamp = 1000, extra: Partial<FileState> = {}): FileState => ({
  content,
  timestamp,
  offset: undefined,
  limit: undefined,
  isPartialView: false,
  ...extra,
});

describe('FileStateCache', () => {
  it('evicts the least recently used entry past its entry limit', () => {
    const c = new FileStateCache(2, 1024);
    c.set('/a', entry('a'));
    c.set('/b', entry('b'));
    c.get('/a');
    c.set('/c', entry('c'));
    expect(c.keys().sort()).toEqual(['/a', '/c']);
  });

  it('evicts past its byte budget, and does not keep an entry larger than the budget', () => {
    const c = new FileStateCache(100, 10);
    c.set('/a', entry('aaaaaa'));
    c.set('/b', entry('bbbbbb'));
    expect(c.keys()).toEqual(['/b']);
    expect(c.totalBytes).toBe(6);
    c.set('/big', entry('x'.repeat(11)));
    expect(c.has('/big')).toBe(false);
    c.set('/b', entry('bb'));
    expect(c.totalBytes).toBe(2);
  });

  it('normalises keys', () => {
    const c = new FileStateCache();
    c.set('/p/./a//b.txt', entry('x'));
    expect(c.get('/p/a/b.txt')?.content).toBe('x');
  });
});

describe('freshness (Claude Code\u2019s rules)', () => {
  it('unread, partial, fresh, and stale by mtime', () => {
    expect(freshness(undefined, 1000, 'x', true)).toBe('unread');
    expect(freshness(entry('x', 1000, { isPartialView: true }), 1000, 'x', true)).toBe('partial');
    expect(freshness(entry('x', 1000), 1000.9, 'x', false)).toBe('fresh');
    expect(freshness(entry('x', 1000), 1001, 'y', true)).toBe('stale');
  });

  it('accepts a newer mtime with unchanged content only for a full read, and only with the fallback on', () => {
    expect(freshness(entry('x', 1000), 2000, 'x', true)).toBe('fresh');
    expect(freshness(entry('x', 1000), 2000, 'x', false)).toBe('stale');
    expect(freshness(entry('x', 1000, { offset: 1, limit: 5 }), 2000, 'x', true)).toBe('stale');
  });
});

describe('edit text', () => {
  it('plans an edit in a CRLF file from LF text, counting matches', () => {
    const p = planEdit('a\r\nb\r\na\r\nb\r\n', 'a\nb', 'c\nd', true);
    expect(p).toMatchObject({ oldString: 'a\r\nb', newString: 'c\r\nd', count: 2, updated: 'c\r\nd\r\nc\r\nd\r\n' });
    expect(planEdit('abc', 'zzz', 'y', false)).toBeUndefined();
  });

  it('keeps LF in an LF file and does not treat `$&` in the new text as a pattern', () => {
    expect(planEdit('x\ny\n', 'y', '$&$1', false)?.updated).toBe('x\n$&$1\n');
  });

  it('removes the newline of a line deleted whole, but not a partial deletion', () => {
    expect(applyEditToFile('a\nb\nc\n', 'b', '', false)).toBe('a\nc\n');
    expect(applyEditToFile('a\r\nb\r\nc\r\n', 'b', '', false, '\r\n')).toBe('a\r\nc\r\n');
    expect(applyEditToFile('abc\n', 'b', '', false)).toBe('ac\n');
  });

  it('builds Claude Code\u2019s snippet: 4 lines of context around the edit', () => {
    const original = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join('\n');
    const updated = original.replace('l10', 'X');
    const s = getSnippet(original, 'l10', 'X', updated);
    expect(s.startLine).toBe(6);
    expect(s.lines).toEqual(['l6', 'l7', 'l8', 'l9', 'X', 'l11', 'l12', 'l13', 'l14']);
  });

  it('builds one-hunk structured patches for changes, insertions and deletions', () => {
    expect(structuredPatch('a\nb\nc\n', 'a\nB\nc\n')).toEqual([{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: [' a', '-b', '+B', ' c'] }]);
    expect(structuredPatch('a\nc\n', 'a\nb\nc\n')).toEqual([{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 3, lines: [' a', '+b', ' c'] }]);
    expect(structuredPatch('a\nb\n', 'a\n')).toEqual([{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 1, lines: [' a', '-b'] }]);
    expect(structuredPatch('x', 'x')).toEqual([]);
    expect(structuredPatch('', 'new\n')).toEqual([{ oldStart: 1, oldLines: 0, newStart: 1, newLines: 1, lines: ['+new'] }]);
  });

  it('slices lines without splitting the text, as Read counts them', () => {
    expect(sliceLines('a\nb\r\nc\n', 1, 5)).toEqual(['b', 'c']);
    expect(sliceLines('a\n\n', 0, 5)).toEqual(['a', '']);
    expect(sliceLines('', 0, 5)).toEqual([]);
  });

  it('detects line endings, encodings and sizes', () => {
    expect(detectLineEndings('a\r\nb\r\nc\n')).toBe('CRLF');
    expect(detectLineEndings('a\nb\r\nc\n')).toBe('LF');
    const u16 = encodeText('hé', 'utf16le', true);
    expect(decodeText(u16)).toEqual({ content: 'hé', encoding: 'utf16le', bom: true });
    expect(decodeText(encodeText('x', 'utf8', true))).toEqual({ content: 'x', encoding: 'utf8', bom: true });
    expect([formatFileSize(512), formatFileSize(256 * 1024), formatFileSize(1.5 * 1024 * 1024), formatFileSize(2 ** 30)]).toEqual([
      '512 bytes',
      '256KB',
      '1.5MB',
      '1GB',
    ]);
  });
});

describe('atomic writes', () => {
  it('replaces the file whole, keeps its mode, and cleans up when the write is refused', async () => {
    const root = tmpDir();
    const f = path.join(root, 'a.txt');
    fs.writeFileSync(f, 'old');
    fs.chmodSync(f, 0o600);
    await writeFileAtomic(f, Buffer.from('new'), { mode: 0o600 });
    expect(fs.readFileSync(f, 'utf8')).toBe('new');
    expect(fs.statSync(f).mode & 0o777).toBe(0o600);
    const aborted = new AbortController();
    aborted.abort();
    await expect(writeFileAtomic(f, Buffer.from('never'), { mode: 0o600, signal: aborted.signal })).rejects.toThrow(/aborted/);
    expect(fs.readFileSync(f, 'utf8')).toBe('new');
    expect(fs.readdirSync(root)).toEqual(['a.txt']);
  });

  it('resolves a write target through symlinks chained inside the workspace, and refuses one leading out', () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    fs.mkdirSync(path.join(ws, 'd'), { recursive: true });
    fs.symlinkSync('d/real.txt', path.join(ws, 'l1'));
    fs.symlinkSync('l1', path.join(ws, 'l2'));
    fs.symlinkSync('/etc/passwd', path.join(ws, 'pw'));
    fs.symlinkSync('loop-b', path.join(ws, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(ws, 'loop-b'));
    const w = directContext({ root: ws });
    expect(writeTarget(path.join(ws, 'l2'), w, 'Write')).toBe(path.join(ws, 'd', 'real.txt'));
    expect(() => writeTarget(path.join(ws, 'pw'), w, 'Write')).toThrow(/Refusing to write/);
    expect(() => writeTarget(path.join(ws, 'loop-a'), w, 'Write')).toThrow(/Too many levels of symbolic links/);
    // A path outside the workspace that the permission layer let through is written where it is.
    expect(writeTarget(path.join(root, 'approved.txt'), w, 'Write')).toBe(path.join(root, 'approved.txt'));
  });

  it('reads text files with their metadata and refuses non-regular files', async () => {
    const root = tmpDir();
    const f = path.join(root, 'a.txt');
    fs.writeFileSync(f, 'abc');
    fs.chmodSync(f, 0o640);
    expect(await readTextFile(f)).toMatchObject({ content: 'abc', encoding: 'utf8', bom: false, mode: 0o640, size: 3 });
    expect(await readTextFile(path.join(root, 'missing'))).toBeUndefined();
    await expect(readTextFile('/dev/null')).rejects.toThrow(/not a regular file/);
    await expect(readTextFile(root)).rejects.toThrow(/is a directory/);
  });
});

describe('FileStateBudget', () => {
  it('bounds the content all sessions keep: a cache past the shared budget gives up its own oldest entries', async () => {
    const { FileStateBudget, FileStateCache } = await import('../src/file-state/cache.js');
    const budget = new FileStateBudget(1000);
    const a = new FileStateCache(100, 800, budget);
    const b = new FileStateCache(100, 800, budget);
    const entry = (n: number) => ({ content: 'x'.repeat(n), timestamp: 0, offset: undefined, limit: undefined, isPartialView: false });
    a.set('/a1', entry(300));
    a.set('/a2', entry(300));
    b.set('/b1', entry(300));
    expect(budget.bytes).toBe(900);
    b.set('/b2', entry(300));
    // b pushed the total to 1200: b gave up its own oldest (b1), a kept both.
    expect(b.has('/b1')).toBe(false);
    expect(a.has('/a1') && a.has('/a2') && b.has('/b2')).toBe(true);
    expect(budget.bytes).toBe(900);
    a.clear();
    expect(budget.bytes).toBe(300);
  });
});
