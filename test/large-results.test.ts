/**
 * Large results (contract §6): over min(tool.maxResultSizeChars, 20,000) the
 * result is stored in SQLite in chunks; the model gets the first 4,096
 * characters and a result://<id> line; Read serves it back by lines.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SpillingOutputSink } from '../src/results/output-sink.js';
import { CHUNK_CHARS, ResultStore } from '../src/results/store.js';
import { openDatabase, PAGE_CACHE_KIB } from '../src/storage/db.js';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, execute, makeApp, textOf, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} ${'x'.repeat(40)}`).join('\n') + '\n';

const bigTool = (maxResultSizeChars: number, streamed = false) =>
  buildTool({
    name: 'Big',
    description: 'Prints n lines',
    inputSchema: z.strictObject({ n: z.number().int() }),
    maxResultSizeChars,
    checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test' }),
    call: async (input, ctx) => {
      if (!streamed) return { data: lines(input.n) };
      const sink = ctx.createOutput();
      for (let i = 0; i < input.n; i++) sink.write(`line ${i + 1} ${'x'.repeat(40)}\n`);
      const r = sink.finish();
      return r.kind === 'inline' ? { data: r.text } : { data: `[persisted ${r.id}]\n${r.preview}`, resultId: r.id };
    },
  });

describe('persistence threshold', () => {
  it('keeps a result at the threshold inline and persists one just over it', async () => {
    t = await makeApp({ results: { persistThresholdChars: 1000 } }, { extraTools: [bigTool(100_000)] });
    const small = await execute(t.app, { tool_uses: [use('Big', { n: 10 })] });
    expect(small.body.executions[0]!.result_id).toBeNull();
    const big = await execute(t.app, { tool_uses: [use('Big', { n: 100 })] });
    expect(big.body.executions[0]!.result_id).toMatch(/^res_/);
  });

  it('uses the smaller of the tool’s maxResultSizeChars and the configured threshold', async () => {
    t = await makeApp({}, { extraTools: [bigTool(500)] });
    const r = await execute(t.app, { tool_uses: [use('Big', { n: 20 })] });
    expect(r.body.executions[0]!.result_id).toMatch(/^res_/);
  });

  it('gives the model the preview and a result:// line, stores it whole, and Read serves it by lines', async () => {
    t = await makeApp({ permissions: { allow: ['Read'] } }, { extraTools: [bigTool(100_000)] });
    const n = 5000;
    const r = await execute(t.app, { session_id: 'lr', tool_uses: [use('Big', { n })] });
    const id = r.body.executions[0]!.result_id!;
    const text = textOf(r.body.tool_results[0]!.content);
    expect(text).toContain(`result://${id}`);
    // The first 4,096 characters, cut where the last whole line in them ends.
    const first = lines(n).slice(0, 4096);
    expect(text).toContain(`${first.slice(0, first.lastIndexOf('\n'))}\n...\n</persisted-output>`);
    expect(text).not.toContain(first);
    expect(text.length).toBeLessThan(4096 + 1000);
    expect(t.app.toolexec.results.readAll(id)).toBe(lines(n));
    const meta = t.app.toolexec.results.meta(id)!;
    expect(meta.chunk_count).toBeGreaterThan(1);
    expect(meta.total_lines).toBe(n);

    const read = await execute(t.app, { session_id: 'lr', tool_uses: [use('Read', { file_path: `result://${id}`, offset: 4000, limit: 3 })] });
    expect(textOf(read.body.tool_results[0]!.content)).toBe(
      [4000, 4001, 4002].map((k) => `${String(k).padStart(6)}\tline ${k} ${'x'.repeat(40)}`).join('\n'),
    );
  });

  it('cuts the preview where a line ends, so that no line shown is half of one (a real Bash seq)', async () => {
    t = await makeApp({});
    const r = await execute(t.app, { tool_uses: [use('Bash', { command: 'seq 1 30000' })] });
    expect(r.body.executions[0]!.result_id).toMatch(/^res_/);
    const text = textOf(r.body.tool_results[0]!.content);
    const preview = /characters\):\n([\s\S]*)\n\.\.\.\n<\/persisted-output>$/.exec(text)![1]!;
    const shown = preview.split('\n');
    // Every line shown is the output's line at that place: 1, 2, …, k (not "…, 1040, 104").
    expect(shown).toEqual(Array.from({ length: shown.length }, (_, i) => String(i + 1)));
    expect(text).toContain(`Preview (first ${preview.length.toLocaleString('en-US')} characters)`);
    expect(preview.length).toBeLessThanOrEqual(4096);
  });

  it('never ends the preview with half a character (a real Bash line of emoji, no newline to cut at)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] } });
    // "a" first: the 4,096th UTF-16 unit is the first half of an emoji.
    const r = await execute(t.app, { tool_uses: [use('Bash', { command: `node -e 'process.stdout.write("a" + "\\u{1F600}".repeat(15000))'` })] });
    expect(r.body.executions[0]!.result_id).toMatch(/^res_/);
    const text = textOf(r.body.tool_results[0]!.content);
    // A lone surrogate makes Anthropic's API refuse the request ("no low surrogate in string").
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    const preview = /characters\):\n([\s\S]*)\n\.\.\.\n<\/persisted-output>$/.exec(text)![1]!;
    expect(preview).toBe(`a${'\u{1F600}'.repeat(2047)}`);
    expect(text).toContain('Preview (first 4,095 characters)');
  });

  it('never persists a tool whose maxResultSizeChars is Infinity', async () => {
    t = await makeApp({ results: { persistThresholdChars: 100 } }, { extraTools: [bigTool(Number.POSITIVE_INFINITY)] });
    const r = await execute(t.app, { tool_uses: [use('Big', { n: 50 })] });
    expect(r.body.executions[0]!.result_id).toBeNull();
    expect(textOf(r.body.tool_results[0]!.content)).toBe(lines(50));
  });

  it('a streamed output spills to the store past the threshold and keeps only the preview in memory', async () => {
    t = await makeApp({}, { extraTools: [bigTool(100_000, true)] });
    const r = await execute(t.app, { tool_uses: [use('Big', { n: 20_000 })] });
    const id = r.body.executions[0]!.result_id!;
    expect(t.app.toolexec.results.readAll(id)).toBe(lines(20_000));
  });
});

describe('GET /results/:id conditional requests', () => {
  it('serves a Range only under an If-Range holding its ETag (another ETag or a date gets the whole), and answers 304 to its ETag in If-None-Match', async () => {
    t = await makeApp({ results: { persistThresholdChars: 1000 } }, { extraTools: [bigTool(100_000)] });
    const r = await execute(t.app, { tool_uses: [use('Big', { n: 100 })] });
    const id = r.body.executions[0]!.result_id!;
    const whole = lines(100);
    const get = (headers: Record<string, string>) => t!.app.inject({ method: 'GET', url: `/results/${id}`, headers });
    const same = await get({ range: 'bytes=0-9', 'if-range': `"${id}"` });
    expect(same.statusCode).toBe(206);
    expect(same.body).toBe(whole.slice(0, 10));
    for (const ifRange of ['"res_other"', `W/"${id}"`, 'Wed, 21 Oct 2015 07:28:00 GMT']) {
      const other = await get({ range: 'bytes=0-9', 'if-range': ifRange });
      expect(other.statusCode).toBe(200);
      expect(other.headers['content-range']).toBeUndefined();
      expect(other.body).toBe(whole);
    }
    for (const inm of [`"${id}"`, `"res_x", W/"${id}"`, '*']) {
      const cached = await get({ 'if-none-match': inm });
      expect(cached.statusCode).toBe(304);
      expect(cached.body).toBe('');
      expect(cached.headers.etag).toBe(`"${id}"`);
    }
    // A range past the end is refused with the size (RFC 9110 §15.5.17), in the error's JSON.
    const past = await get({ range: `bytes=${whole.length}-` });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${whole.length}`);
    expect(past.json().error.code).toBe('TOOLEXEC_ERR_RANGE_NOT_SATISFIABLE');
    const stale = await get({ 'if-none-match': '"res_other"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.body).toBe(whole);
  });
});

describe('SpillingOutputSink', () => {
  it('holds at most the threshold in memory, then writes chunks; multibyte text survives chunk edges', async () => {
    t = await makeApp();
    const store = t.app.toolexec.results;
    const sink = new SpillingOutputSink({ store, thresholdChars: 100, previewChars: 10, sessionId: 's', executionId: 'e', tool: 'T' });
    const piece = '日本語😀é';
    let all = '';
    for (let i = 0; i < CHUNK_CHARS; i++) {
      sink.write(piece);
      all += piece;
    }
    const r = sink.finish();
    expect(r.kind).toBe('persisted');
    if (r.kind !== 'persisted') return;
    expect(r.preview).toBe(all.slice(0, 10));
    expect(store.readAll(r.id)).toBe(all);
    expect(r.totalBytes).toBe(Buffer.byteLength(all));
    // Byte ranges across chunk edges concatenate to the exact bytes.
    const bytes = Buffer.concat([...store.bytes(r.id, 100_000, 400_000)]);
    expect(bytes.equals(Buffer.from(all).subarray(100_000, 400_001))).toBe(true);
  });
});

describe('memory while a result is stored', () => {
  it('the database keeps at most 4 MB of pages in memory, not the 16 MB better-sqlite3 builds SQLite with', async () => {
    // A 100 MB result streamed into chunks passes every page through the cache:
    // with 16 MB they all stay resident (bench/large-result measures the RSS).
    t = await makeApp();
    expect(PAGE_CACHE_KIB).toBeGreaterThanOrEqual(-4000);
    expect(t.app.toolexec.db.pragma('cache_size', { simple: true })).toBe(PAGE_CACHE_KIB);
    const file = openDatabase({ path: ':memory:' });
    expect(file.pragma('cache_size', { simple: true })).toBe(PAGE_CACHE_KIB);
    file.close();
  });
});

describe('Read of a stored result: lines that span chunks', () => {
  it('gives every line whole, also one that starts in one chunk and ends in the next', () => {
    const store = new ResultStore(openDatabase({ path: ':memory:' }));
    const all = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'y'.repeat(50)}`);
    const { id } = store.put({ sessionId: 's', tool: 't' }, `${all.join('\n')}\n`);
    const wrong = all.filter((line, k) => store.readLines(id, k, 1)!.lines[0] !== line);
    expect(wrong).toEqual([]);
    expect(store.readLines(id, 1090, 5)!.lines).toEqual(all.slice(1090, 1095));
  });

  it('refuses a line longer than the output can carry instead of giving its last chunk', async () => {
    t = await makeApp({ permissions: { allow: ['Read'] } });
    const store = t.app.toolexec.results;
    const { id } = store.put({ sessionId: 'lr', tool: 't' }, `a\n${'x'.repeat(5 * CHUNK_CHARS)}\nb\n`);
    const huge = await execute(t.app, { session_id: 'lr', tool_uses: [use('Read', { file_path: `result://${id}`, offset: 2, limit: 1 })] });
    expect(huge.body.tool_results[0]).toMatchObject({ is_error: true });
    expect(textOf(huge.body.tool_results[0]!.content)).toContain('exceeds maximum allowed tokens (25000)');
    const after = await execute(t.app, { session_id: 'lr', tool_uses: [use('Read', { file_path: `result://${id}`, offset: 3 })] });
    expect(textOf(after.body.tool_results[0]!.content)).toBe('     3\tb');
    // Lines under the limit that span chunks come back whole.
    const { id: id2 } = store.put({ sessionId: 'lr', tool: 't' }, `a\n${'z'.repeat(CHUNK_CHARS + 10)}\n`);
    const r = store.readLines(id2, 1, 1)!;
    expect(r.lines[0]).toHaveLength(CHUNK_CHARS + 10);
  });
});
