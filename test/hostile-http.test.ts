/**
 * Hostile HTTP peers, as real servers on 127.0.0.1: Streamable HTTP MCP
 * servers that answer initialize or tools/call with errors, HTML, broken
 * JSON, redirects to another host, bodies that never end or are tens of MB,
 * the wrong content type, SSE streams of garbage, or a dropped socket; and
 * http hooks whose endpoint does the same. Whatever the peer does, the
 * service answers below 500, the call ends with a clear result in bounded
 * time, /healthz answers, and the other tools keep working.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HooksConfig } from '../src/config/schema.js';
import { ERROR_CODES } from '../src/errors.js';
import { MAX_MCP_OUTPUT_CHARS } from '../src/mcp/results.js';
import { cleanupTmp, execute, makeApp, textOf, use, type TestApp } from './helpers.js';
import { localServer, run, type LocalServer } from './helpers-hooks.js';
import { serverStatus, waitConnected, waitFor } from './helpers-mcp.js';
import { HUGE_BYTES, startHostileServer, startLegacySseServer, type HostileServer, type Mode } from './fixtures/hostile-http/mcp-http-server.js';

afterAll(cleanupTmp);

// Long enough that a server which answers (a 404, a 500) is not taken for a silent one on a loaded machine: a full
// run beside other work once saw c404's call and i500's initialize pass 1500 ms (the 40 MB case parses in this process).
const CALL_TIMEOUT_MS = 4000;
const FAST = { reconnect: { initialDelayMs: 100, maxDelayMs: 400 }, connectTimeoutMs: 4000 };

async function expectHealthy(app: FastifyInstance): Promise<void> {
  const h = await app.inject({ method: 'GET', url: '/healthz' });
  expect(h.statusCode).toBe(200);
}

async function call(app: FastifyInstance, tool: string, input: unknown = {}) {
  const r = await execute(app, { tool_uses: [use(tool, input)] });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const exec = r.body.executions[0]!;
  const result = r.body.tool_results[0]!;
  return { exec, result, text: textOf(result.content) };
}

interface ServerRow {
  name: string;
  state: string;
  type: string;
  tools: number;
  last_error: string | null;
  attempts: number;
}

async function servers(app: FastifyInstance): Promise<Record<string, ServerRow>> {
  const res = await app.inject({ method: 'GET', url: '/mcp/servers' });
  expect(res.statusCode).toBe(200);
  return Object.fromEntries((res.json() as { servers: ServerRow[] }).servers.map((s) => [s.name, s]));
}

describe('Streamable HTTP MCP servers that misbehave', () => {
  let srv: HostileServer;
  let t: TestApp;

  const INIT_FAULTS: Record<string, { mode: Mode; error: RegExp }> = {
    i500: { mode: '500', error: /HTTP 500|internal trouble/ },
    i404: { mode: '404', error: /HTTP 404|Not Found/ },
    ihtml: { mode: 'html', error: /content type: text\/html/i },
    ibadjson: { mode: 'badjson', error: /JSON/ },
    iredirect: { mode: 'redirect', error: /redirect|307/i },
    ihang: { mode: 'hang', error: /timed out|timeout/i },
    // 40 MB of garbage: refused as not JSON once read, or, on a loaded machine, not read within the connect timeout (as chuge).
    ihuge: { mode: 'huge', error: /JSON|too large|exceed|timed out/i },
    iwrongtype: { mode: 'wrongtype', error: /content type: text\/plain/i },
    isse: { mode: 'sse-garbage', error: /timed out|timeout/i },
    isilent: { mode: 'sse-silent', error: /timed out|timeout/i },
    iclose: { mode: 'sse-close', error: /.+/ },
    idestroy: { mode: 'destroy', error: /terminated|socket|fetch failed|closed/i },
  };
  // What a call of `hit` must end with, per fault of tools/call.
  const CALL_FAULTS: Record<string, { mode: Mode; classes: string[]; text: RegExp }> = {
    c500: { mode: '500', classes: ['mcp_disconnected', 'tool_error'], text: /internal trouble|HTTP 500/ },
    c404: { mode: '404', classes: ['mcp_disconnected', 'tool_error'], text: /Not Found|HTTP 404/ },
    chtml: { mode: 'html', classes: ['mcp_disconnected', 'tool_error'], text: /text\/html/ },
    cbadjson: { mode: 'badjson', classes: ['tool_error'], text: /JSON/ },
    credirect: { mode: 'redirect', classes: ['mcp_disconnected', 'tool_error'], text: /redirect|307/i },
    chang: { mode: 'hang', classes: ['timeout'], text: new RegExp(`did not answer hit within ${CALL_TIMEOUT_MS} ms`) },
    cendless: { mode: 'endless', classes: ['timeout', 'tool_error'], text: /did not answer hit|too large|exceed/i },
    // 40 MB of garbage: refused as not JSON once read, or, on a loaded machine, not read within timeoutMs.
    chuge: { mode: 'huge', classes: ['tool_error', 'timeout'], text: /JSON|too large|exceed|did not answer/i },
    cwrongtype: { mode: 'wrongtype', classes: ['mcp_disconnected', 'tool_error'], text: /text\/plain/ },
    csse: { mode: 'sse-garbage', classes: ['timeout'], text: new RegExp(`did not answer hit within ${CALL_TIMEOUT_MS} ms`) },
    csilent: { mode: 'sse-silent', classes: ['timeout'], text: new RegExp(`did not answer hit within ${CALL_TIMEOUT_MS} ms`) },
    cclose: { mode: 'sse-close', classes: ['timeout', 'mcp_disconnected'], text: /did not answer hit|disconnected/ },
    cdestroy: { mode: 'destroy', classes: ['mcp_disconnected'], text: /disconnected during the call/ },
  };

  beforeAll(async () => {
    srv = await startHostileServer();
    const mcpServers: Record<string, { type: 'http'; url: string; timeoutMs: number }> = {
      good: { type: 'http', url: srv.url('ok', 'ok'), timeoutMs: CALL_TIMEOUT_MS },
    };
    for (const [name, f] of Object.entries(INIT_FAULTS)) mcpServers[name] = { type: 'http', url: srv.url(f.mode), timeoutMs: CALL_TIMEOUT_MS };
    for (const [name, f] of Object.entries(CALL_FAULTS)) mcpServers[name] = { type: 'http', url: srv.url('ok', f.mode), timeoutMs: CALL_TIMEOUT_MS };
    t = await makeApp({ mcpServers, permissions: { allow: Object.keys(mcpServers).map((n) => `mcp__${n}`) } }, { mcp: FAST });
    await waitConnected(t.app, ['good', ...Object.keys(CALL_FAULTS)]);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await srv?.close();
  });

  it('a server whose initialize misbehaves is reported with its last error and retried; its tools are unknown, not a crash', async () => {
    const names = Object.keys(INIT_FAULTS);
    await waitFor(() => names.every((n) => serverStatus(t.app, n).attempts >= 2), 'every failing server to be retried', 30_000);
    const all = await servers(t.app);
    for (const [name, f] of Object.entries(INIT_FAULTS)) {
      const s = all[name]!;
      expect(s, name).toMatchObject({ type: 'http', tools: 0 });
      expect(['reconnecting', 'connecting'], name).toContain(s.state);
      expect(s.last_error, name).toMatch(f.error);
      expect(s.last_error!.length, name).toBeLessThanOrEqual(500);
    }
    // The redirect to another host was not followed.
    expect(srv.seen.some((x) => x.path === '/ok/ok' && x.method === 'initialize')).toBe(true); // `good` only
    const r = await call(t.app, 'mcp__ihang__hit');
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'not_found' });
    await expectHealthy(t.app);
    expect((await call(t.app, 'mcp__good__fine', { message: 'still here' })).text).toBe('fine: still here');
  }, 60_000);

  it('a tools/call that misbehaves ends as a clear tool error, never internal; the server and the others stay usable', async () => {
    const results = await Promise.all(Object.keys(CALL_FAULTS).map(async (name) => [name, await call(t.app, `mcp__${name}__hit`)] as const));
    for (const [name, r] of results) {
      const f = CALL_FAULTS[name]!;
      expect(r.exec.status, `${name}: ${r.text}`).toBe('failed');
      expect(r.result.is_error, name).toBe(true);
      expect(f.classes, `${name}: ${r.exec.error_class} ${r.text}`).toContain(r.exec.error_class);
      expect(r.text, name).toMatch(f.text);
      expect(r.text, name).toContain(`"${name}"`);
      expect(r.text.length, name).toBeLessThan(2000);
    }
    await expectHealthy(t.app);
    expect((await call(t.app, 'mcp__good__fine', { message: 'after' })).text).toBe('fine: after');
    // Each faulty server answers its well-behaved tool again (after a reconnect where the fault dropped the connection).
    for (const name of Object.keys(CALL_FAULTS)) {
      await waitConnected(t.app, [name]);
      const ok = await waitFor(async () => {
        const r = await call(t.app, `mcp__${name}__fine`, { message: name });
        return r.exec.status === 'succeeded' ? r : undefined;
      }, `${name} to answer fine`, 15_000);
      expect(ok.text).toBe(`fine: ${name}`);
    }
    const all = await servers(t.app);
    for (const name of Object.keys(CALL_FAULTS)) expect(all[name]!.state, name).toBe('connected');
  }, 60_000);

  it('a tools/call result of tens of MB is bounded: stored and previewed, not passed on whole', async () => {
    const s2 = await startHostileServer();
    const app = await makeApp(
      { mcpServers: { big: { type: 'http', url: s2.url('ok', 'hugevalid'), timeoutMs: 20_000 } }, permissions: { allow: ['mcp__big'] } },
      { mcp: FAST },
    );
    try {
      await waitConnected(app.app, ['big']);
      const r = await call(app.app, 'mcp__big__hit');
      expect(r.exec.status, r.text).toBe('succeeded');
      expect(r.text.length).toBeLessThan(MAX_MCP_OUTPUT_CHARS);
      expect(r.text.length).toBeLessThan(HUGE_BYTES / 100);
      expect(r.exec.result_id).toBeTruthy();
      await expectHealthy(app.app);
    } finally {
      await app.close();
      await s2.close();
    }
  }, 60_000);

  it('an answer that never ends is not read forever: the client lets go of the connection once the call timed out', async () => {
    const stuck = ['hang', 'endless', 'sse-garbage', 'sse-silent'] as const;
    const names: Record<(typeof stuck)[number], string> = { hang: 'chang', endless: 'cendless', 'sse-garbage': 'csse', 'sse-silent': 'csilent' };
    const before = Object.fromEntries(stuck.map((m) => [m, srv.abandoned(new URL(srv.url('ok', m)).pathname)]));
    const results = await Promise.all(stuck.map((m) => call(t.app, `mcp__${names[m]}__hit`)));
    for (const r of results) expect(r.exec).toMatchObject({ status: 'failed', error_class: 'timeout' });
    for (const m of stuck) {
      const path = new URL(srv.url('ok', m)).pathname;
      await waitFor(() => srv.abandoned(path) > before[m]!, `the ${m} response to be closed by the client`, 10_000);
    }
    await expectHealthy(t.app);
  }, 30_000);

  it('a JSON answer past the message bound is cut with a clear error, not buffered whole', async () => {
    const s2 = await startHostileServer();
    const app = await makeApp(
      { mcpServers: { over: { type: 'http', url: s2.url('ok', 'overcap'), timeoutMs: 20_000 } }, permissions: { allow: ['mcp__over'] } },
      { mcp: FAST },
    );
    try {
      await waitConnected(app.app, ['over']);
      const r = await call(app.app, 'mcp__over__hit');
      expect(r.exec.status).toBe('failed');
      expect(['tool_error', 'mcp_disconnected']).toContain(r.exec.error_class);
      expect(r.text).toContain('larger than 67108864 bytes');
      await expectHealthy(app.app);
    } finally {
      await app.close();
      await s2.close();
    }
  }, 60_000);
});

describe('SSE events past the message bound', () => {
  it('Streamable HTTP: an SSE answer whose event never ends within 64 MB is cut with a clear error, not held whole', async () => {
    const s2 = await startHostileServer();
    const app = await makeApp(
      { mcpServers: { sseover: { type: 'http', url: s2.url('ok', 'sse-overcap'), timeoutMs: 5000 } }, permissions: { allow: ['mcp__sseover'] } },
      { mcp: FAST },
    );
    try {
      await waitConnected(app.app, ['sseover']);
      const r = await call(app.app, 'mcp__sseover__hit');
      expect(r.exec.status).toBe('failed');
      expect(['tool_error', 'mcp_disconnected', 'timeout']).toContain(r.exec.error_class);
      expect(r.text).toContain("an event of the server's stream is larger than 67108864 bytes");
      await expectHealthy(app.app);
    } finally {
      await app.close();
      await s2.close();
    }
  }, 60_000);

  it('legacy SSE: a stream event past the bound ends the connection with a clear last error', async () => {
    const s2 = await startLegacySseServer();
    // The connect timeout is far off: the attempt must end on the stream's error, not at the timeout.
    const app = await makeApp({ mcpServers: { legacy: { type: 'sse', url: s2.url } } }, { mcp: { ...FAST, connectTimeoutMs: 120_000 } });
    try {
      await waitFor(async () => /larger than 67108864 bytes/.test((await servers(app.app)).legacy?.last_error ?? ''), 'the legacy server to fail on its stream', 30_000);
      expect((await servers(app.app)).legacy!.state).not.toBe('connected');
      await expectHealthy(app.app);
    } finally {
      await app.close();
      await s2.close();
    }
  }, 60_000);
});

describe('legacy SSE: a message that is not JSON-RPC', () => {
  it('is tolerated: the server still connects', async () => {
    const s2 = await startLegacySseServer('garbage-first');
    const app = await makeApp({ mcpServers: { legacy: { type: 'sse', url: s2.url } } }, { mcp: { ...FAST, connectTimeoutMs: 10_000 } });
    try {
      await waitFor(async () => (await servers(app.app)).legacy?.state === 'connected', 'the legacy server to connect', 20_000);
      await expectHealthy(app.app);
    } finally {
      await app.close();
      await s2.close();
    }
  }, 60_000);
});

describe('http hooks whose endpoint misbehaves', () => {
  let hookSrv: LocalServer | undefined;
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    await hookSrv?.close();
    hookSrv = undefined;
  });

  const hugeJsonStart = (res: import('node:http').ServerResponse, n: number) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = '{"a":1,'.padEnd(65536, ' ');
    let left = n;
    const pump = (): void => {
      while (left > 0) {
        if (res.destroyed) return;
        left -= chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end('}');
    };
    pump();
  };

  const ANSWERS: Record<string, (res: import('node:http').ServerResponse) => void> = {
    '/500': (res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<html>oops</html>'),
    '/html': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body>hi</body></html>'),
    '/badjson': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"hookSpecificOutput": {'),
    '/wrongtypes': (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ continue: 'yes', hookSpecificOutput: { permissionDecision: 42 } })),
    '/redirect-deny': (res) => res.writeHead(302, { location: '/deny' }).end(),
    '/deny': (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'followed a redirect' } })),
    '/hang': (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"hookSpecificOutput":');
    },
    '/hugejson': (res) => hugeJsonStart(res, 20 * 1024 * 1024),
    '/slow': (res) => {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"block","reason":"late"}'), 8000);
      res.on('close', () => clearTimeout(timer));
    },
  };

  const hooksAt = (urls: string[], event: 'PreToolUse' | 'PostToolUse' = 'PreToolUse'): HooksConfig => ({
    [event]: [{ matcher: 'mcp__none|Glob', hooks: urls.map((url) => ({ type: 'http' as const, url, timeout: 1 })) }],
  });

  it('PreToolUse: every failure of the endpoint is a non-blocking error and the call goes on; a redirect is not followed', async () => {
    hookSrv = await localServer((req, res) => (ANSWERS[req.url] ?? ((r) => r.writeHead(404).end()))(res));
    const closed = await localServer((_r, res) => void res.end());
    const refused = `${closed.url}/gone`;
    await closed.close();
    const urls = ['/500', '/html', '/badjson', '/wrongtypes', '/redirect-deny', '/hang', '/hugejson', '/slow'].map((p) => `${hookSrv!.url}${p}`);
    t = await makeApp({ hooks: hooksAt([...urls, refused]), permissions: { allow: ['Glob'] } });
    const r = await run(t, 'Glob', { pattern: '*.nothing' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow' } });
    const by = Object.fromEntries(r.messages.map((m) => [m.hook.replace(hookSrv!.url, ''), m]));
    expect(by['/500']).toMatchObject({ kind: 'non_blocking_error', exitCode: 1 });
    expect(by['/500']!.text).toContain('HTTP 500');
    // A 2xx answer that is not JSON: Claude Code's non-blocking error (an http hook must answer JSON).
    expect(by['/html']).toMatchObject({ kind: 'non_blocking_error' });
    expect(by['/html']!.text).toContain('HTTP hook must return JSON, but got non-JSON response body: <!doctype html>');
    expect(by['/badjson']).toMatchObject({ kind: 'non_blocking_error' });
    expect(by['/badjson']!.text).toContain('does not parse');
    expect(by['/wrongtypes']).toMatchObject({ kind: 'non_blocking_error' });
    expect(by['/wrongtypes']!.text).toContain('Hook JSON output is not valid');
    expect(by['/redirect-deny']).toMatchObject({ kind: 'non_blocking_error' });
    expect(by['/redirect-deny']!.text).toContain('Hook failed to run');
    expect(hookSrv.requests.some((q) => q.url === '/deny')).toBe(false);
    expect(by['/hang']!.text).toContain('timed out');
    expect(by['/slow']!.text).toContain('timed out');
    expect(by['/hugejson']).toMatchObject({ kind: 'non_blocking_error' });
    expect(by['/hugejson']!.text).toMatch(/output cap|timed out/);
    expect(by[refused]!.text).toContain('Hook failed to run');
    for (const m of r.messages) expect(m.text.length).toBeLessThan(2000);
    await expectHealthy(t.app);
  }, 30_000);

  it('PostToolUse: a failing endpoint does not turn a finished call into an error', async () => {
    hookSrv = await localServer((req, res) => (ANSWERS[req.url] ?? ((r) => r.writeHead(404).end()))(res));
    const urls = ['/500', '/badjson', '/hang', '/hugejson'].map((p) => `${hookSrv!.url}${p}`);
    t = await makeApp({ hooks: hooksAt(urls, 'PostToolUse'), permissions: { allow: ['Glob'] } });
    const r = await run(t, 'Glob', { pattern: '*.nothing' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.block.is_error).not.toBe(true);
    expect(r.messages.length).toBe(4);
    for (const m of r.messages) expect(m.kind).toBe('non_blocking_error');
    await expectHealthy(t.app);
  }, 30_000);
});

/** Writes raw bytes to the listening app and reads until the server closes the connection. */
function rawExchange(port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    }, timeoutMs);
    sock.on('data', (b) => chunks.push(b));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    sock.on('connect', () => sock.write(bytes));
  });
}

function parseRaw(answer: string): { status: number; headers: string; body: unknown } {
  const m = /^HTTP\/1\.1 (\d{3}) [^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(answer);
  expect(m, answer.slice(0, 300)).not.toBeNull();
  return { status: Number(m![1]), headers: m![2]!.toLowerCase(), body: JSON.parse(m![3]!) };
}

describe('hostile HTTP clients: what the HTTP parser refuses before routing', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await makeApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  const host = (): string => `Host: 127.0.0.1:${port}\r\n`;
  const CASES: Record<string, { bytes: () => string | Buffer; status: number; code: keyof typeof ERROR_CODES; message: RegExp }> = {
    'a malformed request line': { bytes: () => 'GARBAGE\r\n\r\n', status: 400, code: 'TOOLEXEC_ERR_REQUEST_INVALID', message: /request line|not valid HTTP/ },
    'a header line without a colon': {
      bytes: () => `GET /healthz HTTP/1.1\r\n${host()}NoColonHere\r\n\r\n`,
      status: 400,
      code: 'TOOLEXEC_ERR_REQUEST_INVALID',
      message: /header/i,
    },
    'a control byte in a header value': {
      bytes: () => Buffer.concat([Buffer.from(`GET /tools HTTP/1.1\r\n${host()}Authorization: Bearer `), Buffer.from([1, 0xff]), Buffer.from('\r\n\r\n')]),
      status: 400,
      code: 'TOOLEXEC_ERR_REQUEST_INVALID',
      message: /header|not valid HTTP/i,
    },
    'an invalid chunk size': {
      bytes: () => `POST /execute HTTP/1.1\r\n${host()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      status: 400,
      code: 'TOOLEXEC_ERR_REQUEST_INVALID',
      message: /chunk/i,
    },
    'Content-Length together with Transfer-Encoding: chunked': {
      bytes: () =>
        `POST /execute HTTP/1.1\r\n${host()}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      status: 400,
      code: 'TOOLEXEC_ERR_REQUEST_INVALID',
      message: /Content-Length|Transfer-Encoding/,
    },
    // The websocket library's own refusals (text/html before this) are answered in the contract's shape too.
    'a websocket upgrade without a Sec-WebSocket-Key': {
      bytes: () => `GET /ws HTTP/1.1\r\n${host()}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      status: 400,
      code: 'TOOLEXEC_ERR_REQUEST_INVALID',
      message: /Sec-WebSocket-Key/,
    },
    'a websocket upgrade with an unsupported Sec-WebSocket-Version': {
      bytes: () =>
        `GET /ws HTTP/1.1\r\n${host()}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\n\r\n`,
      status: 400,
      code: 'TOOLEXEC_ERR_REQUEST_INVALID',
      message: /Sec-WebSocket-Version/,
    },
    'headers past the size limit': {
      bytes: () => `GET /tools/search?q=${'a'.repeat(100_000)} HTTP/1.1\r\n${host()}\r\n`,
      status: 431,
      code: 'TOOLEXEC_ERR_REQUEST_HEADERS_TOO_LARGE',
      message: /headers/,
    },
  };

  for (const [name, c] of Object.entries(CASES)) {
    it(`${name}: ${c.status} in the contract's error shape, then the connection is closed`, async () => {
      const r = parseRaw(await rawExchange(port, c.bytes()));
      expect(r.status).toBe(c.status);
      expect(r.headers).toMatch(/content-type: application\/json/);
      expect(r.headers).toMatch(/connection: close/);
      const body = r.body as { error: { code: string; message: string } };
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error.code).toBe(c.code);
      expect(body.error.message).toMatch(c.message);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    });
  }

  it('a client that resets mid-request leaves nothing behind and the service keeps serving', async () => {
    for (let i = 0; i < 20; i++) {
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => {});
      await new Promise((r) => sock.once('connect', r));
      sock.write(`GET /healthz HTTP/1.1\r\n${host()}Bad`);
      sock.resetAndDestroy();
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
