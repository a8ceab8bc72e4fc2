/**
 * "Secrets never reach logs, responses or child environments", checked end
 * to end with real parts: a crashing stdio MCP server that prints its
 * environment, HTTP MCP servers that echo credentials or carry them in their
 * URL, a classifier URL with userinfo, http hooks whose headers take
 * variables, wrong tokens, and configuration errors. Every response of the
 * read routes and every log line is scanned for each secret in each form
 * (raw, JSON-escaped, percent-encoded).
 */
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { Config } from '../src/config/schema.js';
import { configSecrets } from '../src/observability/logging.js';
import { bashTool } from '../src/tools/bash.js';
import { cleanupTmp, execute, makeApp, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { FAST_MCP, serverStatus, waitFor } from './helpers-mcp.js';
import { captureLog, leaked, localHttp, sweepRoutes, type Local } from './helpers-secrets.js';

let t: TestApp | undefined;
const servers: Local[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const s of servers.splice(0)) await s.close();
});
afterAll(cleanupTmp);

const TOKEN = 'tok-principal-a-0123456789abcdef';
const ENV_TOKEN = 'tok-env-principal-9876543210zyx';
const AUTH = { authorization: `Bearer ${TOKEN}` };

async function local(handler: Parameters<typeof localHttp>[0]): Promise<Local> {
  const s = await localHttp(handler);
  servers.push(s);
  return s;
}

/**
 * Runs `env` through Bash, reads every route (the call's execution too), stops the service, and checks that
 * none of `secrets` is in Bash's output, the routes' answers or the log.
 */
async function expectNoneInBashEnvRoutesOrLog(log: ReturnType<typeof captureLog>, secrets: string[]): Promise<void> {
  const r = await execute(t!.app, { tool_uses: [use('Bash', { command: 'env' })] }, AUTH);
  const bashOut = textOf(r.body.tool_results[0]!.content);
  expect(bashOut).toContain('PATH=');
  const body = await sweepRoutes(t!.app, AUTH, [r.body.executions[0]!.id]);
  await t!.close();
  t = undefined;
  expect(leaked(bashOut, secrets)).toEqual([]);
  expect(leaked(body, secrets)).toEqual([]);
  expect(leaked(log.text(), secrets)).toEqual([]);
}

describe('MCP servers', () => {
  it('a stdio server that crashes printing its environment: last_error, logs and Bash see none of its env secrets', async () => {
    const LITERAL = 'mcp-literal-key-0123456789';
    const FROM_ENV = 'gh-from-env-abcdef0123456';
    const log = captureLog();
    const env = { ...process.env, GH_SOURCE_TOKEN: FROM_ENV, TOOLEXEC_TOKEN: ENV_TOKEN };
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        permissions: { allow: ['Bash(env)'] },
        mcpServers: {
          crashy: {
            command: process.execPath,
            args: ['-e', "console.error('boot failed, env: API_KEY=' + process.env.API_KEY + ' GH_TOKEN=' + process.env.GH_TOKEN); process.exit(3)"],
            env: { API_KEY: LITERAL, GH_TOKEN: '${GH_SOURCE_TOKEN}' },
          },
        },
        logging: { level: 'debug' },
      },
      { extraTools: [bashTool], env, logger: undefined, logStream: log.stream, mcp: FAST_MCP },
    );
    await waitFor(() => serverStatus(t!.app, 'crashy').last_error?.includes('stderr'), 'the crash to be reported');
    const status = serverStatus(t.app, 'crashy');
    // The crash is still reported, with its stderr, masked.
    expect(status.last_error).toContain('process exited with code 3');
    expect(status.last_error).toContain('API_KEY=[redacted]');

    await expectNoneInBashEnvRoutesOrLog(log, [LITERAL, FROM_ENV, TOKEN, ENV_TOKEN]);
  });

  it('an HTTP server that refuses the connection echoing the Authorization header it got', async () => {
    const MCP_TOKEN = 'mcp-bearer-secret-0123456789';
    const srv = await local((req, res) => {
      res.statusCode = 401;
      res.setHeader('content-type', 'text/plain');
      res.end(`bad credentials: ${req.headers.authorization ?? ''} x-api-key=${String(req.headers['x-api-key'])}`);
    });
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        mcpServers: {
          remote: { type: 'http', url: `${srv.url}/mcp`, headers: { Authorization: 'Bearer ${MCP_TOKEN}', 'X-Api-Key': 'literal-api-key-0123456789' } },
        },
        logging: { level: 'debug' },
      },
      { env: { ...process.env, MCP_TOKEN }, logger: undefined, logStream: log.stream, mcp: FAST_MCP },
    );
    await waitFor(() => serverStatus(t!.app, 'remote').last_error, 'the refusal to be reported');
    const status = serverStatus(t.app, 'remote');
    // Still reported, with what the server said, masked.
    expect(status.last_error).toContain('bad credentials: Bearer [redacted] x-api-key=[redacted]');
    const body = await sweepRoutes(t.app, AUTH);
    await t.close();
    t = undefined;
    const secrets = [MCP_TOKEN, 'literal-api-key-0123456789'];
    expect(leaked(body, secrets)).toEqual([]);
    expect(leaked(log.text(), secrets)).toEqual([]);
  });

  it('an HTTP server whose URL carries userinfo', async () => {
    const PASS = 'url-password-0123456789';
    const srv = await local((_req, res) => {
      res.statusCode = 500;
      res.end('no');
    });
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        mcpServers: { withuser: { type: 'http', url: `http://svc:${PASS}@127.0.0.1:${srv.port}/mcp` } },
        logging: { level: 'debug' },
      },
      { logger: undefined, logStream: log.stream, mcp: FAST_MCP },
    );
    await waitFor(() => serverStatus(t!.app, 'withuser').last_error, 'the failure to be reported');
    const body = await sweepRoutes(t.app, AUTH);
    await t.close();
    t = undefined;
    expect(leaked(body, [PASS])).toEqual([]);
    expect(leaked(log.text(), [PASS])).toEqual([]);
  });
});

describe('MCP servers that take their key in the URL or on the command line', () => {
  it('a query parameter, literal or ${VAR}, a credential-named ${VAR} in args, a header’s ${VAR:-default}: reported masked, kept from Bash and logs', async () => {
    const KEY = 'exa-key-from-env-0123456789';
    const LITERAL = 'literal-query-key-0123456789';
    const ARG = 'arg-key-from-env-0123456789';
    const DEFAULT = 'default-api-key-0123456789';
    // A server that answers 404 quoting the URL it was asked for, query included.
    const srv = await local((req, res) => {
      res.statusCode = 404;
      res.end(`Cannot ${req.method ?? ''} ${req.url ?? ''} (key ${String(req.headers['x-api-key'])})`);
    });
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        permissions: { allow: ['Bash(env)'] },
        mcpServers: {
          // The header's default is what is sent: UNSET_API_KEY is not set.
          hosted: { type: 'http', url: `${srv.url}/mcp?exaApiKey=\${EXA_API_KEY}&profile=dev`, headers: { 'X-Api-Key': `\${UNSET_API_KEY:-${DEFAULT}}` } },
          keyed: { type: 'http', url: `${srv.url}/v1/mcp?api_key=${LITERAL}` },
          cli: { command: process.execPath, args: ['-e', 'console.error("bad key " + process.argv[1]); process.exit(3)', '${SEARCH_API_KEY}'] },
        },
        logging: { level: 'debug' },
      },
      { extraTools: [bashTool], env: { ...process.env, EXA_API_KEY: KEY, SEARCH_API_KEY: ARG }, logger: undefined, logStream: log.stream, mcp: FAST_MCP },
    );
    await waitFor(() => ['hosted', 'keyed'].every((n) => serverStatus(t!.app, n).last_error?.includes('Cannot POST')) && serverStatus(t!.app, 'cli').last_error?.includes('bad key'), 'the failures to be reported');
    // Still reported, with what the servers said, masked.
    expect(serverStatus(t.app, 'hosted').last_error).toContain('Cannot POST /mcp?exaApiKey=[redacted]&profile=dev (key [redacted])');
    expect(serverStatus(t.app, 'keyed').last_error).toContain('Cannot POST /v1/mcp?api_key=[redacted]');
    expect(serverStatus(t.app, 'cli').last_error).toContain('bad key [redacted]');
    await expectNoneInBashEnvRoutesOrLog(log, [KEY, LITERAL, ARG, DEFAULT]);
  });
});

describe('classifier', () => {
  it('a classifier URL with credentials never reaches decisions, audit or logs', async () => {
    const PASS = 'classifier-pass-0123456789';
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        permissions: { defaultMode: 'auto' },
        classifier: { url: `http://judge:${PASS}@127.0.0.1:9/classify` },
        logging: { level: 'debug' },
      },
      { extraTools: [bashTool], logger: undefined, logStream: log.stream },
    );
    const r = await execute(t.app, { tool_uses: [use('Bash', { command: 'touch x' })] }, AUTH);
    const responses = JSON.stringify(r.body) + (await sweepRoutes(t.app, AUTH, [r.body.executions[0]!.id]));
    await t.close();
    t = undefined;
    expect(responses).toContain('classifier unavailable');
    expect(leaked(responses, [PASS])).toEqual([]);
    expect(leaked(log.text(), [PASS])).toEqual([]);
  });
});

describe('hooks', () => {
  it('an http hook whose headers take $VAR from allowedEnvVars: the value reaches neither Bash, responses nor logs', async () => {
    const HOOK_TOKEN = 'hook-token-value-0123456789';
    const seen: string[] = [];
    const srv = Object.assign(
      await local((req, res) => {
        seen.push(req.headers.authorization ?? '');
        res.statusCode = 500;
        res.end(`rejected ${req.headers.authorization ?? ''}`);
      }),
      { seen },
    );
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        permissions: { allow: ['Bash(env)'] },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: `${srv.url}/hook`, headers: { Authorization: 'Bearer $HOOK_TOKEN' }, allowedEnvVars: ['HOOK_TOKEN'] }] }],
        },
        logging: { level: 'debug' },
      },
      { extraTools: [bashTool], env: { ...process.env, HOOK_TOKEN }, logger: undefined, logStream: log.stream },
    );
    // A websocket subscriber of the session sees the call's frames.
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as { port: number }).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: AUTH });
    const frames: string[] = [];
    ws.on('message', (m) => frames.push(String(m)));
    await new Promise<void>((resolve, reject) => {
      ws.once('message', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'subscribe', session_id: 'sess-hook' }));
    await waitFor(() => frames.some((f) => f.includes('sess-hook')), 'the subscription to be acknowledged');
    const r = await execute(t.app, { session_id: 'sess-hook', tool_uses: [use('Bash', { command: 'env' })] }, AUTH);
    await waitFor(() => frames.some((f) => f.includes('execution.finished')), 'the finished frame');
    ws.close();
    const bashOut = textOf(r.body.tool_results[0]!.content);
    expect(bashOut).toContain('PATH=');
    // The hook did send the variable, and its failure is reported, masked.
    expect(srv.seen).toContain(`Bearer ${HOOK_TOKEN}`);
    const responses = JSON.stringify(r.body) + (await sweepRoutes(t.app, AUTH, [r.body.executions[0]!.id]));
    await t.close();
    t = undefined;
    expect(responses).toContain('rejected Bearer [redacted]');
    expect(leaked(frames.join('\n'), [HOOK_TOKEN])).toEqual([]);
    expect(leaked(bashOut, [HOOK_TOKEN])).toEqual([]);
    expect(leaked(responses, [HOOK_TOKEN])).toEqual([]);
    expect(leaked(log.text(), [HOOK_TOKEN])).toEqual([]);
  });

  it('an http hook whose URL carries userinfo: its failure is reported without the password', async () => {
    const PASS = 'hook-url-pass-0123456789';
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        permissions: { allow: ['Bash(true)'] },
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: `http://hk:${PASS}@127.0.0.1:9/hook` }] }] },
        logging: { level: 'debug' },
      },
      { extraTools: [bashTool], logger: undefined, logStream: log.stream },
    );
    const r = await execute(t.app, { tool_uses: [use('Bash', { command: 'true' })] }, AUTH);
    const responses = JSON.stringify(r.body) + (await sweepRoutes(t.app, AUTH, [r.body.executions[0]!.id]));
    await t.close();
    t = undefined;
    expect(responses).toContain('hk:[redacted]@127.0.0.1');
    expect(leaked(responses, [PASS])).toEqual([]);
    expect(leaked(log.text(), [PASS])).toEqual([]);
  });

  it('a command hook that blocks with its environment on stderr shows no secret', async () => {
    const log = captureLog();
    const REDACTED = 'redacted-by-name-0123456789';
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }], redact: ['MY_SECRET'] },
        permissions: { allow: ['Bash(true)'] },
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'env >&2; exit 2' }] }] },
        logging: { level: 'debug' },
      },
      { extraTools: [bashTool], env: { ...process.env, MY_SECRET: REDACTED, TOOLEXEC_TOKEN: ENV_TOKEN }, logger: undefined, logStream: log.stream },
    );
    const r = await execute(t.app, { tool_uses: [use('Bash', { command: 'true' })] }, AUTH);
    const text = textOf(r.body.tool_results[0]!.content);
    expect(text).toContain('PATH=');
    const responses = JSON.stringify(r.body) + (await sweepRoutes(t.app, AUTH, [r.body.executions[0]!.id]));
    await t.close();
    t = undefined;
    const secrets = [REDACTED, ENV_TOKEN, TOKEN];
    expect(leaked(responses, secrets)).toEqual([]);
    expect(leaked(log.text(), secrets)).toEqual([]);
  });
});

describe('tool output', () => {
  it('a command that prints the service’s token, however it assembles it, answers and stores it masked, inline and persisted, across chunk boundaries', async () => {
    const env = { ...process.env, TOOLEXEC_TOKEN: ENV_TOKEN };
    t = await makeApp({ server: { tokens: [{ name: 'a', token: TOKEN }] }, permissions: { allow: ['Bash'] } }, { extraTools: [bashTool], env });
    const half = TOKEN.length / 2;
    // Halves joined by the shell: no scrubbing of the command or the environment can see it.
    const small = await execute(t.app, { session_id: 's', tool_uses: [use('Bash', { command: `a='${TOKEN.slice(0, half)}'; b='${TOKEN.slice(half)}'; echo "token: $a$b"` })] }, AUTH);
    expect(textOf(small.body.tool_results[0]!.content)).toBe('token: [redacted]');
    // 300,000 characters with the tokens at many offsets, some across the 64 K chunk boundaries.
    const script = `a='${TOKEN.slice(0, half)}'; b='${TOKEN.slice(half)}'; c='${ENV_TOKEN.slice(0, 7)}'; d='${ENV_TOKEN.slice(7)}'; for i in $(seq 1 3000); do printf '%0*d%s%s\n' $((i % 61)) 0 "$a$b" "$c$d"; done`;
    const big = await execute(t.app, { session_id: 's', tool_uses: [use('Bash', { command: script })] }, AUTH);
    const id = big.body.executions[0]!.result_id as string;
    expect(id).toBeTruthy();
    const whole = await t.app.inject({ method: 'GET', url: `/results/${id}`, headers: AUTH });
    expect(whole.statusCode).toBe(200);
    expect(whole.body.split('\n').filter(Boolean)).toHaveLength(3000);
    expect(whole.body.split('[redacted]').length - 1).toBe(6000);
    const read = await sweepRoutes(t.app, AUTH, [small.body.executions[0]!.id, big.body.executions[0]!.id]);
    expect(leaked(`${whole.body}\n${JSON.stringify(small.body)}\n${JSON.stringify(big.body)}\n${read}`, [TOKEN, ENV_TOKEN])).toEqual([]);
  });
});

describe('authentication', () => {
  it('a wrong token that is another principal’s token prefix, sent every way, is neither echoed nor logged', async () => {
    const log = captureLog();
    const prefix = TOKEN.slice(0, 20);
    t = await makeApp({ server: { tokens: [{ name: 'a', token: TOKEN }] }, logging: { level: 'debug' } }, { logger: undefined, logStream: log.stream });
    const bodies: string[] = [];
    for (const headers of [{ authorization: `Bearer ${prefix}` }, { 'x-api-key': prefix }, { 'x-api-key': TOKEN, authorization: 'Basic Zm9vOmJhcg==' }]) {
      const r = await t.app.inject({ method: 'GET', url: '/stats', headers });
      bodies.push(r.body);
    }
    expect(bodies.slice(0, 2).every((b) => b.includes('TOOLEXEC_ERR_AUTH_INVALID'))).toBe(true);
    // A query token on a route that takes none is refused and its URL logged masked.
    const q = await t.app.inject({ method: 'GET', url: `/executions?limit=1&token=${prefix}`, headers: { 'x-api-key': TOKEN } });
    bodies.push(q.body);
    const q2 = await t.app.inject({ method: 'GET', url: `/stats?access_token=${TOKEN}` });
    bodies.push(q2.body);
    await t.close();
    t = undefined;
    const text = log.text();
    expect(leaked(bodies.join('\n'), [TOKEN, prefix])).toEqual([]);
    expect(leaked(text, [TOKEN, prefix])).toEqual([]);
    expect(text).toContain('/executions?limit=1&token=[redacted]');
  });
});

describe('credentials in a request’s query', () => {
  it('a wrong one under any credential-like name is logged masked, the rest of the URL as sent', async () => {
    const log = captureLog();
    t = await makeApp({ server: { tokens: [{ name: 'a', token: TOKEN }] }, logging: { level: 'debug' } }, { logger: undefined, logStream: log.stream });
    const wrong = ['old-rotated-token-0123456789', 'someone-elses-key-0123456789', 'a-password-0123456789', 'sig-value-0123456789'];
    const urls = [
      `/stats?access_token=${wrong[0]}`,
      `/audit?limit=5&api_key=${wrong[1]}&x=1`,
      `/executions?password=${wrong[2]}`,
      `/tools?apiKey=${wrong[1]}&sig=${wrong[3]}`,
    ];
    for (const url of urls) await t.app.inject({ method: 'GET', url, headers: { authorization: 'Bearer nope-not-a-token-0123' } });
    await t.close();
    t = undefined;
    const text = log.text();
    expect(text).toContain('/audit?limit=5&api_key=[redacted]&x=1');
    expect(text).toContain('/tools?apiKey=[redacted]&sig=[redacted]');
    expect(leaked(text, wrong)).toEqual([]);
  });
});

describe('configuration errors', () => {
  it('a token shorter than the minimum is refused without quoting it', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'toolexec.json');
    const short = 'shorty-secret';
    fs.writeFileSync(file, JSON.stringify({ server: { tokens: [{ name: 'a', token: short }] } }));
    let err: unknown;
    try {
      loadConfig({ configPath: file, env: {}, cwd: dir });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/server\.tokens\[0\]\.token/);
    expect((err as Error).message).not.toContain(short);
  });

  it('a token of the wrong type is refused without quoting it', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'toolexec.json');
    fs.writeFileSync(file, JSON.stringify({ server: { tokens: [{ name: 'a', token: 1234567890123456789, scopes: ['nope-0123456789'] }] } }));
    expect(() => loadConfig({ configPath: file, env: {}, cwd: dir })).toThrow(ConfigError);
    try {
      loadConfig({ configPath: file, env: {}, cwd: dir });
    } catch (e) {
      expect((e as Error).message).not.toContain('1234567890123456789');
    }
  });
});

describe('configSecrets', () => {
  it('takes credential-like MCP env values, URL userinfo, and the allowed variables hook headers send; nothing else', () => {
    const config = Config.parse({
      mcpServers: {
        db: { command: 'x', env: { DB_URL: 'postgres://app:db-pass-0123@db/x', NODE_ENV: 'production', SERVICE_TOKEN: '${SVC}' } },
        git: { type: 'http', url: 'https://git@example.com/mcp' },
        tok: { type: 'http', url: 'https://ghp_0123456789abcdefXYZ@example.com/mcp' },
      },
      hooks: {
        PreToolUse: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:9/h', headers: { 'X-Custom': '$ALLOWED and $NOT_ALLOWED' }, allowedEnvVars: ['ALLOWED'] }] }],
      },
    });
    const got = configSecrets(config, { SVC: 'svc-secret-1', ALLOWED: 'allowed-secret-1', NOT_ALLOWED: 'not-sent-1' });
    expect(new Set(got)).toEqual(new Set(['db-pass-0123', 'svc-secret-1', 'ghp_0123456789abcdefXYZ', 'allowed-secret-1']));
  });

  it('takes credential-like query parameters and credential-named variables, not the other parameters and variables', () => {
    const config = Config.parse({
      mcpServers: {
        q: { type: 'http', url: 'https://mcp.example.com/mcp?api_key=lit%2Bkey-0123&region=eu-west-1&v=${VERSION}' },
        v: { type: 'http', url: 'https://${HOST}/s/${ZAPIER_SECRET}/mcp', headers: { 'X-Tenant': '${TENANT_TOKEN}', 'X-Api-Key': '${UNSET_KEY:-default-key-0123}' } },
        c: { command: 'npx', args: ['server', '--key', '${SEARCH_KEY}', '--dir', '${HOME_DIR}'], env: { CONFIG: '${GH_TOKEN}' } },
      },
      hooks: { PreToolUse: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:9/h?sig=abcdef0123456&mode=strict-mode' }] }] },
    });
    const env = { VERSION: '2024-11-05', HOST: 'mcp.example.com', ZAPIER_SECRET: 'zap-secret-0123', TENANT_TOKEN: 'tenant-tok-0123', SEARCH_KEY: 'search-key-0123', HOME_DIR: '/home/someone', GH_TOKEN: 'ghp_from_env_0123' };
    expect(new Set(configSecrets(config, env))).toEqual(
      new Set(['lit%2Bkey-0123', 'lit+key-0123', 'zap-secret-0123', 'tenant-tok-0123', 'default-key-0123', 'search-key-0123', 'ghp_from_env_0123', 'abcdef0123456']),
    );
  });

  it('ignores short values found only by their names, which would garble logs and strip child variables', async () => {
    const config = Config.parse({ mcpServers: { x: { command: 'x', env: { CACHE_TOKEN_ENABLED: 'true', API_KEY_VERSION: '1', SECRET_NAME: 'hunter2x' } } } });
    expect(configSecrets(config, {})).toEqual(['hunter2x']);
    // End to end: a Bash child keeps variables that merely equal such a value, and the log stays JSON.
    const log = captureLog();
    t = await makeApp(
      { permissions: { allow: ['Bash'] }, mcpServers: { x: { command: process.execPath, args: ['-e', 'process.exit(0)'], env: { CACHE_TOKEN_ENABLED: 'true' } } } },
      { extraTools: [bashTool], logger: undefined, logStream: log.stream, env: { ...process.env, PLAIN_FLAG: 'true' } },
    );
    const r = await execute(t.app, { tool_uses: [use('Bash', { command: 'echo "flag=$PLAIN_FLAG"' })] });
    expect(textOf(r.body.tool_results[0]!.content)).toContain('flag=true');
    for (const line of log.text().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });
});
