/**
 * OpenAPI conformance: every operation of openapi/openapi.json is called on a
 * real listening server, and every JSON response is validated against the
 * document's schema for its status (which must be a documented one). The
 * document itself is validated as OpenAPI 3.1.
 */
import fs from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { openApiText } from '../src/http/openapi/document.js';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, makeApp, probeTool, sleepTool, type TestApp } from './helpers.js';
import { fixtureStdio, FAST_MCP, waitConnected } from './helpers-mcp.js';

const ADMIN = 'admin-token-0123456789abcdef';
const doc = JSON.parse(fs.readFileSync(path.resolve('openapi/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
};

// The document as one schema: responses reference it by JSON pointer.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(doc as object, 'openapi');
const ptr = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

const called = new Set<string>();
let t: TestApp;
let base: string;

function openApiPathOf(url: string): string {
  const p = url.split('?')[0]!;
  for (const tmpl of Object.keys(doc.paths)) {
    const re = new RegExp(`^${tmpl.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (re.test(p)) return tmpl;
  }
  throw new Error(`no documented path matches ${p}`);
}

/** A body sent as is, not as JSON. */
class Raw {
  constructor(readonly text: string) {}
}

/** Calls the API and checks the answer against the document. */
async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
  origin: string = base,
): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const res = await fetch(`${origin}${url}`, {
    method: method.toUpperCase(),
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : body instanceof Raw ? body.text : JSON.stringify(body),
  });
  const text = await res.text();
  const tmpl = openApiPathOf(url);
  const op = doc.paths[tmpl]?.[method.toLowerCase()];
  expect(op, `${method} ${tmpl} is documented`).toBeDefined();
  called.add(`${method.toLowerCase()} ${tmpl}`);
  const documented = op!.responses[String(res.status)];
  expect(documented, `${method} ${url} answered ${res.status}, which is not documented: ${text.slice(0, 300)}`).toBeDefined();
  let json: unknown;
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('application/json') && text.length > 0) {
    json = JSON.parse(text);
    // A JSON answer on a status documented without a JSON schema would go unchecked.
    const schema = documented!.content?.['application/json']?.schema;
    expect(schema, `${method} ${url} answered JSON with ${res.status}, which documents no JSON schema: ${text.slice(0, 300)}`).toBeDefined();
    if (schema) {
      const ref = `openapi#/paths/${ptr(tmpl)}/${method.toLowerCase()}/responses/${res.status}/content/application~1json/schema`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      const ok = validate(json);
      expect(ok, `${method} ${url} ${res.status} does not match its schema: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${text.slice(0, 400)}`).toBe(true);
    }
  }
  return { status: res.status, json, text, headers: res.headers };
}

const progressTool = buildTool({
  name: 'Progressing',
  description: 'Reports progress, then answers',
  inputSchema: z.strictObject({ steps: z.number().int().min(1).max(10) }),
  maxResultSizeChars: 100_000,
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test' }),
  call: async (input, _ctx, _c, _p, onProgress) => {
    for (let i = 1; i <= input.steps; i++) onProgress({ progress: i, total: input.steps });
    return { data: 'x'.repeat(30_000) };
  },
});

beforeAll(async () => {
  t = await makeApp(
    {
      server: { tokens: [{ name: 'admin', token: ADMIN, scopes: ['admin'] }] },
      permissions: { allow: ['Read', 'Glob', 'UnsafeSleep'], ask: ['Probe'], askTimeoutMs: 30_000, allowBypass: true },
      mcpServers: { fixture: fixtureStdio() },
    },
    { extraTools: [probeTool({}), sleepTool({ safe: false }), progressTool], mcp: FAST_MCP },
  );
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  fs.writeFileSync(path.join(t.workspace, 'hello.txt'), 'hello\n');
  await waitConnected(t.app, ['fixture']);
});
afterAll(async () => {
  await t.close();
  cleanupTmp();
});

describe('the OpenAPI document', () => {
  it('is the one the route table and its schemas generate (npm run openapi:write), byte for byte', () => {
    // The same comparison as npm run openapi:check, inside npm test: a description changed in
    // document.ts without the file written again was caught only by that script, which CI does not run.
    expect(fs.readFileSync(path.resolve('openapi/openapi.json'), 'utf8')).toBe(openApiText());
  });

  it('is valid OpenAPI 3.1', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });
});

describe('every operation, called for real', () => {
  it('tools and search', async () => {
    const c = await call('get', '/tools');
    expect(c.status).toBe(200);
    expect((await call('get', '/tools?format=openai&deferred=include')).status).toBe(200);
    expect((await call('get', '/tools', undefined, { 'if-none-match': c.headers.get('etag')! })).status).toBe(304);
    expect((await call('get', '/tools?format=nope')).status).toBe(400);
    expect((await call('get', '/tools/search?q=notebook')).status).toBe(200);
    expect((await call('get', '/tools/search?q=')).status).toBe(400);
  });

  it('execute, executions, results, cancel', async () => {
    const r = await call('post', '/execute', {
      session_id: 'oa',
      tool_uses: [
        { type: 'tool_use', id: 'a1', name: 'Read', input: { file_path: 'hello.txt' } },
        { id: 'a2', type: 'function', function: { name: 'Glob', arguments: '{"pattern":"*.txt"}' } },
        { type: 'tool_use', id: 'a3', name: 'Progressing', input: { steps: 3 } },
        { type: 'tool_use', id: 'a4', name: 'Nope', input: {} },
      ],
    });
    expect(r.status).toBe(200);
    const ex = (r.json as { executions: Array<{ id: string; result_id: string | null }> }).executions;
    expect((await call('post', '/execute', { tool_uses: 'bad' })).status).toBe(400);
    const accepted = await call('post', '/execute', { session_id: 'oa', wait: false, tool_uses: [{ type: 'tool_use', id: 'slow', name: 'UnsafeSleep', input: { ms: 20_000, tag: 'x' } }] });
    expect(accepted.status).toBe(202);
    const slowId = (accepted.json as { executions: Array<{ id: string }> }).executions[0]!.id;
    for (let i = 0; i < 200 && t.app.toolexec.registry.get(slowId)?.call.status !== 'running'; i++) await new Promise((res) => setTimeout(res, 10));
    expect((await call('get', `/executions/${slowId}`)).status).toBe(200);
    expect((await call('post', `/executions/${slowId}/cancel`)).status).toBe(202);
    for (let i = 0; i < 200 && t.app.toolexec.registry.size > 0; i++) await new Promise((res) => setTimeout(res, 10));
    expect((await call('post', `/executions/${slowId}/cancel`)).status).toBe(409);
    expect((await call('post', '/executions/ex_nope/cancel')).status).toBe(404);
    const list = await call('get', '/executions?session_id=oa&limit=2');
    expect(list.status).toBe(200);
    const cursor = (list.json as { next_cursor: string }).next_cursor;
    expect((await call('get', `/executions?session_id=oa&cursor=${cursor}`)).status).toBe(200);
    expect((await call('get', '/executions?status=bogus')).status).toBe(400);
    expect((await call('get', `/executions/${ex[0]!.id}`)).status).toBe(200);
    expect((await call('get', '/executions/ex_missing')).status).toBe(404);
    const resultId = ex[2]!.result_id!;
    const whole = await call('get', `/results/${resultId}`);
    expect(whole.status).toBe(200);
    expect(whole.text.length).toBe(30_000);
    expect((await call('get', `/results/${resultId}`, undefined, { range: 'bytes=0-9' })).status).toBe(206);
    expect((await call('get', `/results/${resultId}`, undefined, { range: 'bytes=999999-' })).status).toBe(416);
    expect((await call('get', '/results/res_missing')).status).toBe(404);
  });

  it('audit', async () => {
    const a = await call('get', '/audit?limit=1&since=2020-01-01');
    expect(a.status).toBe(200);
    expect((await call('get', `/audit?cursor=${(a.json as { next_cursor: string }).next_cursor}&since=2020-01-01`)).status).toBe(200);
    expect((await call('get', '/audit?since=yesterday')).status).toBe(400);
  });

  it('permissions: requests, answers, check, rules', async () => {
    // An approver on the websocket makes the ask wait for an answer.
    const port = (t.app.server.address() as { port: number }).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${ADMIN}`);
    await new Promise((res) => ws.once('open', res));
    let subscribed!: () => void;
    const acked = new Promise<void>((res) => (subscribed = res));
    const requested = new Promise<string>((res) =>
      ws.on('message', (d) => {
        const f = JSON.parse(String(d));
        if (f.type === 'ack' && f.ref === 'subscribe') subscribed();
        if (f.type === 'permission.request') res(f.request.id);
      }),
    );
    ws.send(JSON.stringify({ type: 'subscribe', session_id: '*' }));
    // Subscribed once acknowledged (the frame and the call below come on different connections).
    await acked;
    const pending = call('post', '/execute', { session_id: 'perm', tool_uses: [{ type: 'tool_use', id: 'p1', name: 'Probe', input: { value: 'x' } }] });
    const id = await requested;
    expect((await call('get', '/permissions/requests')).status).toBe(200);
    expect((await call('post', `/permissions/requests/${id}`, { decision: 'allow', remember: 'session' })).status).toBe(200);
    expect((await pending).status).toBe(200);
    expect((await call('post', `/permissions/requests/${id}`, { decision: 'deny' })).status).toBe(409);
    expect((await call('post', '/permissions/requests/preq_missing', { decision: 'deny' })).status).toBe(404);
    expect((await call('post', `/permissions/requests/${id}`, { decision: 'maybe' })).status).toBe(400);
    ws.close();

    expect((await call('post', '/permissions/check', { name: 'Read', input: { file_path: 'hello.txt' } })).status).toBe(200);
    expect((await call('post', '/permissions/check', { name: 'Nope', input: {} })).status).toBe(404);
    expect((await call('post', '/permissions/check', { name: 'Read', input: {} })).status).toBe(400);

    const rules = await call('get', '/permissions/rules?session_id=perm');
    expect(rules.status).toBe(200);
    const created = await call('post', '/permissions/rules', { behavior: 'deny', rule: 'WebFetch(domain:evil.example)', scope: 'always' });
    expect(created.status).toBe(201);
    expect((await call('post', '/permissions/rules', { behavior: 'deny', rule: 'Bad(', scope: 'always' })).status).toBe(400);
    expect((await call('delete', `/permissions/rules/${(created.json as { rule: { id: string } }).rule.id}`)).status).toBe(204);
    expect((await call('delete', '/permissions/rules/rule_missing')).status).toBe(404);
    const configured = (rules.json as { rules: Array<{ id: string; read_only: boolean }> }).rules.find((r) => r.read_only)!;
    expect((await call('delete', `/permissions/rules/${configured.id}`)).status).toBe(409);
  });

  it('sessions', async () => {
    expect((await call('get', '/sessions/oa')).status).toBe(200);
    expect((await call('get', '/sessions/never-seen')).status).toBe(404);
    expect((await call('patch', '/sessions/oa', { mode: 'plan' })).status).toBe(200);
    expect((await call('patch', '/sessions/oa', { mode: 'sideways' })).status).toBe(400);
  });

  it('MCP servers and the MCP endpoint', async () => {
    expect((await call('get', '/mcp/servers')).status).toBe(200);
    expect((await call('get', '/mcp/servers/fixture')).status).toBe(200);
    expect((await call('get', '/mcp/servers/none')).status).toBe(404);
    const init = await call(
      'post',
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'conformance', version: '1' } } },
      { accept: 'application/json, text/event-stream' },
    );
    expect(init.status).toBe(200);
    const sid = init.headers.get('mcp-session-id')!;
    expect((await call('post', '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, { accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' })).status).toBe(202);
    expect((await call('get', '/mcp', undefined, { 'mcp-session-id': 'unknown' })).status).toBe(404);
    expect((await call('delete', '/mcp', undefined, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' })).status).toBe(200);
  });

  it('every route that takes a body documents its 413/415 answers, and /mcp its own as JSON-RPC errors', async () => {
    const bodyOps = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops)
        .filter((m) => m === 'post' || m === 'patch' || m === 'delete')
        .map((m) => `${m} ${p}`),
    );
    for (const op of bodyOps) {
      const [m, p] = op.split(' ') as [string, string];
      expect(Object.keys(doc.paths[p]![m]!.responses), op).toEqual(expect.arrayContaining(['413', '415']));
    }
    const text = { 'content-type': 'text/plain' };
    expect((await call('patch', '/sessions/oa', new Raw('mode=plan'), text)).status).toBe(415);
    expect((await call('post', '/executions/ex_none/cancel', new Raw('x'), text)).status).toBe(415);
    expect((await call('post', '/permissions/check', new Raw('x'), text)).status).toBe(415);
    expect((await call('post', '/permissions/rules', new Raw('x'), text)).status).toBe(415);
    expect((await call('post', '/permissions/requests/none', new Raw('x'), text)).status).toBe(415);
    expect((await call('delete', '/permissions/rules/none', new Raw('x'), text)).status).toBe(415);
    expect((await call('post', '/execute', {}, { 'content-encoding': 'gzip' })).status).toBe(415);
    const accept = { accept: 'application/json, text/event-stream' };
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
    // The MCP endpoint answers as the SDK's transport does: JSON-RPC errors.
    const garbage = await call('post', '/mcp', new Raw('garbage'), { ...accept, 'content-type': 'application/json' });
    expect(garbage.status).toBe(400);
    expect(garbage.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const media = await call('post', '/mcp', new Raw('x'), { ...accept, ...text });
    expect(media.status).toBe(415);
    expect(media.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect((await call('delete', '/mcp', new Raw('x'), text)).status).toBe(415);
    const notAcceptable = await call('post', '/mcp', init, { accept: 'application/json' });
    expect(notAcceptable.status).toBe(406);
    expect(notAcceptable.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('every route documents 503 while shutting down (the probes apart), and every route that needs a token 429', async () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        const codes = Object.keys(op.responses);
        if (p !== '/healthz' && p !== '/readyz') expect(codes, `${m} ${p}`).toContain('503');
        if ((op as { security?: unknown[] }).security?.length) expect(codes, `${m} ${p}`).toContain('429');
      }
    }
    // Answered as documented, by an instance with a rate limit, then by one shutting down.
    const limited = await makeApp({ server: { tokens: [{ name: 'admin', token: ADMIN, scopes: ['admin'] }], rateLimit: { max: 1, timeWindowMs: 60_000 } } });
    try {
      await limited.app.listen({ host: '127.0.0.1', port: 0 });
      const origin = `http://127.0.0.1:${(limited.app.server.address() as { port: number }).port}`;
      expect((await call('get', '/audit', undefined, {}, origin)).status).toBe(200);
      const second = await call('get', '/executions', undefined, {}, origin);
      expect(second.status).toBe(429);
      expect(second.json).toMatchObject({ error: { code: 'TOOLEXEC_ERR_RATE_LIMITED' } });
      expect((await call('patch', '/sessions/oa', { mode: 'plan' }, {}, origin)).status).toBe(429);
      limited.app.toolexec.closing = true;
      for (const [m, u] of [['get', '/tools'], ['get', '/openapi.json'], ['post', '/execute']] as const) {
        const r = await call(m, u, m === 'post' ? { tool_uses: [] } : undefined, {}, origin);
        expect(r.status, `${m} ${u}`).toBe(503);
        expect(r.json).toMatchObject({ error: { code: 'TOOLEXEC_ERR_SHUTTING_DOWN' } });
      }
    } finally {
      limited.app.toolexec.closing = false;
      await limited.close();
    }
  });

  it('operations: health, readiness, metrics, stats, docs, console, the websocket', async () => {
    expect((await call('get', '/healthz')).status).toBe(200);
    expect((await call('get', '/readyz')).status).toBe(200);
    const m = await call('get', '/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toContain('toolexec_');
    expect((await call('get', '/stats')).status).toBe(200);
    expect((await call('get', '/openapi.json')).status).toBe(200);
    expect((await call('get', '/docs')).status).toBe(200);
    expect((await call('get', '/console')).status).toBe(200);
    // /ws without the upgrade is refused; with it, it switches protocols.
    const port = (t.app.server.address() as { port: number }).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const opened = await new Promise<boolean>((res) => {
      ws.once('open', () => res(true));
      ws.once('error', () => res(false));
    });
    ws.close();
    expect(opened).toBe(true);
    called.add('get /ws');
  });

  it('has called every documented operation', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    expect(documented.filter((o) => !called.has(o))).toEqual([]);
  });
});
