/**
 * The MCP client side against the real @modelcontextprotocol/server-everything,
 * over stdio and over Streamable HTTP, and against
 * @modelcontextprotocol/server-filesystem rooted at a temp dir: listing,
 * calling through POST /execute, progress, images, validation against the
 * server's JSON Schema, and scheduling by annotations.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, textOf, tmpDir, use, type TestApp } from './helpers.js';
import {
  everythingStdio,
  filesystemStdio,
  EVERYTHING_HTTP,
  EVERYTHING_SSE,
  isAlive,
  makeMcpApp,
  recordEvents,
  serverStatus,
  startHttpFixture,
  waitConnected,
  waitFor,
  type HttpFixture,
} from './helpers-mcp.js';

afterAll(cleanupTmp);

describe('server-everything and server-filesystem over stdio', () => {
  let t: TestApp;
  let fsRoot: string;
  const pids: number[] = [];

  beforeAll(async () => {
    fsRoot = tmpDir('toolexec-mcp-fs-');
    t = await makeMcpApp({
      mcpServers: { everything: everythingStdio, fs: filesystemStdio(fsRoot) },
      permissions: { allow: ['mcp__everything', 'mcp__fs'] },
    });
    await waitConnected(t.app, ['everything', 'fs']);
    pids.push(serverStatus(t.app, 'everything').pid!, serverStatus(t.app, 'fs').pid!);
  });

  afterAll(async () => {
    await t?.close();
    // No server outlives the app.
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  it('lists the tools as deferred mcp__server__tool entries with the server JSON Schema', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/tools' });
    const body = res.json() as { tools: Array<{ name: string }>; deferred_tools: string[] };
    expect(body.deferred_tools).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__fs__write_file']));
    expect(body.tools.map((x) => x.name)).not.toContain('mcp__everything__echo');
    const full = (await t.app.inject({ method: 'GET', url: '/tools?deferred=include' })).json() as {
      tools: Array<{ name: string; input_schema: { properties: Record<string, unknown>; required?: string[] } }>;
    };
    const sum = full.tools.find((x) => x.name === 'mcp__everything__get-sum')!;
    expect(Object.keys(sum.input_schema.properties)).toEqual(['a', 'b']);
    expect(sum.input_schema.required).toEqual(['a', 'b']);

    const servers = (await t.app.inject({ method: 'GET', url: '/mcp/servers' })).json() as { servers: Array<{ name: string; state: string; tools: number; type: string; last_error: string | null }> };
    const ev = servers.servers.find((s) => s.name === 'everything')!;
    expect(ev).toMatchObject({ state: 'connected', type: 'stdio', last_error: null });
    expect(ev.tools).toBeGreaterThanOrEqual(10);
  });

  it('calls echo and get-sum through the pipeline', async () => {
    const r = await execute(t.app, {
      tool_uses: [use('mcp__everything__echo', { message: 'hello' }, 'e1'), use('mcp__everything__get-sum', { a: 2, b: 40 }, 'e2')],
    });
    expect(r.body.executions.map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
    expect(textOf(r.body.tool_results[0]!.content)).toBe('Echo: hello');
    expect(textOf(r.body.tool_results[1]!.content)).toContain('is 42');
    expect(r.body.executions[0]!.decision).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'mcp__everything' } });
  });

  it('rejects input that breaks the server schema at step 2, in words a model can act on', async () => {
    const r = await execute(t.app, { tool_uses: [use('mcp__everything__get-sum', { a: 'two', c: 1 }, 'v1')] });
    const text = textOf(r.body.tool_results[0]!.content);
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'validation', decision: null });
    expect(text).toContain('InputValidationError');
    expect(text).toContain('The parameter `a` type is expected as `number` but provided as `string`');
    expect(text).toContain('The required parameter `b` is missing');
  });

  it('forwards progress notifications of the long-running operation as execution progress', async () => {
    const rec = recordEvents(t.app);
    const r = await execute(t.app, { tool_uses: [use('mcp__everything__trigger-long-running-operation', { duration: 0.3, steps: 3 }, 'p1')] });
    rec.stop();
    expect(r.body.executions[0]!.status).toBe('succeeded');
    const progress = rec.events.filter((e) => e.type === 'execution.progress').map((e) => (e.type === 'execution.progress' ? e.progress : undefined));
    expect(progress).toEqual([
      { progress: 1, total: 3, message: undefined },
      { progress: 2, total: 3, message: undefined },
      { progress: 3, total: 3, message: undefined },
    ]);
    expect(textOf(r.body.tool_results[0]!.content)).toContain('Long running operation completed');
  });

  it('maps image content to an Anthropic image block between the text blocks', async () => {
    const r = await execute(t.app, { tool_uses: [use('mcp__everything__get-tiny-image', {}, 'i1')] });
    const content = r.body.tool_results[0]!.content as Array<{ type: string; text?: string; source?: { type: string; media_type: string; data: string } }>;
    expect(content.map((b) => b.type)).toEqual(['text', 'image', 'text']);
    expect(content[1]!.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    expect(Buffer.from(content[1]!.source!.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  it('runs read-only-annotated calls together and a destructive one alone, in request order', async () => {
    const rec = recordEvents(t.app);
    const target = path.join(fsRoot, 'written.txt');
    const r = await execute(t.app, {
      tool_uses: [
        use('mcp__everything__trigger-long-running-operation', { duration: 0.4, steps: 2 }, 'ro1'),
        use('mcp__everything__trigger-long-running-operation', { duration: 0.4, steps: 2 }, 'ro2'),
        use('mcp__fs__write_file', { path: target, content: 'written by toolexec' }, 'w1'),
        use('mcp__everything__echo', { message: 'after' }, 'ro3'),
      ],
    });
    rec.stop();
    expect(r.body.executions.map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(fs.readFileSync(target, 'utf8')).toBe('written by toolexec');
    const order = rec.events
      .filter((e) => e.type === 'execution.started' || e.type === 'execution.finished')
      .map((e) => `${e.type === 'execution.started' ? 'start' : 'end'}:${e.call.toolUseId}`);
    const at = (s: string): number => order.indexOf(s);
    // The two read-only calls overlap.
    expect(at('start:ro2')).toBeLessThan(at('end:ro1'));
    // The destructive write starts after both ended, and the next call starts after it ended.
    expect(at('start:w1')).toBeGreaterThan(Math.max(at('end:ro1'), at('end:ro2')));
    expect(at('start:ro3')).toBeGreaterThan(at('end:w1'));
    const pool = t.app.toolexec.pool();
    expect(pool.lookup('mcp__fs__write_file')!.isDestructive({})).toBe(true);
    expect(pool.lookup('mcp__fs__read_text_file')!.isConcurrencySafe({})).toBe(true);
  });

  it('works with server-filesystem rooted at a temp dir, and reports its refusals as tool errors', async () => {
    fs.writeFileSync(path.join(fsRoot, 'a.txt'), 'alpha\nbeta\n');
    const r = await execute(t.app, {
      tool_uses: [
        use('mcp__fs__read_text_file', { path: path.join(fsRoot, 'a.txt') }, 'f1'),
        use('mcp__fs__list_directory', { path: fsRoot }, 'f2'),
        use('mcp__fs__read_text_file', { path: '/etc/hostname' }, 'f3'),
      ],
    });
    expect(textOf(r.body.tool_results[0]!.content)).toBe('alpha\nbeta\n');
    expect(textOf(r.body.tool_results[1]!.content)).toContain('[FILE] a.txt');
    expect(r.body.tool_results[2]!.is_error).toBe(true);
    expect(r.body.executions[2]).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(textOf(r.body.tool_results[2]!.content)).toMatch(/outside allowed directories/i);
  });

  it('gives an image server-filesystem reads as the image alone, not its base64 again as text from structuredContent', async () => {
    // read_media_file answers {content: [image], structuredContent: {content: [image]}}: the same base64 twice.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const big = Buffer.concat([png, Buffer.alloc(40_000, 7)]); // past the persist threshold as base64 text
    fs.writeFileSync(path.join(fsRoot, 'pic.png'), big);
    const r = await execute(t.app, { tool_uses: [use('mcp__fs__read_media_file', { path: path.join(fsRoot, 'pic.png') }, 'm1')] });
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded', result_id: null });
    const content = r.body.tool_results[0]!.content as Array<{ type: string; text?: string; source?: { media_type: string; data: string } }>;
    expect(content.map((b) => b.type)).toEqual(['image']);
    expect(content[0]!.source).toMatchObject({ media_type: 'image/png', data: big.toString('base64') });
  });
});

describe('server-everything over Streamable HTTP', () => {
  let t: TestApp;
  let server: HttpFixture;

  beforeAll(async () => {
    server = await startHttpFixture(EVERYTHING_HTTP);
    t = await makeMcpApp({
      mcpServers: { web: { type: 'http', url: server.url, headers: { 'x-test': '${TOOLEXEC_MCP_TEST_HEADER:-yes}' } } },
      permissions: { allow: ['mcp__web'] },
    });
    await waitConnected(t.app, ['web']);
  });

  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it('lists, calls, and forwards progress over HTTP', async () => {
    expect(serverStatus(t.app, 'web')).toMatchObject({ type: 'http', state: 'connected', server_info: { name: 'mcp-servers/everything' } });
    const rec = recordEvents(t.app);
    const r = await execute(t.app, {
      tool_uses: [
        use('mcp__web__echo', { message: 'over http' }, 'h1'),
        use('mcp__web__get-sum', { a: 1, b: 2 }, 'h2'),
        use('mcp__web__trigger-long-running-operation', { duration: 0.2, steps: 2 }, 'h3'),
      ],
    });
    rec.stop();
    expect(r.body.executions.map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(textOf(r.body.tool_results[0]!.content)).toBe('Echo: over http');
    expect(textOf(r.body.tool_results[1]!.content)).toContain('is 3');
    const progress = rec.events.filter((e) => e.type === 'execution.progress' && e.call.toolUseId === 'h3');
    expect(progress).toHaveLength(2);
  });

  it('lists with the server schema, maps images, and schedules by annotations over HTTP too', async () => {
    const full = (await t.app.inject({ method: 'GET', url: '/tools?deferred=include' })).json() as {
      tools: Array<{ name: string; input_schema: { properties: Record<string, unknown>; required?: string[] } }>;
    };
    const sum = full.tools.find((x) => x.name === 'mcp__web__get-sum')!;
    expect(Object.keys(sum.input_schema.properties)).toEqual(['a', 'b']);

    const img = await execute(t.app, { tool_uses: [use('mcp__web__get-tiny-image', {}, 'hi1')] });
    const content = img.body.tool_results[0]!.content as Array<{ type: string; source?: { media_type: string; data: string } }>;
    expect(content.map((b) => b.type)).toEqual(['text', 'image', 'text']);
    expect(content[1]!.source).toMatchObject({ media_type: 'image/png' });
    expect(Buffer.from(content[1]!.source!.data, 'base64').subarray(1, 4).toString()).toBe('PNG');

    const pool = t.app.toolexec.pool();
    const long = pool.lookup('mcp__web__trigger-long-running-operation')!;
    expect(long.isConcurrencySafe({})).toBe(true);
    const rec = recordEvents(t.app);
    const r = await execute(t.app, {
      tool_uses: [
        use('mcp__web__trigger-long-running-operation', { duration: 0.4, steps: 2 }, 'hr1'),
        use('mcp__web__trigger-long-running-operation', { duration: 0.4, steps: 2 }, 'hr2'),
      ],
    });
    rec.stop();
    expect(r.body.executions.map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
    const order = rec.events
      .filter((e) => e.type === 'execution.started' || e.type === 'execution.finished')
      .map((e) => `${e.type === 'execution.started' ? 'start' : 'end'}:${e.call.toolUseId}`);
    // Read-only by its annotations: the two calls overlap.
    expect(order.indexOf('start:hr2')).toBeLessThan(order.indexOf('end:hr1'));
  });
});

describe('server-everything over the legacy HTTP+SSE transport', () => {
  let t: TestApp | undefined;
  let server: HttpFixture | undefined;

  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it('connects with type "sse", lists and calls', async () => {
    server = await startHttpFixture(EVERYTHING_SSE);
    t = await makeMcpApp({ mcpServers: { old: { type: 'sse', url: `http://127.0.0.1:${server.port}/sse` } }, permissions: { allow: ['mcp__old'] } });
    await waitConnected(t.app, ['old']);
    expect(serverStatus(t.app, 'old')).toMatchObject({ type: 'sse', state: 'connected' });
    const r = await execute(t.app, { tool_uses: [use('mcp__old__get-sum', { a: 20, b: 22 }, 's1')] });
    expect(textOf(r.body.tool_results[0]!.content)).toContain('is 42');
  });
});

describe('a Streamable HTTP server that dies', () => {
  let t: TestApp | undefined;
  let server: HttpFixture | undefined;

  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it('ends the call in flight with mcp_disconnected, then reconnects to the restarted server', async () => {
    server = await startHttpFixture(EVERYTHING_HTTP);
    const port = String(server.port);
    t = await makeMcpApp({ mcpServers: { web: { type: 'http', url: server.url } }, permissions: { allow: ['mcp__web'] } });
    await waitConnected(t.app, ['web']);
    const rec = recordEvents(t.app);
    const pending = execute(t.app, { tool_uses: [use('mcp__web__trigger-long-running-operation', { duration: 60, steps: 600 }, 'long')] });
    await waitFor(() => rec.events.some((e) => e.type === 'execution.progress'), 'the first progress notification');
    await server.stop();
    const r = await pending;
    rec.stop();
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'mcp_disconnected' });
    expect(serverStatus(t.app, 'web').state).not.toBe('connected');

    server = await startHttpFixture(EVERYTHING_HTTP, { PORT: port });
    await waitConnected(t.app, ['web']);
    const again = await execute(t.app, { tool_uses: [use('mcp__web__echo', { message: 'again' }, 'e')] });
    expect(textOf(again.body.tool_results[0]!.content)).toBe('Echo: again');
  });
});
