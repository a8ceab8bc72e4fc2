/**
 * Read against real files, through POST /execute: numbering, offset/limit,
 * Claude Code's limits and messages, images, notebooks, stored results, the
 * FileStateCache entries it leaves, and the files it must refuse quickly
 * (devices, FIFOs, directories).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ResultStore } from '../src/results/store.js';
import { MAX_LINES_TO_READ, readTool } from '../src/tools/read.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { call, directContext, fileApp, runDirect } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const READ_ALLOWED = { permissions: { allow: ['Read'] } };
/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

function write(p: string, content: string | Buffer): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
}

const lines = (n: number, prefix = 'line'): string => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

describe('Read: text', () => {
  it('numbers lines like cat -n and strips CR of CRLF files', async () => {
    t = await fileApp(READ_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'alpha\r\nbeta\r\n');
    const r = await call(t, 'Read', { file_path: f });
    expect(r.isError).toBe(false);
    expect(r.text).toBe('     1\talpha\n     2\tbeta');
  });

  it('resolves a relative path against the session\u2019s working directory', async () => {
    t = await fileApp(READ_ALLOWED);
    write(path.join(t.workspace, 'sub', 'r.txt'), 'rel\n');
    expect((await call(t, 'Read', { file_path: 'sub/r.txt' })).text).toBe('     1\trel');
  });

  it('reads offset/limit windows with the right line numbers', async () => {
    t = await fileApp(READ_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), lines(10));
    const r = await call(t, 'Read', { file_path: f, offset: 4, limit: 3 });
    expect(r.text).toBe('     4\tline 4\n     5\tline 5\n     6\tline 6');
  });

  it('reads 2,000 lines by default', async () => {
    t = await fileApp(READ_ALLOWED);
    const f = write(path.join(t.workspace, 'long.txt'), lines(2500, 'l'));
    const r = await call(t, 'Read', { file_path: f });
    const got = r.text.split('\n');
    expect(got).toHaveLength(MAX_LINES_TO_READ);
    expect(got.at(-1)).toBe('  2000\tl 2000');
  });

  it('refuses more than 256 KB without a limit, with Claude Code\u2019s message, and reads it with one', async () => {
    t = await fileApp(READ_ALLOWED);
    const f = write(path.join(t.workspace, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(3000));
    const r = await call(t, 'Read', { file_path: f });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('File content (293KB) exceeds maximum allowed size (256KB). Please use offset and limit parameters');
    const ok = await call(t, 'Read', { file_path: f, offset: 2991, limit: 5 });
    expect(ok.isError).toBe(false);
    expect(ok.text.split('\n')).toHaveLength(5);
  });

  it('refuses output over 25,000 tokens with Claude Code\u2019s message', async () => {
    t = await fileApp(READ_ALLOWED);
    // 1,500 lines of 100 characters: under 256 KB, over 25,000 tokens.
    const f = write(path.join(t.workspace, 'wide.txt'), `${'y'.repeat(99)}\n`.repeat(1500));
    const r = await call(t, 'Read', { file_path: f });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/File content \(\d+ tokens\) exceeds maximum allowed tokens \(25000\)\. Please use offset and limit parameters/);
  });

  it('warns about an empty file and about an offset past the end', async () => {
    t = await fileApp(READ_ALLOWED);
    const empty = write(path.join(t.workspace, 'empty.txt'), '');
    const short = write(path.join(t.workspace, 'short.txt'), 'a\nb\n');
    expect((await call(t, 'Read', { file_path: empty })).text).toBe(
      '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>',
    );
    expect((await call(t, 'Read', { file_path: short, offset: 10 })).text).toBe(
      '<system-reminder>Warning: the file exists but is shorter than the provided offset (10). The file has 2 lines.</system-reminder>',
    );
  });

  it('says a missing file does not exist, naming the working directory', async () => {
    t = await fileApp(READ_ALLOWED);
    const r = await call(t, 'Read', { file_path: path.join(t.workspace, 'nope.txt') });
    expect(r).toMatchObject({ isError: true, errorClass: 'not_found' });
    expect(r.text).toContain(`File does not exist. Note: your current working directory is ${t.workspace}.`);
  });

  it('refuses a binary file and reads a UTF-16LE file with a BOM', async () => {
    t = await fileApp(READ_ALLOWED);
    const bin = write(path.join(t.workspace, 'x.bin'), Buffer.from([1, 2, 0, 3]));
    const u16 = write(path.join(t.workspace, 'u16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('h\u00e9llo\n', 'utf16le')]));
    expect((await call(t, 'Read', { file_path: bin })).text).toContain('appears to be a binary file');
    expect((await call(t, 'Read', { file_path: u16 })).text).toBe('     1\th\u00e9llo');
  });
});

describe('Read: other kinds of content', () => {
  it('returns an image as an image block', async () => {
    t = await fileApp(READ_ALLOWED);
    const f = write(path.join(t.workspace, 'dot.png'), PNG);
    const r = await call(t, 'Read', { file_path: f });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } }]);
  });

  it('renders a notebook as its cells with outputs', async () => {
    t = await fileApp(READ_ALLOWED);
    const nb = {
      cells: [
        { cell_type: 'markdown', id: 'm1', source: ['# Hi'] },
        { cell_type: 'code', source: 'print(42)', outputs: [{ output_type: 'stream', text: '42\n' }] },
      ],
      nbformat: 4,
      nbformat_minor: 4,
    };
    const f = write(path.join(t.workspace, 'n.ipynb'), JSON.stringify(nb));
    const r = await call(t, 'Read', { file_path: f });
    expect(r.text).toBe(
      '<cell id="m1"><cell_type>markdown</cell_type># Hi</cell>\n<cell id="cell-1"><cell_type>code</cell_type>print(42)</cell>\n<outputs id="cell-1">42\n</outputs>',
    );
  });

  it('reads a stored result by result://<id>, with offset and limit', async () => {
    t = await fileApp(READ_ALLOWED);
    const meta = t.app.toolexec.results.put({ sessionId: 's-files', tool: 'Bash' }, lines(50, 'out'));
    const r = await call(t, 'Read', { file_path: `result://${meta.id}`, offset: 48, limit: 10 });
    expect(r.isError).toBe(false);
    expect(r.text).toBe('    48\tout 48\n    49\tout 49\n    50\tout 50');
    const missing = await call(t, 'Read', { file_path: 'result://res_nope' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('No stored result result://res_nope');
  });
});

describe('Read: the output hooks receive (tool_response)', () => {
  /** The tool's data (what PostToolUse hooks get as tool_response) and the text the model gets. */
  async function read(input: Record<string, unknown>, root: string) {
    const ctx = directContext({ root, allow: ['Read'] });
    const r = await runDirect(readTool, input, ctx);
    if (r.stage !== 'done') throw new Error(`Read failed at ${r.stage}: ${r.message}`);
    return { data: r.data as Record<string, unknown>, text: r.text, ctx };
  }

  it('carries Claude Code\u2019s file object for text: raw content without line numbers, beside our fields', async () => {
    const root = tmpDir();
    const f = write(path.join(root, 'a.txt'), 'alpha\r\nbeta\r\n\tgamma\n');
    const whole = await read({ file_path: f }, root);
    expect(whole.data.file).toEqual({ filePath: f, content: 'alpha\nbeta\n\tgamma', numLines: 3, startLine: 1, totalLines: 3 });
    // Our fields and what the model reads are unchanged.
    expect(whole.data).toMatchObject({ type: 'text', filePath: f, content: '     1\talpha\n     2\tbeta\n     3\t\tgamma', numLines: 3 });
    expect(whole.text).toBe('     1\talpha\n     2\tbeta\n     3\t\tgamma');
    const g = write(path.join(root, 'b.txt'), lines(10));
    expect((await read({ file_path: g, offset: 4, limit: 2 }, root)).data.file).toEqual({
      filePath: g,
      content: 'line 4\nline 5',
      numLines: 2,
      startLine: 4,
      totalLines: 10,
    });
    // A whole file with blank last lines keeps them, as its lines joined.
    const h = write(path.join(root, 'c.txt'), 'x\n\n');
    expect((await read({ file_path: h }, root)).data.file).toMatchObject({ content: 'x\n', numLines: 2 });
  });

  it('gives an empty file and an offset past the end an empty file object', async () => {
    const root = tmpDir();
    const e = write(path.join(root, 'empty.txt'), '');
    const empty = await read({ file_path: e }, root);
    // Claude Code's type for it: a text read (FileReadTool), whose model-facing text is the warning.
    expect(empty.data.type).toBe('text');
    expect(empty.data.file).toEqual({ filePath: e, content: '', numLines: 0, startLine: 1, totalLines: 0 });
    const s = write(path.join(root, 's.txt'), lines(3));
    expect((await read({ file_path: s, offset: 9 }, root)).data.file).toEqual({ filePath: s, content: '', numLines: 0, startLine: 9, totalLines: 3 });
  });

  it('gives an image as Claude Code\u2019s {base64, type, originalSize}, and a notebook as its cells', async () => {
    const root = tmpDir();
    const png = write(path.join(root, 'dot.png'), PNG);
    const img = await read({ file_path: png }, root);
    expect(img.data).toMatchObject({ type: 'image', file: { base64: PNG.toString('base64'), type: 'image/png', originalSize: PNG.length } });
    const nb = {
      cells: [
        { cell_type: 'markdown', id: 'm1', source: ['# Hi'] },
        { cell_type: 'code', source: ['x = 1\n', 'print(x)'], execution_count: 3, outputs: [{ output_type: 'stream', text: ['1\n'] }] },
      ],
      metadata: { language_info: { name: 'python' } },
      nbformat: 4,
      nbformat_minor: 4,
    };
    const f = write(path.join(root, 'n.ipynb'), JSON.stringify(nb));
    const r = await read({ file_path: f }, root);
    expect(r.data.file).toEqual({
      filePath: f,
      cells: [
        { cellType: 'markdown', source: '# Hi', cell_id: 'm1' },
        { cellType: 'code', source: 'x = 1\nprint(x)', cell_id: 'cell-1', execution_count: 3, language: 'python', outputs: [{ output_type: 'stream', text: '1\n' }] },
      ],
    });
    expect(r.text).toBe('<cell id="m1"><cell_type>markdown</cell_type># Hi</cell>\n<cell id="cell-1"><cell_type>code</cell_type>x = 1\nprint(x)</cell>\n<outputs id="cell-1">1\n</outputs>');
  });

  it('gives a stored result\u2019s lines raw too', async () => {
    const root = tmpDir();
    const ctx = directContext({ root, allow: ['Read'] });
    const meta = (ctx.results as ResultStore).put({ sessionId: 'direct', tool: 'Bash' }, lines(5, 'out'));
    const r = await runDirect(readTool, { file_path: `result://${meta.id}`, offset: 2, limit: 2 }, ctx);
    expect(r.stage === 'done' && (r.data as { file: unknown }).file).toEqual({
      filePath: `result://${meta.id}`,
      content: 'out 2\nout 3',
      numLines: 2,
      startLine: 2,
      totalLines: 5,
    });
  });
});

describe('Read: the FileStateCache', () => {
  it('records a full read with the whole content, and a window with its offset and limit', async () => {
    t = await fileApp(READ_ALLOWED);
    const full = write(path.join(t.workspace, 'full.txt'), 'a\r\nb\r\n');
    const part = write(path.join(t.workspace, 'part.txt'), lines(10));
    await call(t, 'Read', { file_path: full });
    await call(t, 'Read', { file_path: part, offset: 2, limit: 2 });
    const cache = t.app.toolexec.sessions.get('s-files').fileState;
    const ws = t.app.toolexec.workspace;
    expect(cache.get(ws.canonical(full))).toEqual({
      content: 'a\r\nb\r\n',
      timestamp: Math.floor(fs.statSync(full).mtimeMs),
      offset: undefined,
      limit: undefined,
      isPartialView: false,
      identity: `${fs.statSync(full).dev}:${fs.statSync(full).ino}`,
    });
    expect(cache.get(ws.canonical(part))).toMatchObject({ content: 'line 2\nline 3', offset: 2, limit: 2 });
  });

  it('keys the entry by the real file, whatever spelling was read', async () => {
    t = await fileApp(READ_ALLOWED);
    const real = write(path.join(t.workspace, 'dir', 'real.txt'), 'x\n');
    fs.symlinkSync(path.join(t.workspace, 'dir'), path.join(t.workspace, 'alias'));
    await call(t, 'Read', { file_path: path.join(t.workspace, 'alias', '..', 'alias', 'real.txt') });
    expect(t.app.toolexec.sessions.get('s-files').fileState.keys()).toEqual([real]);
  });
});

describe('Read: what it must refuse quickly', () => {
  it('returns an error at once for /dev/zero and /dev/urandom', async () => {
    t = await fileApp({ permissions: { allow: ['Read(//dev/**)'] } });
    for (const dev of ['/dev/zero', '/dev/urandom']) {
      const r = await call(t, 'Read', { file_path: dev });
      expect(r).toMatchObject({ isError: true, errorClass: 'io' });
      expect(r.text).toContain('is not a regular file');
    }
  });

  it('returns an error at once for a FIFO with no writer', async () => {
    t = await fileApp(READ_ALLOWED);
    const fifo = path.join(t.workspace, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await call(t, 'Read', { file_path: fifo });
    expect(r).toMatchObject({ isError: true, errorClass: 'io' });
    expect(r.text).toContain('is not a regular file');
  });

  it('reads windows of a file over 16 MB without closing its descriptor twice (the double close threw in the service and killed it)', async () => {
    t = await fileApp(READ_ALLOWED);
    // 17 MB: streamed, not read whole. CRLF ends and a last line without a newline, as the whole read gives them.
    const f = write(path.join(t.workspace, 'big.log'), `${'x'.repeat(98)}\r\n`.repeat(170_000) + 'tail');
    for (let i = 0; i < 20; i++) {
      const r = await call(t, 'Read', { file_path: f, offset: 10 + i, limit: 2 });
      expect(r.isError, r.text).toBe(false);
      expect(r.text).toBe(`${String(10 + i).padStart(6)}\t${'x'.repeat(98)}\n${String(11 + i).padStart(6)}\t${'x'.repeat(98)}`);
    }
    expect((await call(t, 'Read', { file_path: f, offset: 170_001, limit: 5 })).text).toBe('170001\ttail');
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('refuses a window whose one line is gigabytes long at once, holding no more than the token limit', async () => {
    t = await fileApp(READ_ALLOWED);
    // Sparse: text first (not binary by its head), then 1 GiB with no newline; a line reader held it all, past V8's string limit.
    const f = write(path.join(t.workspace, 'one-line.log'), 'a'.repeat(8192));
    fs.truncateSync(f, 1024 ** 3);
    const rss = process.memoryUsage().rss;
    const r = await call(t, 'Read', { file_path: f, limit: 1 });
    expect(r).toMatchObject({ isError: true, errorClass: 'tool_error' });
    expect(r.text).toContain('exceeds maximum allowed tokens (25000)');
    expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 1024 * 1024);
  });

  it.skipIf(!fs.existsSync('/proc/self/pagemap'))('reads no more than a bounded amount of a file whose stat size says 0 (/proc/self/pagemap holds gigabytes): Read, Edit and Write refuse it', async () => {
    t = await fileApp({ permissions: { allowBypass: true, defaultMode: 'bypassPermissions' } });
    const rss = process.memoryUsage().rss;
    const whole = await call(t, 'Read', { file_path: '/proc/self/pagemap' });
    expect(whole).toMatchObject({ isError: true, errorClass: 'tool_error' });
    expect(whole.text).toContain('exceeds maximum allowed size (256KB)');
    for (const [name, input] of [
      ['Read', { file_path: '/proc/self/pagemap', limit: 1 }],
      ['Edit', { file_path: '/proc/self/pagemap', old_string: 'a', new_string: 'b' }],
      ['Write', { file_path: '/proc/self/pagemap', content: 'x' }],
    ] as const) {
      const r = await call(t, name, input);
      expect(r, name).toMatchObject({ isError: true, errorClass: 'io' });
      expect(r.text).toContain('holds more than its size');
    }
    // An image name on such a file: refused alike.
    fs.symlinkSync('/proc/self/pagemap', path.join(t.workspace, 'map.png'));
    expect((await call(t, 'Read', { file_path: path.join(t.workspace, 'map.png') })).text).toContain('holds more than its size');
    expect(process.memoryUsage().rss - rss).toBeLessThan(500 * 1024 * 1024);
    // A small /proc file still reads.
    expect((await call(t, 'Read', { file_path: '/proc/self/status' })).text).toContain('Name:');
  });

  it('says a directory is a directory', async () => {
    t = await fileApp(READ_ALLOWED);
    fs.mkdirSync(path.join(t.workspace, 'd'));
    const r = await call(t, 'Read', { file_path: path.join(t.workspace, 'd') });
    expect(r).toMatchObject({ isError: true, errorClass: 'io' });
    expect(r.text).toContain('is a directory, not a file');
  });

  it('is read-only, concurrency-safe, never persisted, and its path is what permissions judge', () => {
    const input = { file_path: '/w/a.txt' };
    expect(readTool.isReadOnly(input)).toBe(true);
    expect(readTool.isConcurrencySafe(input)).toBe(true);
    expect(readTool.maxResultSizeChars).toBe(Number.POSITIVE_INFINITY);
    expect(readTool.getPath(input)).toBe('/w/a.txt');
  });
});

describe('Read: files over 16 MB, read as a window', () => {
  /** A sparse file: `head` then zero bytes (no disk blocks) up to `size`; one line from the head on. */
  function sparse(p: string, head: string, size: number): string {
    write(p, head);
    fs.truncateSync(p, size);
    return p;
  }

  it('refuses a single line of 600 MB (more than a string can hold) without taking the service down', async () => {
    t = await fileApp(READ_ALLOWED);
    // The head is text, so the file is not judged binary; the line goes on past V8's longest string.
    const f = sparse(path.join(t.workspace, 'one-line.txt'), 'x'.repeat(8192), 600 * 1024 * 1024);
    const r = await call(t, 'Read', { file_path: f, offset: 1, limit: 1 });
    expect(r).toMatchObject({ isError: true, status: 'failed' });
    expect(r.text).toMatch(/File content \(over \d+ tokens\) exceeds maximum allowed tokens \(25000\)/);
    fs.rmSync(f);
  });

  it('splits lines as a whole read does (\\n, CRLF\u2019s \\r dropped) and reads past the window', async () => {
    t = await fileApp(READ_ALLOWED);
    const f = sparse(path.join(t.workspace, 'big.txt'), `a\nb\r\n${'c'.repeat(9000)}\nd\n`, 17 * 1024 * 1024);
    const r = await call(t, 'Read', { file_path: f, offset: 2, limit: 2 });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(`     2\tb\n     3\t${'c'.repeat(9000)}`);
    fs.rmSync(f);
  });
});
