/**
 * toolexec's own MCP server (POST/GET/DELETE /mcp): an MCP SDK client over
 * Streamable HTTP, against a real listening app on 127.0.0.1, calls built-in
 * and MCP tools through the pipeline (rules, audit, executions), is denied
 * by a deny rule and by the headless default for an unanswered ask, gets
 * progress and tools/list_changed, and is held to the token that opened it.
 */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Approvals } from '../src/permissions/approvals.js';
import { cleanupTmp, listenLocalApp, probeTool, sleepTool, type TestApp } from './helpers.js';
import { fixtureStdio, makeMcpApp, waitConnected, waitFor } from './helpers-mcp.js';

const EXEC_TOKEN = 'exec-token-0123456789abcdef';
const OTHER_TOKEN = 'other-token-0123456789abcdef';
const READ_TOKEN = 'read-token-0123456789abcdef';

let t: TestApp;
let base: URL;
const clients: Client[] = [];

/** An MCP client connected to /mcp of a service listening on `port` (with a bearer token, when given). */
async function clientAt(port: number, name: string, token?: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const requestInit = token === undefined ? undefined : { headers: { authorization: `Bearer ${token}` } };
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), requestInit ? { requestInit } : undefined));
  return client;
}

async function connect(token = EXEC_TOKEN): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(base, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

function text(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

type ExecutionMeta = { id: string; status: string; session_id: string; error_class: string | null; replayed?: boolean };
function execution(r: CallToolResult): ExecutionMeta {
  return (r._meta as Record<string, ExecutionMeta>)['toolexec/execution']!;
}

beforeAll(async () => {
  t = await makeMcpApp(
    {
      server: {
        tokens: [
          { name: 'agent', token: EXEC_TOKEN, scopes: ['execute', 'read'] },
          { name: 'other', token: OTHER_TOKEN, scopes: ['execute'] },
          { name: 'reader', token: READ_TOKEN, scopes: ['read'] },
        ],
      },
      mcpServers: { fx: fixtureStdio() },
      permissions: { allow: ['Read', 'mcp__fx__echo', 'mcp__fx__progress', 'mcp__fx__add_tool', 'mcp__fx__wait', 'Probe'], deny: ['Glob'] },
    },
    { extraTools: [probeTool({})] },
  );
  await waitConnected(t.app, ['fx']);
  fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'first line\nsecond line\n');
  base = new URL(`http://127.0.0.1:${await listenLocalApp(t.app)}/mcp`);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
  cleanupTmp();
});

describe('POST /mcp', () => {
  it('lists the pool with deferral hints in _meta', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((x) => [x.name, x]));
    expect(byName.get('Read')?._meta).toMatchObject({ 'anthropic/alwaysLoad': true });
    expect(byName.get('Read')?.inputSchema.properties).toHaveProperty('file_path');
    // MCP tools are deferred by toolexec: no alwaysLoad hint, annotations passed on.
    expect(byName.get('mcp__fx__echo')?._meta).toBeUndefined();
    expect(byName.get('mcp__fx__echo')?.annotations).toEqual({ readOnlyHint: true });
    expect(byName.get('mcp__fx__destroy')?._meta).toEqual({ 'anthropic/searchHint': 'remove delete things' });
    // Blanket-denied tools are not listed.
    expect(byName.has('Glob')).toBe(false);
  });

  it('runs a built-in and an MCP tool through the pipeline, in the MCP session', async () => {
    const { client, transport } = await connect();
    const read = (await client.callTool({ name: 'Read', arguments: { file_path: path.join(t.workspace, 'notes.txt') } })) as CallToolResult;
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('second line');
    expect(execution(read)).toMatchObject({ status: 'succeeded', session_id: transport.sessionId });

    const echo = (await client.callTool({ name: 'mcp__fx__echo', arguments: { message: 'through toolexec' } })) as CallToolResult;
    expect(text(echo)).toBe('echo: through toolexec');
    const row = t.app.toolexec.executions.get(execution(echo).id)!;
    expect(row).toMatchObject({ tool: 'mcp__fx__echo', status: 'succeeded', session_id: transport.sessionId, actor: 'agent' });
  });

  it('denies by a deny rule, and denies an ask nobody answers (headless), as isError results', async () => {
    const { client } = await connect();
    const glob = (await client.callTool({ name: 'Glob', arguments: { pattern: '*' } })) as CallToolResult;
    expect(glob.isError).toBe(true);
    expect(text(glob)).toContain('Permission to use Glob has been denied.');
    expect(execution(glob)).toMatchObject({ status: 'denied', error_class: 'permission' });

    // No rule covers destroy: the call asks, no approver is subscribed, headless=deny.
    const destroy = (await client.callTool({ name: 'mcp__fx__destroy', arguments: { tag: 'x' } })) as CallToolResult;
    expect(destroy.isError).toBe(true);
    expect(execution(destroy)).toMatchObject({ status: 'denied', error_class: 'permission' });
    const audit = t.app.toolexec.db.prepare('SELECT reason_type FROM audit WHERE execution_id = ?').get(execution(destroy).id) as { reason_type: string } | undefined;
    expect(audit?.reason_type).toBe('headless');
  });

  it('runs an allowed call ("approved" by an allow rule) and validates input at step 2', async () => {
    const { client } = await connect();
    const ok = (await client.callTool({ name: 'Probe', arguments: { value: 'v' } })) as CallToolResult;
    expect(text(ok)).toBe('value=v');
    const bad = (await client.callTool({ name: 'Probe', arguments: { count: 'x' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('The required parameter `value` is missing');
    expect(execution(bad).error_class).toBe('validation');
  });

  it('takes the toolexec session from _meta.session_id, and replays a repeated _meta.tool_use_id', async () => {
    const { client } = await connect();
    const call = () =>
      client.callTool({ name: 'Probe', arguments: { value: 'once' }, _meta: { session_id: 's-mcp-custom', tool_use_id: 'tu-1' } }) as Promise<CallToolResult>;
    const first = await call();
    const second = await call();
    expect(execution(first)).toMatchObject({ session_id: 's-mcp-custom', status: 'succeeded' });
    expect(execution(second)).toMatchObject({ id: execution(first).id });
    expect(execution(second).replayed).toBe(true);
  });

  it('refuses a _meta.tool_use_id reused for another call as the caller\'s error (-32602, data.code TOOLEXEC_ERR_TOOL_USE_ID_REUSED), not -32603', async () => {
    const { client } = await connect();
    const call = (value: string) =>
      client.callTool({ name: 'Probe', arguments: { value }, _meta: { session_id: 's-mcp-reuse', tool_use_id: 'tu-r' } }) as Promise<CallToolResult>;
    expect(execution(await call('one')).status).toBe('succeeded');
    const err = (await call('two').then(
      () => undefined,
      (e: unknown) => e,
    )) as McpError | undefined;
    expect(err).toBeInstanceOf(McpError);
    expect(err!.code).toBe(ErrorCode.InvalidParams);
    expect(err!.data).toMatchObject({ code: 'TOOLEXEC_ERR_TOOL_USE_ID_REUSED', details: { tool_use_id: 'tu-r' } });
    expect(err!.message).toMatch(/the id tu-r already names an earlier call of this session \(Probe\)/);
  });

  it('refuses a _meta.session_id or tool_use_id holding a lone surrogate (the database would store another id) as Invalid params', async () => {
    const { client } = await connect();
    for (const meta of [{ session_id: 's-mcp-\ud800', tool_use_id: 'tu-s' }, { session_id: 's-mcp-lone', tool_use_id: 'tu-\udc00' }]) {
      const err = (await client.callTool({ name: 'Probe', arguments: { value: 'v' }, _meta: meta }).then(
        () => undefined,
        (e: unknown) => e,
      )) as McpError | undefined;
      expect(err).toBeInstanceOf(McpError);
      expect(err!.code).toBe(ErrorCode.InvalidParams);
      expect(err!.message).toMatch(/lone UTF-16 surrogate/);
    }
    // A pair is a whole character.
    const ok = (await client.callTool({ name: 'Probe', arguments: { value: 'v' }, _meta: { session_id: 's-mcp-\ud83d\ude00', tool_use_id: 'tu-\ud83d\ude00' } })) as CallToolResult;
    expect(execution(ok).status).toBe('succeeded');
  });

  it('forwards the tool progress to a client that asked for it', async () => {
    const { client } = await connect();
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const r = (await client.callTool({ name: 'mcp__fx__progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p) })) as CallToolResult;
    expect(text(r)).toBe('done 3');
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('tells its clients when an MCP server changes its tools', async () => {
    const { client } = await connect();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    // The GET stream that carries server notifications opens in the background after
    // initialization; a change announced before it is open reaches nobody, so add tools until one is heard.
    let n = 0;
    await waitFor(async () => {
      await client.callTool({ name: 'mcp__fx__add_tool', arguments: { name: `late${n++}` } });
      await new Promise((r) => setTimeout(r, 100));
      return changed > 0;
    }, 'notifications/tools/list_changed');
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toContain('mcp__fx__late0');
  });

  it('cancels a call when the client aborts it (notifications/cancelled)', async () => {
    const { client } = await connect();
    const ac = new AbortController();
    const pending = client.callTool({ name: 'mcp__fx__wait', arguments: { ms: 60_000 } }, undefined, { signal: ac.signal });
    const live = await waitFor(() => t.app.toolexec.registry.all().find((e) => e.call.name === 'mcp__fx__wait' && e.call.status === 'running'), 'the call to run');
    ac.abort();
    await expect(pending).rejects.toThrow();
    const row = await waitFor(() => {
      const r = t.app.toolexec.executions.get(live.call.id);
      return r && r.status !== 'queued' && r.status !== 'running' && r;
    }, 'the execution to end');
    expect(row).toMatchObject({ status: 'cancelled', error_class: 'cancelled' });
  });

  it('answers a plain tools/call as JSON and one that asks for progress as an SSE stream', async () => {
    const { transport } = await connect();
    const call = (meta: Record<string, unknown>) =>
      fetch(base, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${EXEC_TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'mcp-session-id': transport.sessionId!,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'Probe', arguments: { value: 'raw' }, _meta: meta } }),
      });
    const plain = await call({});
    expect(plain.headers.get('content-type')).toContain('application/json');
    expect(await plain.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'value=raw' }] } });
    const streamed = await call({ progressToken: 'p1' });
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    expect(await streamed.text()).toContain('"text":"value=raw"');
  });

  it('answers bad tools/call params with -32602 Invalid params and a readable message, not -32603 and a zod dump', async () => {
    const { transport } = await connect();
    const post = async (body: unknown, status = 200): Promise<unknown[]> => {
      const res = await fetch(base, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${EXEC_TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'mcp-session-id': transport.sessionId!,
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, text).toBe(status);
      // JSON, or an SSE stream of data: lines.
      if ((res.headers.get('content-type') ?? '').includes('application/json')) return [JSON.parse(text)].flat();
      return text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)));
    };
    const CASES: Array<[unknown, RegExp]> = [
      [{ name: 'Glob', arguments: 'x' }, /params\.arguments must be an object.*not a string/],
      [{ name: 5, arguments: {} }, /params\.name must be a string.*not a number/],
      [{ name: 'Probe', arguments: [1] }, /params\.arguments must be an object.*not an array/],
    ];
    let id = 100;
    for (const [params, message] of CASES) {
      const [answer] = (await post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params })) as Array<{ id: number; error?: { code: number; message: string } }>;
      expect(answer, JSON.stringify(params)).toMatchObject({ id, error: { code: -32602 } });
      expect(answer!.error!.message, JSON.stringify(params)).toMatch(message);
      expect(answer!.error!.message).not.toMatch(/"expected"|\[\s*\{/);
    }
    const [list] = (await post({ jsonrpc: '2.0', id: 200, method: 'tools/list', params: { cursor: 5 } })) as Array<{ error?: { code: number; message: string } }>;
    expect(list).toMatchObject({ id: 200, error: { code: -32602 } });
    expect(list!.error!.message).toMatch(/tools\/list: invalid params: params\.cursor: /);
    // params that are not an object at all are not JSON-RPC: the SDK's transport refuses the message (400).
    const [notRpc] = (await post({ jsonrpc: '2.0', id: 201, method: 'tools/call', params: 'x' }, 400)) as Array<{ error?: { code: number } }>;
    expect(notRpc).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    // In a batch, the bad call is answered alone and the good one runs.
    const batch = (await post([
      { jsonrpc: '2.0', id: 301, method: 'tools/call', params: { name: 'Probe', arguments: 'x' } },
      { jsonrpc: '2.0', id: 302, method: 'tools/call', params: { name: 'Probe', arguments: { value: 'fine' } } },
    ])) as Array<{ id: number; error?: { code: number }; result?: unknown }>;
    const byId = new Map(batch.map((m) => [m.id, m]));
    expect(byId.get(301)).toMatchObject({ error: { code: -32602 } });
    expect(byId.get(302)).toMatchObject({ result: { content: [{ type: 'text', text: 'value=fine' }] } });
  });

  it('holds a session to the token that opened it, checks scopes, and ends sessions on DELETE', async () => {
    const { transport } = await connect();
    const sid = transport.sessionId!;
    const ping = (token: string | undefined, session: string | undefined) =>
      fetch(base, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    expect((await ping(undefined, sid)).status).toBe(401);
    expect((await ping(READ_TOKEN, sid)).status).toBe(403);
    expect((await ping(OTHER_TOKEN, sid)).status).toBe(404);
    expect((await ping(EXEC_TOKEN, 'mcp_unknown')).status).toBe(404);
    expect((await ping(EXEC_TOKEN, undefined)).status).toBe(400);
    const ok = await ping(EXEC_TOKEN, sid);
    expect(ok.status).toBe(200);
    await ok.text();
    await transport.terminateSession();
    expect((await ping(EXEC_TOKEN, sid)).status).toBe(404);
  });
});

describe('a call longer than the connection idle timeout', () => {
  it('is answered on the JSON path (the idle timeout is lifted while the call runs)', async () => {
    const app = await makeMcpApp({ server: { connectionTimeoutMs: 300 }, permissions: { allow: ['SafeSleep'] } }, { extraTools: [sleepTool({ safe: true })] });
    try {
      const port = await listenLocalApp(app.app);
      const client = await clientAt(port, 'slow');
      const r = (await client.callTool({ name: 'SafeSleep', arguments: { ms: 1000, tag: 'slow' } })) as CallToolResult;
      expect(text(r)).toBe('slept 1000 ms: slow');
      // The next request on the same connection still works.
      expect(text((await client.callTool({ name: 'SafeSleep', arguments: { ms: 1, tag: 'quick' } })) as CallToolResult)).toBe('slept 1 ms: quick');
      await client.close();
    } finally {
      await app.close();
    }
  });
});

describe('back-pressure on /mcp', () => {
  it('refuses a call past server.maxInFlightCalls with a clear error, and takes calls again once the live ones end', async () => {
    const app = await makeMcpApp({ server: { maxInFlightCalls: 1 }, permissions: { allow: ['SafeSleep'] } }, { extraTools: [sleepTool({ safe: true })] });
    try {
      const port = await listenLocalApp(app.app);
      const client = await clientAt(port, 'busy');
      const first = client.callTool({ name: 'SafeSleep', arguments: { ms: 600, tag: 'first' } });
      await waitFor(() => app.app.toolexec.registry.size === 1, 'the first call to be live');
      await expect(client.callTool({ name: 'SafeSleep', arguments: { ms: 1, tag: 'second' } })).rejects.toThrow(/calls are in flight \(limit 1\); retry later/);
      expect(text((await first) as CallToolResult)).toBe('slept 600 ms: first');
      await waitFor(() => app.app.toolexec.registry.size === 0, 'the live set to empty');
      expect(text((await client.callTool({ name: 'SafeSleep', arguments: { ms: 1, tag: 'third' } })) as CallToolResult)).toBe('slept 1 ms: third');
      await client.close();
    } finally {
      await app.close();
    }
  });
});

describe('asks answered by an approver', () => {
  it('runs an approved MCP call and refuses a rejected one, with the approver in the audit log', async () => {
    const asked: string[] = [];
    // An approver passed in through the options (the websocket broker's interface).
    const approvals: Approvals = {
      request: async (req) => {
        asked.push(`${req.tool.name} ${req.summary}`);
        return req.input.tag === 'yes'
          ? { behavior: 'allow', reason: 'user', actor: 'approver-1' }
          : { behavior: 'deny', reason: 'user', actor: 'approver-1', message: 'not this one' };
      },
    };
    const app = await makeMcpApp({ mcpServers: { fx: fixtureStdio('--tools=destroy') } }, { approvals });
    try {
      await waitConnected(app.app, ['fx']);
      const port = await listenLocalApp(app.app);
      const client = await clientAt(port, 'approvals');
      const yes = (await client.callTool({ name: 'mcp__fx__destroy', arguments: { tag: 'yes' } })) as CallToolResult;
      const no = (await client.callTool({ name: 'mcp__fx__destroy', arguments: { tag: 'no' } })) as CallToolResult;
      await client.close();
      expect(text(yes)).toBe('destroyed yes');
      expect(execution(yes).status).toBe('succeeded');
      expect(no.isError).toBe(true);
      expect(execution(no)).toMatchObject({ status: 'denied', error_class: 'permission' });
      expect(asked).toHaveLength(2);
      const rows = app.app.toolexec.db.prepare('SELECT behavior, reason_type, actor FROM audit WHERE execution_id IN (?, ?) ORDER BY id').all(execution(yes).id, execution(no).id);
      expect(rows).toEqual([
        { behavior: 'allow', reason_type: 'user', actor: 'approver-1' },
        { behavior: 'deny', reason_type: 'user', actor: 'approver-1' },
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('an open (token-less) service', () => {
  it('refuses browser requests from a non-loopback origin (DNS rebinding) and accepts loopback ones', async () => {
    const app = await makeMcpApp({});
    try {
      const port = await listenLocalApp(app.app);
      const init = (origin: string) =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'b', version: '1' } } }),
        });
      const evil = await init('http://attacker.example');
      expect(evil.status).toBe(403);
      await evil.text();
      const local = await init(`http://localhost:${port}`);
      expect(local.status).toBe(200);
      await local.text();
    } finally {
      await app.close();
    }
  });

  it('refuses requests whose Host names another machine (DNS rebinding sends no Origin) on every protected route', async () => {
    const app = await makeMcpApp({});
    try {
      const port = await listenLocalApp(app.app);
      // fetch() will not let a test set Host; node:http will.
      const get = (path: string, host: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end();
        });
      const rebound = await get('/executions', `attacker.example:${port}`);
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body).error.code).toBe('TOOLEXEC_ERR_ORIGIN_FORBIDDEN');
      expect((await get('/tools', 'attacker.example')).status).toBe(403);
      expect((await get('/executions', `localhost:${port}`)).status).toBe(200);
      expect((await get('/executions', `127.0.0.1:${port}`)).status).toBe(200);
      expect((await get('/executions', `[::1]:${port}`)).status).toBe(200);
      // Health stays open: load balancers probe by any name.
      expect((await get('/healthz', 'attacker.example')).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('server.allowedHosts admits the names a reverse proxy on this machine sends, and only those', async () => {
    const app = await makeMcpApp({ server: { allowedHosts: ['Toolexec.Internal'] } });
    try {
      const port = await listenLocalApp(app.app);
      const get = (path: string, headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, path, headers }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end();
        });
      expect(await get('/executions', { host: `toolexec.internal:${port}` })).toBe(200);
      expect(await get('/executions', { host: 'toolexec.internal', origin: 'https://toolexec.internal' })).toBe(200);
      expect(await get('/executions', { host: `attacker.example:${port}` })).toBe(403);
      expect(await get('/executions', { host: 'toolexec.internal', origin: 'https://attacker.example' })).toBe(403);
      expect(await get('/executions', { host: 'internal' })).toBe(403);
    } finally {
      await app.close();
    }
  });
});

describe('asks answered over the websocket', () => {
  it('an MCP client’s call waits for a person on /ws: one approved, one denied, both audited with the approver', async () => {
    const app = await makeMcpApp(
      {
        server: { tokens: [{ name: 'agent', token: EXEC_TOKEN, scopes: ['execute'] }, { name: 'alice', token: READ_TOKEN, scopes: ['read', 'approve'] }] },
        mcpServers: { fx: fixtureStdio('--tools=destroy') },
      },
      {},
    );
    try {
      await waitConnected(app.app, ['fx']);
      const port = await listenLocalApp(app.app);
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
      await new Promise((res) => ws.once('open', res));
      ws.on('message', (d) => {
        const f = JSON.parse(String(d)) as { type: string; request?: { id: string; input: { tag?: string } } };
        if (f.type !== 'permission.request' || !f.request) return;
        const allow = f.request.input.tag === 'yes';
        ws.send(JSON.stringify({ type: 'permission.respond', request_id: f.request.id, decision: allow ? 'allow' : 'deny', message: allow ? undefined : 'not this one' }));
      });
      ws.send(JSON.stringify({ type: 'subscribe', session_id: '*' }));
      await new Promise((res) => setTimeout(res, 100));
      const client = await clientAt(port, 'approvals-ws', EXEC_TOKEN);
      const yes = (await client.callTool({ name: 'mcp__fx__destroy', arguments: { tag: 'yes' } })) as CallToolResult;
      const no = (await client.callTool({ name: 'mcp__fx__destroy', arguments: { tag: 'no' } })) as CallToolResult;
      await client.close();
      ws.close();
      expect(text(yes)).toBe('destroyed yes');
      expect(no.isError).toBe(true);
      expect(text(no)).toContain('not this one');
      const rows = app.app.toolexec.db
        .prepare('SELECT behavior, reason_type, actor FROM audit WHERE execution_id IN (?, ?) ORDER BY id')
        .all(execution(yes).id, execution(no).id);
      expect(rows).toEqual([
        { behavior: 'allow', reason_type: 'user', actor: 'alice' },
        { behavior: 'deny', reason_type: 'user', actor: 'alice' },
      ]);
    } finally {
      await app.close();
    }
  });
});

