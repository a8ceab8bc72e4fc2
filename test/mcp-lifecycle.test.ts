/**
 * The MCP client's lifecycle and edge cases, against the fixture server
 * (test/fixtures/mcp/fixture-server.mjs): start without blocking, crash and
 * reconnect, tools/list_changed, cancellation, timeouts, hostile schemas,
 * name collisions, `${VAR}` expansion, result mapping and large results.
 */
import { Writable } from 'node:stream';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { probeTool } from './helpers.js';
import { loadConfig } from '../src/config/load.js';
import { ServerConnection } from '../src/mcp/connection.js';
import { printing, run } from './helpers-hooks.js';
import { FAST_MCP, FIXTURE, fixtureLog, fixtureStdio, isAlive, makeMcpApp, serverStatus, waitConnected, waitFor } from './helpers-mcp.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

async function etag(app: TestApp['app']): Promise<string> {
  return (await app.inject({ method: 'GET', url: '/tools' })).headers.etag as string;
}

describe('starting', () => {
  it('serves built-in tools at once while a server is still connecting, and kills it on close', async () => {
    // A "server" that never answers initialize.
    t = await makeMcpApp(
      { mcpServers: { mute: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } }, permissions: { allow: ['Probe'] } },
      { extraTools: [probeTool({})] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'now' })] });
    expect(r.body.executions[0]!.status).toBe('succeeded');
    const s = (await t.app.inject({ method: 'GET', url: '/mcp/servers' })).json() as { servers: Array<{ name: string; state: string; tools: number }> };
    expect(s.servers).toEqual([expect.objectContaining({ name: 'mute', state: 'connecting', tools: 0 })]);
    const pid = await waitFor(() => serverStatus(t!.app, 'mute').pid, 'the mute server to spawn');
    expect(isAlive(pid)).toBe(true);
    await t.close();
    t = undefined;
    expect(isAlive(pid)).toBe(false);
  });

  it('reports a server whose command does not exist, and keeps retrying it', async () => {
    t = await makeMcpApp({ mcpServers: { ghost: { command: '/nonexistent/mcp-server' } } });
    const s = await waitFor(() => {
      const x = serverStatus(t!.app, 'ghost');
      return x.attempts >= 2 && x;
    }, 'two failed attempts');
    expect(s.state).toBe('reconnecting');
    expect(s.last_error).toContain('ENOENT');
    expect(s.next_retry_at).not.toBeNull();
  });

  it('expands ${VAR} and ${VAR:-default} at connect time, and refuses to start on an unset variable', async () => {
    t = await makeMcpApp(
      {
        mcpServers: {
          named: { ...fixtureStdio('--tools=${FIXTURE_TOOLS:-echo}'), env: { FIXTURE_NAME: 'srv-${TEST_MCP_SUFFIX}' } },
          broken: { ...fixtureStdio(), env: { FIXTURE_NAME: '${TEST_MCP_UNSET_VARIABLE}' } },
        },
      },
      { env: { ...process.env, TEST_MCP_SUFFIX: 'from-env' } },
    );
    await waitConnected(t.app, ['named']);
    expect(serverStatus(t.app, 'named')).toMatchObject({ server_info: { name: 'srv-from-env' }, tool_names: ['mcp__named__echo'] });
    expect(serverStatus(t.app, 'broken')).toMatchObject({ state: 'failed', pid: null });
    expect(serverStatus(t.app, 'broken').last_error).toContain('TEST_MCP_UNSET_VARIABLE');
  });
});

describe('a Claude Code .mcp.json', () => {
  it('is loaded with --mcp-config and its servers connect', async () => {
    const dir = tmpDir();
    const file = path.join(dir, '.mcp.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          local: { type: 'stdio', command: 'node', args: [FIXTURE, '--tools=echo'], env: { FIXTURE_NAME: 'from-mcp-json' } },
          // Claude Code's documented form: the URL itself templated, checked once expanded.
          remote: { type: 'http', url: '${TEST_MCP_UNSET_BASE:-http://127.0.0.1:9}/mcp', headers: { authorization: 'Bearer ${TEST_MCP_UNSET_TOKEN:-none}' } },
          garbled: { type: 'sse', url: '${TEST_MCP_UNSET_BASE:-not a url}' },
        },
      }),
    );
    const { config } = loadConfig({ mcpConfigPath: file, cwd: dir, env: {} });
    t = await makeMcpApp({ mcpServers: config.mcpServers, permissions: { allow: ['mcp__local'] } });
    await waitConnected(t.app, ['local']);
    expect(serverStatus(t.app, 'local').server_info).toEqual({ name: 'from-mcp-json', version: '1.0.0' });
    const r = await execute(t.app, { tool_uses: [use('mcp__local__echo', { message: 'hi' })] });
    expect(textOf(r.body.tool_results[0]!.content)).toBe('echo: hi');
    // Nothing listens on port 9: the HTTP server is reported and retried, and does not hold the others back.
    const remote = await waitFor(() => {
      const s = serverStatus(t!.app, 'remote');
      return s.last_error && s;
    }, 'the remote server to fail');
    expect(remote).toMatchObject({ type: 'http', state: 'reconnecting' });
    // Port 9 reached: the default was expanded into the URL (fetch refuses that port).
    expect(serverStatus(t.app, 'remote').last_error).toContain('bad port');
    // A URL that is no URL once expanded fails that server alone, saying so.
    expect(serverStatus(t.app, 'garbled')).toMatchObject({ state: 'failed' });
    expect(serverStatus(t.app, 'garbled').last_error).toMatch(/^bad configuration: .*URL/i);
  });
});

describe('crash, reconnect and list_changed', () => {
  it('ends a call in flight at once with mcp_disconnected when the server dies, then reconnects', async () => {
    const log = path.join(tmpDir(), 'fixture.log');
    t = await makeMcpApp({ mcpServers: { fx: { ...fixtureStdio(), env: { FIXTURE_LOG: log } } }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const pid = serverStatus(t.app, 'fx').pid!;

    const pending = execute(t.app, { tool_uses: [use('mcp__fx__wait', { ms: 60_000, tag: 'long' }, 'w1')] });
    await waitFor(() => fixtureLog(log).some((e) => e.event === 'start' && e.tag === 'long'), 'the call to reach the server');
    process.kill(pid, 'SIGKILL');
    const r = await pending;
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'mcp_disconnected' });
    expect(textOf(r.body.tool_results[0]!.content)).toContain('MCP server "fx" disconnected during the call');
    expect(r.body.tool_results[0]!.is_error).toBe(true);
    // Its tools stay listed while it reconnects; a call meanwhile fails the same way or succeeds once back.
    expect(t.app.toolexec.pool().lookup('mcp__fx__echo')).toBeDefined();

    const back = await waitFor(() => {
      const s = serverStatus(t!.app, 'fx');
      return s.state === 'connected' && s.pid !== pid && s;
    }, 'the server to be reconnected');
    expect(back.last_error).toMatch(/connection closed.*SIGKILL/);
    const again = await execute(t.app, { tool_uses: [use('mcp__fx__echo', { message: 'back' }, 'e2')] });
    expect(textOf(again.body.tool_results[0]!.content)).toBe('echo: back');
    expect(fixtureLog(log).some((e) => e.event === 'end' && e.tag === 'long')).toBe(false);
  });

  it('refreshes the pool on tools/list_changed, and the catalog ETag changes', async () => {
    t = await makeMcpApp({ mcpServers: { fx: fixtureStdio() }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const before = await etag(t.app);
    expect(before).toBe(await etag(t.app));

    const r = await execute(t.app, { tool_uses: [use('mcp__fx__add_tool', { name: 'fresh' })] });
    expect(textOf(r.body.tool_results[0]!.content)).toBe('added fresh');
    await waitFor(() => t!.app.toolexec.pool().lookup('mcp__fx__fresh'), 'the new tool in the pool');
    const after = await etag(t.app);
    expect(after).not.toBe(before);
    const body = (await t.app.inject({ method: 'GET', url: '/tools' })).json() as { deferred_tools: string[] };
    expect(body.deferred_tools).toContain('mcp__fx__fresh');
    const called = await execute(t.app, { tool_uses: [use('mcp__fx__fresh', {})] });
    expect(textOf(called.body.tool_results[0]!.content)).toBe('I am fresh');
  });
});

describe('calls', () => {
  it('sends notifications/cancelled when a call is cancelled', async () => {
    const log = path.join(tmpDir(), 'fixture.log');
    t = await makeMcpApp({ mcpServers: { fx: { ...fixtureStdio(), env: { FIXTURE_LOG: log } } }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const started = await execute(t.app, { session_id: 'c1', tool_uses: [use('mcp__fx__wait', { ms: 60_000, tag: 'cancel-me' }, 'w1')], wait: false });
    expect(started.status).toBe(202);
    const id = started.body.executions[0]!.id;
    await waitFor(() => fixtureLog(log).some((e) => e.event === 'start' && e.tag === 'cancel-me'), 'the call to reach the server');
    expect(t.app.toolexec.registry.cancel(id)).toBe(true);
    await waitFor(() => fixtureLog(log).some((e) => e.event === 'cancelled' && e.tag === 'cancel-me'), 'the server to see the cancellation');
    const row = await waitFor(() => {
      const x = t!.app.toolexec.executions.get(id);
      return x && ['succeeded', 'failed', 'denied', 'cancelled'].includes(x.status) && x;
    }, 'the execution to end');
    expect(row).toMatchObject({ status: 'cancelled', error_class: 'cancelled' });
  });

  it('times a call out after the server timeoutMs', async () => {
    t = await makeMcpApp({ mcpServers: { fx: { ...fixtureStdio(), timeoutMs: 200 } }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const r = await execute(t.app, { tool_uses: [use('mcp__fx__wait', { ms: 30_000 })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'timeout' });
    expect(textOf(r.body.tool_results[0]!.content)).toContain('did not answer wait within 200 ms');
  });

  it('maps isError, structured content, images, resources and progress', async () => {
    t = await makeMcpApp({ mcpServers: { fx: fixtureStdio() }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const r = await execute(t.app, {
      tool_uses: [use('mcp__fx__fail', { why: 'broken' }, 'a'), use('mcp__fx__structured', {}, 'b'), use('mcp__fx__mixed', {}, 'c')],
    });
    expect(r.body.tool_results[0]).toMatchObject({ is_error: true, content: 'it failed: broken' });
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(JSON.parse(textOf(r.body.tool_results[1]!.content))).toEqual({ temperature: 21, unit: 'C' });
    expect(r.body.tool_results[1]!.is_error).toBeFalsy();
    const mixed = r.body.tool_results[2]!.content as Array<{ type: string; text?: string; source?: { media_type: string } }>;
    expect(mixed.map((b) => b.type)).toEqual(['text', 'image', 'text', 'text', 'text']);
    expect(mixed[1]!.source!.media_type).toBe('image/png');
    expect(mixed[2]!.text).toBe('[Resource link: x.txt] file:///tmp/x.txt (a file)');
    expect(mixed[3]!.text).toBe('[Resource from fx at mem://note] note body');
    expect(mixed[4]!.text).toContain('image/tiff omitted');
  });

  it('stores a result beyond the threshold and previews it; a small one stays inline', async () => {
    t = await makeMcpApp({ mcpServers: { fx: fixtureStdio() }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const r = await execute(t.app, { tool_uses: [use('mcp__fx__big', { chars: 150_000 }, 'big'), use('mcp__fx__big', { chars: 5000 }, 'small')] });
    const big = textOf(r.body.tool_results[0]!.content);
    const id = r.body.executions[0]!.result_id!;
    expect(id).toBeTruthy();
    expect(big).toContain(`result://${id}`);
    expect(big).toContain('150,000 characters');
    expect(big.length).toBeLessThan(6000);
    expect(t.app.toolexec.results.readAll(id)).toHaveLength(150_000);
    expect(textOf(r.body.tool_results[1]!.content)).toHaveLength(5000);
    expect(r.body.executions[1]!.result_id).toBeNull();
  });

  it('a PostToolUse hook’s updatedMCPToolOutput replaces what the model gets: text or content blocks; invalid or non-MCP is reported and ignored', async () => {
    const dir = tmpDir();
    const out = (name: string, value: unknown) => ({
      type: 'command' as const,
      command: printing(dir, name, { hookSpecificOutput: { hookEventName: 'PostToolUse', updatedMCPToolOutput: value } }),
    });
    const blocks = [{ type: 'text', text: 'redacted [1 image removed]' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }];
    t = await makeMcpApp({
      mcpServers: { fx: fixtureStdio() },
      permissions: { allow: ['mcp__fx', 'Read'] },
      hooks: {
        PostToolUse: [
          { matcher: 'mcp__fx__echo', hooks: [out('echo', 'REPLACED OUTPUT')] },
          { matcher: 'mcp__fx__mixed', hooks: [out('mixed', blocks)] },
          { matcher: 'mcp__fx__pid', hooks: [out('pid', [{ type: 'audio', data: 'x' }])] },
          { matcher: 'mcp__fx__big', hooks: [out('big', 'trimmed')] },
          { matcher: 'Read', hooks: [out('read', 'not for Read')] },
        ],
      },
    });
    await waitConnected(t.app, ['fx']);
    const echo = await run(t, 'mcp__fx__echo', { message: 'secret' });
    expect(echo.block.content).toBe('REPLACED OUTPUT');
    expect(echo.exec.status).toBe('succeeded');
    const mixed = await run(t, 'mcp__fx__mixed', {});
    expect(mixed.block.content).toEqual(blocks);
    const pid = await run(t, 'mcp__fx__pid', {});
    expect(pid.text).toMatch(/\d+/);
    expect(pid.messages).toContainEqual(expect.objectContaining({ kind: 'non_blocking_error', text: expect.stringContaining('updatedMCPToolOutput must be a string or an array of content blocks') }));
    // The original, stored because it is large, is dropped with it: the hook may have taken a secret out.
    const big = await run(t, 'mcp__fx__big', { chars: 150_000 });
    expect(big.block.content).toBe('trimmed');
    expect(big.exec.result_id).toBeNull();
    expect(t.app.toolexec.db.prepare('SELECT count(*) AS n FROM results WHERE execution_id = ?').get(big.exec.id)).toEqual({ n: 0 });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'hello\n');
    const read = await run(t, 'Read', { file_path: path.join(t.workspace, 'a.txt') });
    expect(read.text).toContain('hello');
    expect(read.text).not.toContain('not for Read');
    expect(read.messages).toContainEqual(expect.objectContaining({ kind: 'non_blocking_error', text: expect.stringContaining('applies to MCP tools only') }));
  });

  it('updatedMCPToolOutput on the failure path (PostToolUseFailure) is ignored, as in Claude Code, with a message; its additionalContext still reaches the model', async () => {
    const dir = tmpDir();
    const hook = printing(dir, 'fail', {
      hookSpecificOutput: { hookEventName: 'PostToolUseFailure', updatedMCPToolOutput: 'HIDDEN', additionalContext: 'retry with a reason' },
    });
    t = await makeMcpApp({
      mcpServers: { fx: fixtureStdio() },
      permissions: { allow: ['mcp__fx'] },
      hooks: { PostToolUseFailure: [{ matcher: 'mcp__fx__fail', hooks: [{ type: 'command', command: hook }] }] },
    });
    await waitConnected(t.app, ['fx']);
    const r = await run(t, 'mcp__fx__fail', { why: 'disk full' });
    expect(r.exec).toMatchObject({ status: 'failed' });
    expect(r.text).toContain('it failed: disk full');
    expect(r.text).toContain('retry with a reason');
    expect(r.text).not.toContain('HIDDEN');
    expect(r.messages).toContainEqual(
      expect.objectContaining({ event: 'PostToolUseFailure', kind: 'non_blocking_error', text: expect.stringContaining('updatedMCPToolOutput applies to PostToolUse only') }),
    );
  });

  it('maps annotations, defers MCP tools unless alwaysLoad, and passes search hints on', async () => {
    t = await makeMcpApp({ mcpServers: { fx: fixtureStdio(), loaded: { ...fixtureStdio('--tools=echo'), alwaysLoad: true } } });
    await waitConnected(t.app, ['fx', 'loaded']);
    const pool = t.app.toolexec.pool();
    const destroy = pool.lookup('mcp__fx__destroy')!;
    expect([destroy.isDestructive({}), destroy.isReadOnly({}), destroy.isConcurrencySafe({})]).toEqual([true, false, false]);
    expect(destroy.searchHint).toBe('remove delete things');
    expect(destroy.mcpInfo).toEqual({ serverName: 'fx', toolName: 'destroy' });
    const echo = pool.lookup('mcp__fx__echo')!;
    expect([echo.isDestructive({}), echo.isReadOnly({}), echo.isConcurrencySafe({}), echo.mayBeReadOnly]).toEqual([false, true, true, true]);
    const body = (await t.app.inject({ method: 'GET', url: '/tools' })).json() as { tools: Array<{ name: string }>; deferred_tools: string[] };
    expect(body.tools.map((x) => x.name)).toContain('mcp__loaded__echo');
    expect(body.deferred_tools).toContain('mcp__fx__echo');
    expect(body.deferred_tools).not.toContain('mcp__loaded__echo');
  });
});

describe('bad tools and bad names', () => {
  it('reports hostile schemas as unusable tools and keeps serving the rest', async () => {
    t = await makeMcpApp({ mcpServers: { fx: fixtureStdio('--hostile') }, permissions: { allow: ['mcp__fx'] } });
    await waitConnected(t.app, ['fx']);
    const s = (await t.app.inject({ method: 'GET', url: '/mcp/servers/fx' })).json() as {
      unusable_tools: Array<{ name: string; error: string }>;
      tool_names: string[];
    };
    const why = Object.fromEntries(s.unusable_tools.map((u) => [u.name, u.error]));
    expect(Object.keys(why).sort()).toEqual(['bad_keyword', 'bad_ref', 'not_a_tool', 'too_big', 'too_deep']);
    expect(why.bad_ref).toContain('does not compile');
    expect(why.too_deep).toContain('nested deeper than');
    expect(why.too_big).toContain('characters of JSON');
    expect(why.not_a_tool).toContain('not a valid MCP tool');
    expect(s.tool_names).toContain('mcp__fx__echo');
    expect(s.tool_names).toContain('mcp__fx__long_description');
    const long = t.app.toolexec.pool().lookup('mcp__fx__long_description')!;
    expect(long.description).toHaveLength(2048 + '… [truncated]'.length);

    // A schema's own rules are checked locally, except patterns that could backtrack without end.
    const r = await execute(t.app, {
      tool_uses: [
        use('mcp__fx__strict', { count: 0, label: 'ABC', nested: {} }, 's1'),
        use('mcp__fx__strict', { count: 1, label: 'abc', risky: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' }, 's2'),
      ],
    });
    const text = textOf(r.body.tool_results[0]!.content);
    expect(text).toContain('The parameter `count` is invalid: must be >= 1');
    expect(text).toContain('The parameter `label` is invalid: must match pattern "^[a-z]+$"');
    expect(text).toContain('The required parameter `nested.flag` is missing');
    expect(r.body.executions[1]!.status).toBe('succeeded');
    const missing = (await t.app.inject({ method: 'GET', url: '/mcp/servers/nope' })).json() as { error: { code: string } };
    expect(missing.error.code).toBe('TOOLEXEC_ERR_MCP_SERVER_NOT_FOUND');
  });

  it('retries a server that keeps failing with exponential backoff: doubling from the first delay up to the cap, with ±20% jitter', async () => {
    t = await makeMcpApp(
      { mcpServers: { down: { command: process.execPath, args: ['-e', 'process.exit(3)'] } } },
      { mcp: { reconnect: { initialDelayMs: 100, maxDelayMs: 800 }, connectTimeoutMs: 20_000 } },
    );
    // The delay each failure scheduled: next_retry_at - last_error_at, by attempt number.
    const delays = new Map<number, number>();
    await waitFor(
      async () => {
        const st = serverStatus(t!.app, 'down') as { attempts: number; next_retry_at: string | null; last_error_at: string | null };
        if (st.next_retry_at && st.last_error_at && !delays.has(st.attempts)) delays.set(st.attempts, Date.parse(st.next_retry_at) - Date.parse(st.last_error_at));
        return delays.has(6);
      },
      'six failed attempts',
    );
    const within = (attempt: number, base: number) => {
      const d = delays.get(attempt)!;
      expect(d, `attempt ${attempt}: ${d} ms`).toBeGreaterThanOrEqual(base * 0.8 - 5);
      expect(d, `attempt ${attempt}: ${d} ms`).toBeLessThanOrEqual(base * 1.2 + 5);
    };
    within(1, 100);
    within(2, 200);
    within(3, 400);
    within(4, 800);
    within(5, 800);
    within(6, 800);
    expect(serverStatus(t.app, 'down')).toMatchObject({ state: 'reconnecting', last_error: expect.stringContaining('exited with code 3') });
  });

  it('reports clashing, shadowing and over-long names per server and in the log, and serves none of them', async () => {
    const longName = 's'.repeat(60);
    const chunks: string[] = [];
    const log = {
      stream: new Writable({
        write(chunk: Buffer | string, _enc, cb) {
          chunks.push(String(chunk));
          cb();
        },
      }),
    };
    t = await makeMcpApp(
      {
        mcpServers: {
          'dup.x': fixtureStdio('--tools=echo'),
          dup_x: fixtureStdio('--tools=echo'),
          fx: fixtureStdio('--tools=echo,pid'),
          [longName]: fixtureStdio('--tools=echo'),
        },
      },
      // A built-in that happens to hold an MCP tool's name. The log is kept: each problem is also said there.
      { extraTools: [probeTool({ name: 'mcp__fx__echo' })], logger: undefined, logStream: log.stream },
    );
    await waitConnected(t.app, ['dup.x', 'dup_x', 'fx', longName]);
    const s = (await t.app.inject({ method: 'GET', url: '/mcp/servers' })).json() as {
      servers: Array<{ name: string; problems: Array<{ kind: string; tools: string[] }> }>;
    };
    const problems = Object.fromEntries(s.servers.map((x) => [x.name, x.problems.map((p) => `${p.kind}:${p.tools.join(',')}`)]));
    expect(problems['dup.x']).toEqual(['mcp_name_clash:mcp__dup_x__echo']);
    expect(problems.dup_x).toEqual(['mcp_name_clash:mcp__dup_x__echo']);
    expect(problems.fx).toEqual(['shadows_builtin:mcp__fx__echo']);
    expect(problems[longName]).toEqual([`name_too_long:mcp__${longName}__echo`]);
    const pool = t.app.toolexec.pool();
    expect(pool.all.filter((x) => x.name === 'mcp__dup_x__echo')).toHaveLength(0);
    expect(pool.lookup('mcp__fx__echo')!.mcpInfo).toBeUndefined();
    expect(pool.lookup('mcp__fx__pid')).toBeDefined();
    const warned = chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; problem?: { kind: string; tools: string[] } })
      .filter((l) => l.level === 40 && l.problem)
      .map((l) => `${l.problem!.kind}:${l.problem!.tools.join(',')}`);
    expect(new Set(warned)).toEqual(new Set(['mcp_name_clash:mcp__dup_x__echo', 'shadows_builtin:mcp__fx__echo', `name_too_long:mcp__${longName}__echo`]));
  });
});

/**
 * An MCP server over stdio, as a real process, that holds its answer to every
 * tools/list after the first until it is told to stop (stdin closed or
 * SIGTERM), then answers it (with one tool more) and exits: the listing of a
 * list_changed refresh reaches the client after the connection was closed.
 * The fixture server answers at once, so it cannot hold a listing this way.
 */
const HELD_LIST_SERVER = `
import fs from 'node:fs';
const log = (e) => fs.appendFileSync(process.env.HELD_LOG, e + '\\n');
const send = (m, cb) => process.stdout.write(JSON.stringify(m) + '\\n', cb);
const tool = (name) => ({ name, description: name, inputSchema: { type: 'object', properties: {} } });
let lists = 0;
let held;
let done = false;
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.method === 'initialize') {
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'held', version: '1.0.0' } } });
    } else if (m.method === 'tools/list') {
      if (lists++ === 0) send({ jsonrpc: '2.0', id: m.id, result: { tools: [tool('change')] } });
      else {
        held = m.id;
        log('list-held');
      }
    } else if (m.method === 'tools/call') {
      send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'changed' }] } });
      send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    } else if (m.id !== undefined) {
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
    }
  }
});
function finish() {
  if (done) return;
  done = true;
  if (held === undefined) process.exit(0);
  log('list-answered');
  send({ jsonrpc: '2.0', id: held, result: { tools: [tool('change'), tool('added')] } }, () => process.exit(0));
}
process.stdin.on('end', finish);
process.on('SIGTERM', finish);
`;

describe('a list_changed refresh that outlives its connection', () => {
  it('is dropped: a listing answered after the connection was closed leaves its tools as they were', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'held.log');
    const script = path.join(dir, 'held-list-server.mjs');
    fs.writeFileSync(script, HELD_LIST_SERVER);
    let changes = 0;
    const conn = new ServerConnection(
      'held',
      { command: process.execPath, args: [script], env: { HELD_LOG: log } },
      { log: pino({ level: 'silent' }), childEnv: process.env, cwd: dir, reconnect: FAST_MCP.reconnect, connectTimeoutMs: 20_000, onToolsChanged: () => changes++ },
    );
    conn.start();
    try {
      await waitFor(() => conn.status().state === 'connected', 'the held server to connect');
      expect(conn.status().tool_names).toEqual(['mcp__held__change']);
      const changesWhenConnected = changes;
      const r = await conn.call('change', {}, new AbortController().signal, () => {});
      expect(r.content).toEqual([{ type: 'text', text: 'changed' }]);
      await waitFor(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('list-held'), 'the refresh listing to reach the server');
      await conn.close();
      // The server did answer the refresh, with a new tool, while the connection was closing.
      expect(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)).toEqual(['list-held', 'list-answered']);
      expect(conn.status()).toMatchObject({ state: 'closed', tool_names: ['mcp__held__change'], unusable_tools: [] });
      expect(conn.tools.map((x) => x.name)).toEqual(['mcp__held__change']);
      expect(changes).toBe(changesWhenConnected);
    } finally {
      await conn.close();
    }
  });
});
