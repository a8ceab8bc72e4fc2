/**
 * MCP servers that misbehave, as real child processes
 * (test/fixtures/mcp-hostile/hostile-server.mjs, newline-delimited JSON-RPC
 * written by hand): garbage tool lists, malformed and hostile tools/call
 * answers, a stderr flood, and servers that fail to initialize. Whatever a
 * server does, the service answers below 500, the call ends with a clear
 * tool_result and error class, /healthz answers, and the other servers'
 * tools keep working.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_MESSAGE_BYTES, ProcessStdioTransport } from '../src/mcp/stdio-transport.js';
import { cleanupTmp, execute, textOf, use, type TestApp } from './helpers.js';
import { makeMcpApp, serverStatus, waitConnected, waitFor } from './helpers-mcp.js';

const HOSTILE = fileURLToPath(new URL('./fixtures/mcp-hostile/hostile-server.mjs', import.meta.url));
const hostile = (...args: string[]) => ({ command: process.execPath, args: [HOSTILE, ...args] });
/** The name pattern model providers accept for a tool. */
const API_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

async function expectHealthy(app: FastifyInstance): Promise<void> {
  const h = await app.inject({ method: 'GET', url: '/healthz' });
  expect(h.statusCode).toBe(200);
}

/** One call through POST /execute: the HTTP status is checked, the result returned. */
async function call(app: FastifyInstance, tool: string, input: unknown = {}) {
  const r = await execute(app, { tool_uses: [use(tool, input)] });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
  expect(r.status).toBe(200);
  const exec = r.body.executions[0]!;
  const result = r.body.tool_results[0]!;
  return { exec, result, text: textOf(result.content), content: result.content };
}

/** Another server's tool still answers. */
async function expectOtherServerWorks(app: FastifyInstance, server: string): Promise<void> {
  const r = await call(app, `mcp__${server}__echo`, { message: 'still here' });
  expect(r.exec.status).toBe('succeeded');
  expect(r.text).toBe('echo: still here');
}

interface ServersBody {
  servers: Array<{ name: string; state: string; tools: number; tool_names: string[]; unusable_tools: Array<{ name: string; error: string }>; last_error: string | null; problems: Array<{ kind: string; tools: string[] }> }>;
}

async function servers(app: FastifyInstance): Promise<ServersBody['servers']> {
  const res = await app.inject({ method: 'GET', url: '/mcp/servers' });
  expect(res.statusCode).toBe(200);
  return (res.json() as ServersBody).servers;
}

describe('a tools/list of garbage', () => {
  it('serves the valid tools under normalised names, reports the rest, and never lists a name a model provider refuses', async () => {
    t = await makeMcpApp({ mcpServers: { g: { ...hostile('--list=garbage'), required: true }, ok: hostile() }, permissions: { allow: ['mcp__g', 'mcp__ok'] } });
    await waitConnected(t.app, ['g', 'ok']);
    const g = (await servers(t.app)).find((s) => s.name === 'g')!;
    expect(g.state).toBe('connected');

    // Definitions that are not tools: reported, by the name they had (if any), never served.
    const unusable = g.unusable_tools;
    expect(unusable.filter((u) => u.name === '(unnamed)')).toHaveLength(4);
    const why = Object.fromEntries(unusable.filter((u) => u.name !== '(unnamed)').map((u) => [u.name, u.error]));
    for (const bad of ['schema_string', 'schema_array', 'schema_missing', 'schema_typed_string', 'schema_null', 'description_number']) {
      expect(why[bad], bad).toContain('not a valid MCP tool');
    }
    expect(why.dup).toContain('lists two tools of this name');
    // A name that names nothing is not served as mcp__g__ (it was, and callable): reported instead.
    expect(why['']).toBe('its name is empty');
    expect(why['   ']).toBe('its name is blank (only whitespace)');
    expect(why['nul\u0000tool']).toBe('its name holds a control character');
    // A 100,000-character name is reported clipped, not held or echoed whole.
    const long = unusable.find((u) => u.name.startsWith('LLLL'))!;
    expect(long.name).toHaveLength(200);
    expect(long.error).toContain('its name is 100000 characters');
    expect(JSON.stringify(g).length).toBeLessThan(20_000);

    // Names are normalised as Claude Code does: every character outside [A-Za-z0-9_-] becomes "_".
    const pool = t.app.toolexec.pool();
    expect(pool.lookup('mcp__g__my_tool')?.mcpInfo).toEqual({ serverName: 'g', toolName: 'my tool' });
    expect(pool.lookup('mcp__g__fs_read')?.mcpInfo).toEqual({ serverName: 'g', toolName: 'fs/read' });
    expect(pool.lookup('mcp__g__caf_')?.mcpInfo).toEqual({ serverName: 'g', toolName: 'café' });
    // 工具 and 道具 both become "__", "a.b" and "a b" both "a_b": clashes, none of them served.
    const problems = g.problems.map((p) => `${p.kind}:${p.tools.join(',')}`).sort();
    expect(problems).toEqual([`mcp_name_clash:mcp__g____`, `mcp_name_clash:mcp__g__a_b`, `name_too_long:mcp__g__${'m'.repeat(57)}`]);
    expect(pool.lookup('mcp__g____')).toBeUndefined();
    expect(pool.lookup('mcp__g__a_b')).toBeUndefined();
    expect(pool.lookup('mcp__g__dup')).toBeUndefined();
    expect(pool.lookup('mcp__g__')).toBeUndefined();
    expect(pool.lookup('mcp__g____')).toBeUndefined();
    expect(pool.lookup('mcp__g__nul_tool')).toBeUndefined();
    // 64 characters in all is the limit: mcp__g__ and 56 more is served, 57 more is not.
    expect(pool.lookup(`mcp__g__${'n'.repeat(56)}`)).toBeDefined();
    expect(pool.lookup(`mcp__g__${'m'.repeat(57)}`)).toBeUndefined();

    // The catalog holds only names a provider accepts, in every format.
    for (const format of ['anthropic', 'openai', 'mcp']) {
      const res = await t.app.inject({ method: 'GET', url: `/tools?format=${format}&deferred=include` });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { tools: Array<{ name?: string; function?: { name: string } }> };
      const names = body.tools.map((x) => x.name ?? x.function!.name);
      expect(names).toContain('mcp__g__my_tool');
      for (const n of names) expect(n, n).toMatch(API_NAME);
    }

    // Calls reach the server under the tool's own name, by the normalised or the original spelling.
    expect((await call(t.app, 'mcp__g__my_tool')).text).toBe('called "my tool"');
    expect((await call(t.app, 'mcp__g__fs/read')).text).toBe('called "fs/read"');
    expect((await call(t.app, 'mcp__g__caf_')).text).toBe('called "café"');
    expect((await call(t.app, `mcp__g__${'n'.repeat(56)}`)).text).toBe(`called "${'n'.repeat(56)}"`);
    for (const name of ['mcp__g____', 'mcp__g__a_b', 'mcp__g__dup', 'mcp__g__schema_string']) {
      const r = await call(t.app, name);
      expect(r.exec).toMatchObject({ status: 'failed', error_class: 'not_found' });
      expect(r.text).toContain(`No such tool available: ${name}`);
    }

    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    await expectHealthy(t.app);
    await expectOtherServerWorks(t.app, 'ok');
  });

  it('takes at most 1,000 tools from a server and at most 50 pages of an endless listing', async () => {
    t = await makeMcpApp({
      mcpServers: { many: hostile('--list=many:5000'), paged: hostile('--list=paged'), ok: hostile() },
      permissions: { allow: ['mcp__many', 'mcp__ok'] },
    });
    await waitConnected(t.app, ['many', 'paged', 'ok']);
    const all = await servers(t.app);
    const many = all.find((s) => s.name === 'many')!;
    expect(many.tools).toBe(1000);
    expect(many.unusable_tools).toHaveLength(4000);
    expect(many.unusable_tools[0]).toEqual({ name: 't1000', error: 'the server lists more than 1000 tools; the rest are not served' });
    // Five tools a page, and a nextCursor every time: the listing stops after 50 pages.
    expect(all.find((s) => s.name === 'paged')!.tools).toBe(250);

    const res = await t.app.inject({ method: 'GET', url: '/tools' });
    expect(res.statusCode).toBe(200);
    const deferred = (res.json() as { deferred_tools: string[] }).deferred_tools;
    expect(deferred.filter((n) => n.startsWith('mcp__many__'))).toHaveLength(1000);
    expect(deferred.filter((n) => n.startsWith('mcp__paged__'))).toHaveLength(250);

    expect((await call(t.app, 'mcp__many__t999')).text).toBe('called "t999"');
    expect((await call(t.app, 'mcp__many__t1000')).exec).toMatchObject({ status: 'failed', error_class: 'not_found' });
    await expectHealthy(t.app);
    await expectOtherServerWorks(t.app, 'ok');
  });
});

describe('tools/call answers that break the rules', () => {
  it('ends each call with a clear result and class, and the server stays connected', async () => {
    // `slow` takes the calls that must time out; its limit leaves a loaded machine ample time to deliver what comes first.
    t = await makeMcpApp({
      mcpServers: { h: { ...hostile(), timeoutMs: 10_000 }, slow: { ...hostile(), timeoutMs: 1000 }, ok: hostile() },
      permissions: { allow: ['mcp__h', 'mcp__slow', 'mcp__ok'] },
    });
    await waitConnected(t.app, ['h', 'slow', 'ok']);
    const pids = [serverStatus(t.app, 'h').pid, serverStatus(t.app, 'slow').pid];

    // Log lines, JSON that is not JSON-RPC and binary noise on stdout are skipped; the answer after them counts.
    let r = await call(t.app, 'mcp__h__noise', { message: 'x' });
    expect(r.exec).toMatchObject({ status: 'succeeded', error_class: null });
    expect(r.text).toBe('after noise: x');

    // A content type MCP does not define is left out with a note; the rest of the answer is kept.
    r = await call(t.app, 'mcp__h__unknown_content');
    expect(r.exec.status).toBe('succeeded');
    expect(r.text).toBe('known part\n[content of type "video" omitted: not an MCP content type]');

    // Content that is not an array: not a tool result at all.
    r = await call(t.app, 'mcp__h__content_not_array');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(r.result.is_error).toBe(true);
    expect(r.text).toContain('MCP server "h" answered content_not_array with something that is not an MCP tool result (content: Invalid input: expected array, received object)');

    // Images the model provider would refuse never reach the model.
    r = await call(t.app, 'mcp__h__bad_image');
    expect(r.exec.status).toBe('succeeded');
    expect(r.text).toBe('[image content omitted: it is not valid MCP content (data: Invalid Base64 string)]');
    r = await call(t.app, 'mcp__h__bad_image_mixed');
    expect(r.text).toBe('a caption\n[image content omitted: it is not valid MCP content (data: Invalid Base64 string)]');
    r = await call(t.app, 'mcp__h__fake_image');
    expect(r.text).toBe('[image omitted: its data is not a JPEG, PNG, GIF or WebP image]');
    // A PNG labelled image/jpeg, its base64 wrapped over lines: sent as the PNG it is.
    r = await call(t.app, 'mcp__h__mislabelled_image');
    expect(r.content).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: expect.stringMatching(/^iVBORw0KGgo[A-Za-z0-9+/]+=*$/) } }]);

    // isError without content: an error the model can see, not an empty success.
    for (const name of ['error_empty', 'error_blank']) {
      r = await call(t.app, `mcp__h__${name}`);
      expect(r.exec).toMatchObject({ status: 'failed', error_class: 'tool_error' });
      expect(r.result).toMatchObject({ is_error: true, content: `(mcp__h__${name} completed with no output)` });
    }

    // JSON-RPC errors: the server's own, whatever its code, never taken for a disconnect or a client timeout.
    const rpc = async (code: unknown, message: unknown) => call(t!.app, 'mcp__h__rpc_error', { code, message });
    r = await rpc(-32000, 'generic');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(r.text).toContain('MCP server "h" failed rpc_error: MCP error -32000: generic');
    r = await rpc(-32001, 'my backend timed out');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'timeout' });
    expect(r.text).toContain('MCP server "h" failed rpc_error: MCP error -32001: my backend timed out');
    r = await rpc(-32602, 'bad params');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'validation' });
    r = await rpc(-32601, 'unknown tool');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'not_found' });
    r = await rpc(123456, 'x'.repeat(10_000));
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(r.text.length).toBeLessThan(1000);

    // Answers the client cannot match to the call (an error code that is not an integer, a null
    // result, the wrong id) and no answer at all: the call times out after the server's timeoutMs,
    // and says what came meanwhile.
    r = await call(t.app, 'mcp__slow__rpc_error', { code: 'weird', message: 'a string code' });
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'timeout' });
    expect(r.text).toContain('MCP server "slow" did not answer rpc_error within 1000 ms');
    expect(r.text).toContain('meanwhile it sent a message that could not be used: the server wrote a line that is not JSON-RPC: ');
    expect(r.text).toContain('a string code');
    r = await call(t.app, 'mcp__slow__null_result');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'timeout' });
    expect(r.text).toContain('not JSON-RPC');
    r = await call(t.app, 'mcp__slow__wrong_id');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'timeout' });
    expect(r.text).toContain('Received a response for an unknown message ID');
    r = await call(t.app, 'mcp__slow__silent');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'timeout' });
    expect(r.text).toContain('MCP server "slow" did not answer silent within 1000 ms (a progress notification restarts the wait)</tool_use_error>');

    // Two answers: the first counts, the second is dropped, and the next call gets its own.
    r = await call(t.app, 'mcp__h__twice', { message: 'm' });
    expect(r.text).toBe('first: m');
    r = await call(t.app, 'mcp__h__echo', { message: 'next' });
    expect(r.text).toBe('echo: next');

    expect(serverStatus(t.app, 'h')).toMatchObject({ state: 'connected', pid: pids[0] });
    expect(serverStatus(t.app, 'slow')).toMatchObject({ state: 'connected', pid: pids[1] });
    await expectHealthy(t.app);
    await expectOtherServerWorks(t.app, 'ok');
  });

  it('stores a result of several MB as a large result, and closes the connection on one past the message limit', async () => {
    t = await makeMcpApp({ mcpServers: { h: { ...hostile(), timeoutMs: 30_000 }, ok: hostile() }, permissions: { allow: ['mcp__h', 'mcp__ok'] } });
    await waitConnected(t.app, ['h', 'ok']);

    const chars = 8_000_000;
    const big = await call(t.app, 'mcp__h__huge', { chars });
    expect(big.exec).toMatchObject({ status: 'succeeded', error_class: null });
    const id = big.exec.result_id!;
    expect(id).toBeTruthy();
    expect(big.text).toContain(`result://${id}`);
    expect(big.text).toContain('8,000,000 characters');
    expect(big.text.length).toBeLessThan(6000);
    expect(t.app.toolexec.results.readAll(id)).toHaveLength(chars);

    // One line over the limit: the connection is closed while the line is still arriving, not buffered whole.
    const pid = serverStatus(t.app, 'h').pid;
    const over = await call(t.app, 'mcp__h__huge', { chars: DEFAULT_MAX_MESSAGE_BYTES + 1000 });
    expect(over.exec).toMatchObject({ status: 'failed', error_class: 'mcp_disconnected' });
    expect(over.text).toContain(`the server sent a message larger than ${DEFAULT_MAX_MESSAGE_BYTES} bytes`);
    await expectHealthy(t.app);
    await expectOtherServerWorks(t.app, 'ok');
    await waitFor(() => {
      const s = serverStatus(t!.app, 'h');
      return s.state === 'connected' && s.pid !== pid;
    }, 'the server to be restarted');
    expect((await call(t.app, 'mcp__h__echo', { message: 'back' })).text).toBe('echo: back');
  });
});

describe('a server that floods stderr', () => {
  it('is drained without end and only a bounded tail is kept', async () => {
    t = await makeMcpApp({ mcpServers: { f: { ...hostile('--stderr-flood'), timeoutMs: 10_000 }, ok: hostile() }, permissions: { allow: ['mcp__f', 'mcp__ok'] } });
    await waitConnected(t.app, ['f', 'ok']);
    const conns = (t.app.toolexec.mcp as unknown as { connections: Array<{ serverName: string; status(): { pid: number | null } } & Record<string, unknown>> }).connections;
    const transport = conns.find((c) => c.serverName === 'f')!['transport'];
    expect(transport).toBeInstanceOf(ProcessStdioTransport);

    // Stderr is a pipe written synchronously: a reader that fell behind would stall the server, and its answers.
    const target = 64 * 1024 * 1024;
    let written = 0;
    while (written < target) {
      const r = await call(t.app, 'mcp__f__stderr_bytes');
      expect(r.exec.status, r.text).toBe('succeeded');
      written = Number(r.text);
      expect((transport as ProcessStdioTransport).stderrTail().length).toBeLessThanOrEqual(2 * 4096);
    }
    await expectOtherServerWorks(t.app, 'ok');

    // Its end is reported with the tail of what it wrote, clipped.
    const end = await call(t.app, 'mcp__f__exit');
    expect(end.exec).toMatchObject({ status: 'failed', error_class: 'mcp_disconnected' });
    const s = await waitFor(() => serverStatus(t!.app, 'f').last_error, 'the last error');
    expect(s).toMatch(/process exited with code 3; stderr: E+/);
    expect(s.length).toBeLessThanOrEqual(500);
    await expectHealthy(t.app);
    await expectOtherServerWorks(t.app, 'ok');
  });
});

describe('a server that fails to initialize', () => {
  it('is reported with its last error and retried; /readyz reflects only the required ones', async () => {
    t = await makeMcpApp({
      mcpServers: {
        dies: { ...hostile('--init=exit'), required: true },
        invalid: hostile('--init=invalid'),
        old: hostile('--init=bad-version'),
        refuses: hostile('--init=error'),
        nolist: { ...hostile('--list=not-array'), required: true },
        ok: { ...hostile(), required: true },
      },
      permissions: { allow: ['mcp__ok', 'mcp__dies'] },
    });
    const failing = ['dies', 'invalid', 'old', 'refuses', 'nolist'];
    await waitConnected(t.app, ['ok']);
    await waitFor(() => failing.every((n) => serverStatus(t!.app, n).attempts >= 2), 'every failing server to be retried');

    const all = Object.fromEntries((await servers(t.app)).map((s) => [s.name, s]));
    for (const n of failing) expect(all[n], n).toMatchObject({ state: 'reconnecting', tools: 0 });
    expect(all.dies!.last_error).toContain('process exited with code 7; stderr: hostile: refusing to initialize');
    expect(all.invalid!.last_error).toContain('protocolVersion: Invalid input: expected string, received undefined');
    expect(all.invalid!.last_error).not.toContain('"code"');
    expect(all.old!.last_error).toContain("Server's protocol version is not supported: 1999-01-01");
    expect(all.refuses!.last_error).toContain('MCP error -32603: initialize is not my thing');
    expect(all.nolist!.last_error).toBe('tools: Invalid input: expected array, received object');
    expect(all.ok!.state).toBe('connected');

    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    const body = ready.json() as { failing: string[]; checks: { mcp: { required: string[]; connected: number } } };
    expect(body.failing).toEqual(['mcp:dies', 'mcp:nolist']);
    expect(body.checks.mcp).toMatchObject({ required: ['dies', 'nolist', 'ok'], connected: 1 });

    // A tool of a server that never connected is unknown, not a crash.
    const r = await call(t.app, 'mcp__dies__echo');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'not_found' });
    await expectHealthy(t.app);
    await expectOtherServerWorks(t.app, 'ok');
  });
});
