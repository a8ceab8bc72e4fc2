/**
 * Every route of the OpenAPI document, and the asset routes beside it,
 * fuzzed through app.inject() on an app with tokens: random path ids, query
 * strings, bodies (valid-looking per the schema, mutated, or not JSON at
 * all), content types, methods, and credentials (the right token, none, a
 * wrong one, one without the route's scope). Whatever the request:
 *   - the answer is not 5xx, bar a 503 with a back-pressure code;
 *   - an error is JSON `{error:{code,message}}` with a known code (on /mcp, a
 *     JSON-RPC error is also the protocol's answer);
 *   - a scoped route never answers below 400 without a token holding its scope;
 *   - and the service still serves afterwards.
 * Tool calls stay harmless: only Read, Glob, Grep, TodoWrite, ToolSearch and a
 * probe tool are ever named where something runs. FUZZ_ROUTES_SCALE=n runs n
 * times as many cases.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';
import { cleanupTmp, makeApp, probeTool, type TestApp } from './helpers.js';
import {
  anyInput,
  anyToolName,
  auth,
  contentType,
  encodeSegment,
  fromSchema,
  harmlessCall,
  headerSafe,
  hugeString,
  LONG_SESSION,
  mutated,
  queryString,
  rawBody,
  rpcBody,
  rpcMessage,
  ruleText,
  safeInput,
  safeToolName,
  segment,
  sessionId,
  useId,
  wellFormedBody,
  type JsonSchema,
  type OpenApiDoc,
  type OpenApiOp,
  type Overrides,
} from './helpers-fuzz.js';

const doc = JSON.parse(fs.readFileSync(path.resolve('openapi/openapi.json'), 'utf8')) as OpenApiDoc;
const SCALE = Number(process.env.FUZZ_ROUTES_SCALE ?? 1) || 1;

const TOKENS = {
  admin: 'fuzz-admin-token-00000000000000',
  execute: 'fuzz-execute-token-000000000000',
  read: 'fuzz-read-token-0000000000000000',
  approve: 'fuzz-approve-token-0000000000000',
} as const;

/** 503 is legitimate only as back-pressure or shutdown, with its code. */
const BACKPRESSURE = new Set(Object.entries(ERROR_CODES).filter(([, v]) => v.status === 503).map(([k]) => k));

let t: TestApp;
/** Ids that exist in the app, so that fuzzed requests also reach the found branches. */
const real = { id: [] as string[], file: [] as string[], sessions: [] as string[], cursors: [] as string[], etags: [] as string[] };
let mcpSession = '';
/** Live MCP sessions that are never deleted (POST only), and spare ones DELETE may end. */
const mcpLive: string[] = [];
const mcpSpare: string[] = [];

interface Req {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | undefined;
}

async function send(r: Req) {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within 15 s: ${r.method} ${r.url.slice(0, 200)}`)), 15_000);
  });
  try {
    return await Promise.race([
      t.app.inject({ method: r.method as HTTPMethods, url: r.url, headers: r.headers, ...(r.payload === undefined ? {} : { payload: r.payload }) }),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
type Res = Awaited<ReturnType<typeof send>>;

/** FUZZ_ROUTES_STATS=1 prints how often each route answered each status, to see what the generators reach. */
const stats = new Map<string, Map<number, number>>();
function count(key: string, status: number): void {
  const m = stats.get(key) ?? new Map<number, number>();
  m.set(status, (m.get(status) ?? 0) + 1);
  stats.set(key, m);
}

function parse(text: string): { error?: { code?: unknown; message?: unknown }; jsonrpc?: unknown } | undefined {
  try {
    return JSON.parse(text) as never;
  } catch {
    return undefined;
  }
}

/** The properties every answer has, whatever was asked. */
function check(r: Req, res: Res, o: { key: string; scoped: boolean; authorized: boolean; mcp: boolean }): void {
  count(o.key, res.statusCode);
  const where = `${r.method} ${r.url.slice(0, 300)} [${JSON.stringify(r.headers).slice(0, 300)}] ${JSON.stringify(r.payload?.slice(0, 300))} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  const body = parse(res.body);
  if (res.statusCode >= 500) {
    expect(res.statusCode === 503 && BACKPRESSURE.has(String(body?.error?.code)), `5xx: ${where}`).toBe(true);
  }
  if (res.statusCode >= 400 && r.method !== 'HEAD') {
    expect(String(res.headers['content-type']), `error not JSON: ${where}`).toMatch(/^application\/json/);
    const rpc = o.mcp && body?.jsonrpc === '2.0' && typeof body.error?.code === 'number' && typeof body.error.message === 'string';
    if (!rpc) {
      expect(typeof body?.error?.code === 'string' && Object.hasOwn(ERROR_CODES, body.error.code), `error without a known code: ${where}`).toBe(true);
      expect(typeof body?.error?.message, `error without a message: ${where}`).toBe('string');
    }
  }
  if (o.scoped && !o.authorized) expect(res.statusCode, `answered without the scope: ${where}`).toBeGreaterThanOrEqual(400);
  if (r.method !== 'HEAD' && res.body !== '' && /^application\/json/.test(String(res.headers['content-type']))) {
    expect(body, `JSON content type, body not JSON: ${where}`).toBeDefined();
  }
}

// ---- what gets generated ------------------------------------------------------

const OVERRIDES: Record<string, Overrides> = {
  '/execute': {
    name: safeToolName,
    input: safeInput,
    arguments: fc.oneof(safeInput, safeInput.map((v) => JSON.stringify(v)), fc.string()),
    session_id: sessionId,
    id: useId,
    call_id: useId,
  },
  '/permissions/check': { name: anyToolName, input: anyInput, session_id: sessionId },
  '/permissions/rules': { rule: ruleText, session_id: sessionId },
  '/permissions/requests/{id}': { rule: ruleText, updated_input: anyInput },
};

const resultRefs = () => real.id.filter((i) => i.startsWith('result://'));

interface Op {
  method: string;
  path: string;
  scope: string | undefined;
  spec: OpenApiOp | undefined;
}

/** The URL: each {param} a fuzzed segment, sometimes a mangled path, then a fuzzed query. */
function url(op: Pick<Op, 'path' | 'spec'>): fc.Arbitrary<string> {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const query = (op.spec?.parameters ?? []).filter((p) => p.in === 'query');
  const valid: Record<string, fc.Arbitrary<string>> = {};
  for (const p of query) {
    valid[p.name] =
      p.name === 'session_id' ? fc.oneof(fc.constantFrom(...real.sessions), sessionId) : p.name === 'cursor' && real.cursors.length > 0 ? fc.constantFrom(...real.cursors) : fromSchema(doc, p.schema ?? {}).map(String);
  }
  const mangle = fc.oneof(
    { arbitrary: fc.constant((u: string) => u), weight: 12 },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        (u: string) => `${u}/`,
        (u: string) => `/${u}`,
        (u: string) => u.replace(/\//g, '//'),
        (u: string) => u.toUpperCase(),
        (u: string) => `${u}/extra`,
        (u: string) => `${u}/..`,
        (u: string) => `${u}%2F..`,
        (u: string) => `${u};x=1`,
        (u: string) => `${u}#frag`,
      ),
    },
  );
  return fc
    .tuple(fc.tuple(...names.map((n) => segment(n === 'file' ? real.file : real.id))), mangle, queryString(query.map((p) => p.name), valid))
    .map(([segs, m, q]) => {
      let i = 0;
      return m(op.path.replace(/\{[^}]+\}/g, () => segs[i++]!)) + q;
    });
}

function body(op: Op): fc.Arbitrary<{ payload: string | undefined; type: string | undefined }> {
  const schema: JsonSchema | undefined = op.spec?.requestBody?.content['application/json']?.schema;
  const payloads: Array<{ arbitrary: fc.Arbitrary<string | undefined>; weight: number }> = [
    { arbitrary: rawBody, weight: 1 },
    { arbitrary: fc.constant(undefined), weight: op.method === 'get' || op.method === 'delete' ? 8 : 1 },
  ];
  if (schema) {
    const bySchema = fromSchema(doc, schema, OVERRIDES[op.path] ?? {});
    const wellFormed = wellFormedBody(op.path, t.workspace, resultRefs(), real.sessions);
    const valid = wellFormed ? fc.oneof(bySchema, wellFormed) : bySchema;
    payloads.push({ arbitrary: valid.map((v) => JSON.stringify(v)), weight: 6 }, { arbitrary: mutated(valid).map((v) => JSON.stringify(v)), weight: 3 });
  }
  if (op.path === '/mcp' && op.method === 'post') {
    const call = fc.tuple(harmlessCall(t.workspace, resultRefs()), fc.integer()).map(([c, id]) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: c.name, arguments: c.input } }));
    payloads.push(
      { arbitrary: rpcBody.map((v) => JSON.stringify(v)), weight: 8 },
      { arbitrary: call.map((v) => JSON.stringify(v)), weight: 6 },
      { arbitrary: mutated(rpcMessage).map((v) => JSON.stringify(v)), weight: 3 },
    );
  }
  return fc.record({ payload: fc.oneof(...payloads), type: contentType });
}

/** Headers some routes read: Range, If-None-Match, the MCP session and its accept header. */
function extraHeaders(op: Op): fc.Arbitrary<Record<string, string | undefined>> {
  const common = {
    'x-request-id': fc.option(fc.oneof(fc.string(), hugeString(100, 300), fc.constant('req-1')).map(headerSafe), { nil: undefined }),
    accept: fc.option(fc.constantFrom('*/*', 'text/html', 'application/json', 'nope/nope', ''), { nil: undefined }),
  };
  if (op.path === '/results/{id}') {
    const range = fc.oneof(
      fc.constantFrom('bytes=0-', 'bytes=-0', 'bytes=-1', 'bytes=0-0', 'bytes=5-2', 'bytes=99999999999999999999-', 'bytes=-99999999999999999999', 'bytes=0-0,1-1', 'bytes=', 'bytes=-', 'items=0-1', 'bytes=1e3-', 'bytes= 0-1'),
      fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `bytes=${a}-${b}`),
      fc.string().map(headerSafe),
    );
    return fc.record({ ...common, range: fc.option(range, { nil: undefined }) });
  }
  if (op.path === '/tools' || op.path === '/console') {
    const etag = fc.oneof(fc.constantFrom(...real.etags, '*', 'W/"x"', '""', '"a", "b"'), fc.string().map(headerSafe));
    return fc.record({ ...common, 'if-none-match': fc.option(etag, { nil: undefined }) });
  }
  if (op.path === '/mcp') {
    // A live session only where the answer ends: GET on a live session opens an endless stream.
    const live = op.method === 'post' ? mcpLive : op.method === 'delete' ? mcpSpare : [];
    const other = fc.oneof(fc.constantFrom('mcp_nope', '', ' '), fc.string().map(headerSafe));
    const sid = fc.option(live.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...live), weight: 3 }, { arbitrary: other, weight: 1 }) : other, { nil: undefined, freq: 4 });
    return fc.record({
      ...common,
      accept: fc.oneof(fc.constant('application/json, text/event-stream'), fc.constantFrom('application/json', 'text/event-stream', '*/*', undefined)),
      'mcp-session-id': sid,
      'mcp-protocol-version': fc.option(fc.constantFrom('2025-06-18', '2024-11-05', 'garbage', ''), { nil: undefined }),
      'last-event-id': fc.option(fc.string().map(headerSafe), { nil: undefined }),
    });
  }
  return fc.record(common);
}

function headersOf(...parts: Array<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p)) if (v !== undefined) out[k] = v;
  return out;
}

function request(op: Op): fc.Arbitrary<{ req: Req; authorized: boolean }> {
  return fc.record({ url: url(op), auth: auth(TOKENS, op.scope), body: body(op), extra: extraHeaders(op) }).map(({ url, auth, body, extra }) => ({
    authorized: auth.authorized,
    req: {
      method: op.method.toUpperCase(),
      url,
      headers: headersOf(extra, auth.headers, { 'content-type': body.type }),
      payload: body.payload,
    },
  }));
}

// ---- the routes -----------------------------------------------------------------

const documented: Op[] = Object.entries(doc.paths).flatMap(([p, methods]) =>
  Object.entries(methods).map(([method, spec]) => ({ method, path: p, scope: spec['x-scope'], spec })),
);

/** Cases per route: more where the handling is richest. */
const RUNS: Record<string, number> = {
  'post /execute': 250,
  'post /mcp': 400,
  'post /permissions/check': 200,
  'post /permissions/rules': 150,
  'patch /sessions/{id}': 150,
  'get /results/{id}': 150,
  'get /audit': 150,
  'get /executions': 150,
};
const runsOf = (op: Pick<Op, 'method' | 'path'>) => Math.round((RUNS[`${op.method} ${op.path}`] ?? 100) * SCALE);

beforeAll(async () => {
  t = await makeApp(
    {
      server: {
        tokens: [
          { name: 'admin', token: TOKENS.admin, scopes: ['admin'] },
          { name: 'executor', token: TOKENS.execute, scopes: ['execute'] },
          { name: 'reader', token: TOKENS.read, scopes: ['read'] },
          { name: 'approver', token: TOKENS.approve, scopes: ['approve'] },
        ],
        bodyLimitBytes: 64 * 1024,
      },
      results: { persistThresholdChars: 1000 },
    },
    { extraTools: [probeTool({ permission: 'allow', output: (i) => (i.value.startsWith('big') ? 'line\n'.repeat(400) : `value=${i.value}`) })] },
  );
  fs.mkdirSync(path.join(t.workspace, 'sub'));
  fs.writeFileSync(path.join(t.workspace, 'sub', 'a.txt'), 'alpha\nbeta\n');
  const admin = { authorization: `Bearer ${TOKENS.admin}` };
  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { ...admin, 'content-type': 'application/json', ...headers } });

  const ex = await post('/execute', {
    session_id: 's_fuzz',
    tool_uses: [
      { type: 'tool_use', id: 'toolu_big', name: 'Probe', input: { value: 'big' } },
      { type: 'tool_use', id: 'toolu_missing', name: 'Read', input: { file_path: path.join(t.workspace, 'missing.txt') } },
      { type: 'tool_use', id: 'toolu_denied', name: 'Bash', input: { command: 'echo never runs: no approver' } },
    ],
  });
  expect(ex.statusCode).toBe(200);
  const executions = ex.json().executions as Array<{ id: string; result_id: string | null }>;
  expect(executions[0]!.result_id).toMatch(/^res_/);
  real.id.push(...executions.map((e) => e.id), executions[0]!.result_id!, `result://${executions[0]!.result_id!}`);
  expect((await post('/execute', { session_id: LONG_SESSION, tool_uses: [] })).statusCode).toBe(200);
  const rule = await post('/permissions/rules', { behavior: 'deny', rule: 'Bash(rm:*)', scope: 'session', session_id: 's_fuzz' });
  expect(rule.statusCode).toBe(201);
  const always = await post('/permissions/rules', { behavior: 'ask', rule: 'WebFetch(domain:example.com)', scope: 'always' });
  real.id.push(rule.json().rule.id, always.json().rule.id, 's_fuzz', LONG_SESSION, 'user:0', 'config:0');
  real.sessions.push('s_fuzz', LONG_SESSION);
  const requests = await t.app.inject({ method: 'GET', url: '/permissions/requests', headers: admin });
  real.id.push(...(requests.json().requests as Array<{ id: string }>).map((r) => r.id));
  for (const u of ['/executions?limit=1', '/audit?limit=1']) {
    const c = (await t.app.inject({ method: 'GET', url: u, headers: admin })).json().next_cursor as string | null;
    if (c) real.cursors.push(c);
  }
  real.etags.push(String((await t.app.inject({ method: 'GET', url: '/tools', headers: admin })).headers.etag));
  real.etags.push(String((await t.app.inject({ method: 'GET', url: '/console' })).headers.etag));
  real.file.push('swagger-ui.css', 'favicon-32x32.png', 'init.js', ...fs.readdirSync(path.resolve('src/console')));

  const init = (sid?: string, headers: Record<string, string> = {}) =>
    post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } },
      { accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid } : {}), ...headers },
    );
  for (let i = 0; i < 3; i++) {
    const r = await init();
    expect(r.statusCode).toBe(200);
    const sid = String(r.headers['mcp-session-id']);
    if (i === 0) mcpSession = sid;
    else mcpSpare.push(sid);
  }
  // A session belongs to the token that opened it: one for the execute-only token too.
  const mine = await init(undefined, { authorization: `Bearer ${TOKENS.execute}` });
  expect(mine.statusCode).toBe(200);
  mcpLive.push(mcpSession, String(mine.headers['mcp-session-id']));
});

afterAll(async () => {
  if (process.env.FUZZ_ROUTES_STATS) {
    for (const [k, m] of stats) console.log(k.padEnd(36), [...m].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`).join(' '));
  }
  await t?.close();
  cleanupTmp();
});

describe('every documented route, fuzzed', () => {
  it('covers every route the app registers', () => {
    const known = new Set(documented.map((o) => `${o.method} ${o.path}`));
    const registered = (t.app.routeList as Array<{ method: string; url: string }>).map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
    const extra = registered.filter((r) => !known.has(r));
    // Only the static asset routes are undocumented; they are fuzzed below.
    expect(extra.sort()).toEqual(['get /console/assets/{file}', 'get /docs/assets/{file}', 'get /docs/init.js']);
  });

  for (const op of documented) {
    it(`${op.method.toUpperCase()} ${op.path}`, async () => {
      await fc.assert(
        fc.asyncProperty(request(op), async ({ req, authorized }) => {
          check(req, await send(req), { key: `${op.method.toUpperCase()} ${op.path}`, scoped: op.scope !== undefined, authorized, mcp: op.path === '/mcp' });
        }),
        { numRuns: runsOf(op) },
      );
    });
  }

  for (const p of ['/console/assets/{file}', '/docs/assets/{file}', '/docs/init.js']) {
    it(`GET ${p} (undocumented asset route)`, async () => {
      const op: Op = { method: 'get', path: p, scope: undefined, spec: undefined };
      await fc.assert(
        fc.asyncProperty(request(op), async ({ req }) => {
          check(req, await send(req), { key: `GET ${p}`, scoped: false, authorized: true, mcp: false });
        }),
        { numRuns: Math.round(60 * SCALE) },
      );
    });
  }

  it('any method on any known path', async () => {
    const paths = [...new Set([...documented.map((o) => o.path), '/console/assets/{file}', '/docs/assets/{file}', '/'])];
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'SEARCH', 'LOCK', 'QUERY', 'MKCOL');
    const arb = fc
      .tuple(fc.constantFrom(...paths), method)
      .chain(([p, m]) => fc.tuple(fc.constant(m), url({ path: p, spec: undefined }), auth(TOKENS, undefined), fc.option(rawBody, { nil: undefined }), contentType))
      .map(([m, u, a, payload, type]): Req => ({ method: m, url: u, headers: headersOf(a.headers, { 'content-type': type }), payload }));
    await fc.assert(
      fc.asyncProperty(arb, async (req) => {
        check(req, await send(req), { key: 'any method', scoped: false, authorized: true, mcp: req.url.startsWith('/mcp') });
      }),
      { numRuns: Math.round(400 * SCALE) },
    );
  });
});

describe('without tokens', () => {
  const EVIL_HOSTS = ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', 'attacker:8787', '[::2]:80', '0.0.0.0'];
  const EVIL_ORIGINS = ['http://evil.example', 'https://localhost.evil.example', 'http://127.0.0.1.nip.io', 'file://', 'chrome-extension://x'];

  it('a page elsewhere (Origin) or a rebound name (Host) never reaches a scoped route, and nothing is 5xx', async () => {
    const open = await makeApp({}, { extraTools: [probeTool({ permission: 'allow' })] });
    try {
      const ops = documented.filter((o) => !(o.path === '/mcp' && o.method === 'get'));
      const arb = fc
        .constantFrom(...ops)
        .chain((op) =>
          fc.tuple(
            fc.constant(op),
            request(op),
            fc.oneof(fc.constantFrom('localhost', '127.0.0.1:8787', '[::1]:80', '127.9.9.9', 'LOCALHOST', '', ...EVIL_HOSTS), fc.string().map(headerSafe)),
            fc.option(fc.oneof(fc.constantFrom('null', 'http://localhost:3000', 'http://[::1]', ...EVIL_ORIGINS), fc.string().map(headerSafe)), { nil: undefined }),
          ),
        );
      await fc.assert(
        fc.asyncProperty(arb, async ([op, { req }, host, origin]) => {
          const headers = headersOf(req.headers, { host, origin });
          const res = await open.app.inject({ method: req.method as HTTPMethods, url: req.url, headers, ...(req.payload === undefined ? {} : { payload: req.payload }) });
          const evil = EVIL_HOSTS.includes(host) || (origin !== undefined && EVIL_ORIGINS.includes(origin));
          check({ ...req, headers }, res, { key: 'no tokens', scoped: op.scope !== undefined, authorized: !evil, mcp: op.path === '/mcp' });
        }),
        { numRuns: Math.round(300 * SCALE) },
      );
      expect((await open.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('regressions found by this fuzz', () => {
  const admin = { authorization: `Bearer ${TOKENS.admin}` };

  it('an id of 101 to 256 characters reaches its route (the router stopped at 100 with a 414 and Fastify’s own body)', async () => {
    const ok = await t.app.inject({ method: 'GET', url: `/sessions/${LONG_SESSION}`, headers: admin });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().session.id).toBe(LONG_SESSION);
    for (const id of ['a'.repeat(300), 'a'.repeat(5000), encodeSegment('é'.repeat(2000))]) {
      const res = await t.app.inject({ method: 'GET', url: `/executions/${id}`, headers: admin });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    }
  });

  it('GET /docs/assets/<an Object.prototype key> is a 404 (it streamed a missing file and the stream’s error killed the process)', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const res = await t.app.inject({ method: 'GET', url: `/docs/assets/${name}` });
      expect(res.statusCode, name).toBe(404);
      expect(res.json().error.code, name).toBe('TOOLEXEC_ERR_ROUTE_NOT_FOUND');
    }
    const css = await t.app.inject({ method: 'GET', url: '/docs/assets/swagger-ui.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
  });

  it('a rule naming an Object.prototype key is an ordinary rule (it compiled to a non-string tool name and every later call failed, across restarts for "always")', async () => {
    for (const rule of ['__proto__', 'constructor', 'toString(x)', 'hasOwnProperty()']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/permissions/rules',
        headers: { ...admin, 'content-type': 'application/json' },
        payload: JSON.stringify({ behavior: 'deny', rule, scope: 'always' }),
      });
      expect(res.statusCode, rule).toBe(201);
      expect(res.json().rule.tool, rule).toBe(rule.replace(/\(.*$/, ''));
    }
    const rules = await t.app.inject({ method: 'GET', url: '/permissions/rules', headers: admin });
    expect(rules.statusCode).toBe(200);
    const res = await t.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'after-rules', name: 'Probe', input: { value: 'ok' } }] }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().tool_results[0].content).toBe('value=ok');
  });

  it('a malformed percent-encoding in the path is a 400 with a code (it was Fastify’s own body)', async () => {
    for (const u of ['/executions/%', '/results/%E0%A4%A', '/sessions/%zz', '/console/assets/%', '/docs/assets/%ED%A0%80']) {
      const res = await t.app.inject({ method: 'GET', url: u, headers: admin });
      expect(res.statusCode, u).toBe(400);
      expect(res.json().error.code, u).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    }
  });

  it('GET /ws without an upgrade is a 400 with a code (it was an empty 404); without a token, 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ws', headers: admin });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    const anon = await t.app.inject({ method: 'GET', url: '/ws' });
    expect(anon.statusCode).toBe(401);
    expect(anon.json().error.code).toBe('TOOLEXEC_ERR_AUTH_MISSING');
  });

  it('a tools/call on the MCP fast path answers through inject (it was a 500: the stand-in socket has no setTimeout)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...admin, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': mcpSession },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'Probe', arguments: { value: 'via mcp' } } }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'value=via mcp' }] } });
  });
});

describe('request body encodings (robustness review)', () => {
  const admin = { authorization: `Bearer ${TOKENS.admin}` };
  const body = JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'enc', name: 'Probe', input: { value: 'x' } }] });

  it('a Content-Encoding other than identity is a 415 saying the body is not decompressed (gzip was "not valid JSON"; br was ignored)', async () => {
    const gz = (await import('node:zlib')).gzipSync(body);
    for (const [enc, payload] of [['gzip', gz], ['br', body], ['deflate, identity', body], ['x-unknown', body]] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/execute',
        headers: { ...admin, 'content-type': 'application/json', 'content-encoding': enc },
        payload,
      });
      expect(res.statusCode, enc).toBe(415);
      expect(res.json().error.code, enc).toBe('TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA');
      expect(res.json().error.message, enc).toMatch(/Content-Encoding .* not supported.*decompress/);
    }
    for (const sess of ['/sessions/enc-s', '/permissions/check']) {
      const res = await t.app.inject({
        method: sess.startsWith('/sessions') ? 'PATCH' : 'POST',
        url: sess,
        headers: { ...admin, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        payload: (await import('node:zlib')).gzipSync('{"mode":"plan"}'),
      });
      expect(res.statusCode, sess).toBe(415);
    }
    const ok = await t.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { ...admin, 'content-type': 'application/json', 'content-encoding': 'identity' },
      payload: body,
    });
    expect(ok.statusCode).toBe(200);
  });

  it('a charset other than UTF-8 is a 415 (it was decoded as UTF-8 without comment); utf-8 in any spelling is accepted', async () => {
    for (const cs of ['utf-16', 'latin1', 'ISO-8859-1', '"utf-16le"']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/execute',
        headers: { ...admin, 'content-type': `application/json; charset=${cs}` },
        payload: body,
      });
      expect(res.statusCode, cs).toBe(415);
      expect(res.json().error.code, cs).toBe('TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA');
      expect(res.json().error.message, cs).toMatch(/charset .*must be UTF-8/);
    }
    for (const cs of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/execute',
        headers: { ...admin, 'content-type': `application/json; charset=${cs}` },
        payload: body.replace('"enc"', `"enc-${cs.replace(/\W/g, '')}"`),
      });
      expect(res.statusCode, cs).toBe(200);
    }
  });

  it('bytes that are not valid UTF-8 are a 400 (they became U+FFFD without comment)', async () => {
    const bad = Buffer.concat([Buffer.from('{"tool_uses":[{"type":"tool_use","id":"bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('","name":"Probe","input":{"value":"x"}}]}')]);
    const res = await t.app.inject({ method: 'POST', url: '/execute', headers: { ...admin, 'content-type': 'application/json' }, payload: bad });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    expect(res.json().error.message).toMatch(/UTF-8/);
  });

  it('without a token, a compressed body is still a 401 first', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/execute', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: body });
    expect(res.statusCode).toBe(401);
  });
});

describe('afterwards', () => {
  it('is alive, ready, and still executes', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const res = await t.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { authorization: `Bearer ${TOKENS.execute}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'still-up', name: 'Probe', input: { value: 'still up' } }] }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().tool_results[0].content).toBe('value=still up');
  });
});
