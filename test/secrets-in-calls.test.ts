/**
 * The service's secrets in what a call carries besides the tool's output
 * (which secrets-leak.test.ts covers): a token the model writes into a
 * tool's input, and the text the other steps put in the answer and the
 * record — a denial that quotes the command, a hook's stderr or reason that
 * echoes its input, a validation error naming a parameter, an MCP server's
 * progress messages, the session's todos. Each is checked in the answer, the
 * read routes, the websocket frames, the log and the database's bytes; and
 * what runs is the input as sent.
 */
import fs from 'node:fs';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { makeMasker, maskValue } from '../src/observability/logging.js';
import { cleanupTmp, execute, makeApp, textOf, use, type TestApp } from './helpers.js';
import { FAST_MCP, fixtureStdio, waitConnected, waitFor } from './helpers-mcp.js';
import { captureLog, leaked, sweepRoutes } from './helpers-secrets.js';

let t: TestApp | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.close();
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const TOKEN = 'tok-principal-a-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** The database file and its WAL, as bytes read as text. */
function dbText(dbPath: string): string {
  return [dbPath, `${dbPath}-wal`].map((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'latin1') : '')).join('\n');
}

/** A websocket subscribed to a session, collecting its frames. */
async function subscriber(app: TestApp['app'], session: string): Promise<{ ws: WebSocket; frames: string[] }> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: AUTH });
  sockets.push(ws);
  const frames: string[] = [];
  ws.on('message', (m) => frames.push(String(m)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'subscribe', session_id: session }));
  await waitFor(() => frames.some((f) => f.includes('"ack"') && f.includes('subscribe')), 'the subscription to be acknowledged');
  return { ws, frames };
}

describe('a token the model writes into an input', () => {
  it('runs as sent, and is stored, listed, audited, logged and sent to approvers masked; a retry still replays', async () => {
    const log = captureLog();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'a', token: TOKEN }] },
        permissions: { allow: ['Bash(printf:*)', 'TodoWrite'], ask: ['Bash(printf %s:*)'] },
        logging: { level: 'debug' },
      },
      { logger: undefined, logStream: log.stream },
    );
    const { ws, frames } = await subscriber(t.app, 's');
    ws.on('message', (m) => {
      const f = JSON.parse(String(m)) as { type: string; request?: { id: string } };
      if (f.type === 'permission.request') ws.send(JSON.stringify({ type: 'permission.respond', request_id: f.request!.id, decision: 'allow' }));
    });
    // The command counts the characters of what it was given: 32 for the token, 10 for "[redacted]".
    const asked = use('Bash', { command: `printf %s '${TOKEN}' | wc -c` }, 'tu-asked');
    const todo = use('TodoWrite', { todos: [{ content: `rotate ${TOKEN}`, status: 'in_progress', activeForm: 'Rotating' }] }, 'tu-todo');
    const r = await execute(t.app, { session_id: 's', tool_uses: [asked, todo] }, AUTH);
    expect(r.status).toBe(200);
    expect(textOf(r.body.tool_results[0]!.content).trim()).toBe(String(TOKEN.length));
    expect(r.body.executions.map((e: { status: string }) => e.status)).toEqual(['succeeded', 'succeeded']);
    const request = frames.map((f) => JSON.parse(f) as { type: string; request?: { input: { command: string }; suggested_rule: string } }).find((f) => f.type === 'permission.request')!;
    expect(request.request!.input.command).toBe("printf %s '[redacted]' | wc -c");
    // No rule naming the token is offered to remember.
    expect(request.request!.suggested_rule).toBe('');

    const ids = r.body.executions.map((e: { id: string }) => e.id);
    const detail = await t.app.inject({ method: 'GET', url: `/executions/${ids[0]}`, headers: AUTH });
    expect(detail.json().execution.input.command).toBe("printf %s '[redacted]' | wc -c");
    const read = [
      await sweepRoutes(t.app, AUTH, ids),
      (await t.app.inject({ method: 'GET', url: '/permissions/requests', headers: AUTH })).body,
      (await t.app.inject({ method: 'GET', url: '/sessions/s', headers: AUTH })).body,
    ].join('\n');
    expect(read).toContain('rotate [redacted]');

    // A retry of the same calls replays them (compared with the input as sent, not as stored).
    const again = await execute(t.app, { session_id: 's', tool_uses: [asked, todo] }, AUTH);
    expect(again.body.executions.map((e: { replayed?: boolean }) => e.replayed)).toEqual([true, true]);
    expect(textOf(again.body.tool_results[0]!.content).trim()).toBe(String(TOKEN.length));
    // Another input under the same id is still another call.
    const other = await execute(t.app, { session_id: 's', tool_uses: [use('Bash', { command: `printf %s '${TOKEN}x' | wc -c` }, 'tu-asked')] }, AUTH);
    expect(other.status).toBe(409);
    ws.close();
    await t.close();
    const dbPath = t.dbPath;
    t = undefined;
    expect(leaked(JSON.stringify(r.body) + JSON.stringify(again.body) + JSON.stringify(other.body), [TOKEN])).toEqual([]);
    expect(leaked(read, [TOKEN])).toEqual([]);
    expect(leaked(frames.join('\n'), [TOKEN])).toEqual([]);
    expect(leaked(log.text(), [TOKEN])).toEqual([]);
    expect(leaked(dbText(dbPath), [TOKEN])).toEqual([]);
  });
});

describe('text the other steps put in the answer and the record', () => {
  const cmd = `curl -H 'Authorization: Bearer ${TOKEN}' https://api.example.com`;
  /** A node one-liner hook that prints `json(input)` as its JSON output. */
  const jsonHook = (body: string): string =>
    `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const i=JSON.parse(s).tool_input;console.log(JSON.stringify(${body}))})'`;

  it.each<[string, ConfigInput, ReturnType<typeof use>, string]>([
    ['a deny rule’s denial, which quotes the command', { permissions: { deny: ['Bash(curl:*)'] } }, use('Bash', { command: cmd }), 'Permission to use Bash with command curl'],
    [
      'a PreToolUse hook that blocks with its input on stderr',
      { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'cat >&2; exit 2' }] }] } },
      use('Bash', { command: cmd }),
      "PreToolUse:Bash hook error: [cat >&2; exit 2]",
    ],
    [
      'a PreToolUse hook whose reason quotes the command',
      { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: jsonHook('{hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"deny",permissionDecisionReason:"no: "+i.command}}') }] }] } },
      use('Bash', { command: cmd }),
      'no: curl',
    ],
    [
      'a PreToolUse hook whose additionalContext and systemMessage quote the command',
      {
        permissions: { allow: ['Bash(echo:*)'] },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: jsonHook('{systemMessage:"sys: "+i.command,hookSpecificOutput:{hookEventName:"PreToolUse",additionalContext:"ctx: "+i.command}}') }] }],
        },
      },
      use('Bash', { command: `echo ok # ${TOKEN}` }),
      'ctx: echo ok #',
    ],
    ['a validation error naming a parameter', {}, use('Bash', { command: 'true', [TOKEN]: 1 }), 'An unexpected parameter'],
  ])('%s', async (_name, config, toolUse, shown) => {
    const log = captureLog();
    t = await makeApp({ server: { tokens: [{ name: 'a', token: TOKEN }] }, logging: { level: 'debug' }, ...config }, { logger: undefined, logStream: log.stream });
    const { frames } = await subscriber(t.app, 's');
    const r = await execute(t.app, { session_id: 's', tool_uses: [toolUse] }, AUTH);
    expect(r.status).toBe(200);
    const answer = JSON.stringify(r.body);
    // Still said, masked.
    expect(answer).toContain(shown);
    expect(answer).toContain('[redacted]');
    await waitFor(() => frames.some((f) => f.includes('execution.finished')), 'the finished frame');
    const read = await sweepRoutes(t.app, AUTH, [r.body.executions[0]!.id]);
    await t.close();
    const dbPath = t.dbPath;
    t = undefined;
    expect(leaked(answer, [TOKEN])).toEqual([]);
    expect(leaked(read, [TOKEN])).toEqual([]);
    expect(leaked(frames.join('\n'), [TOKEN])).toEqual([]);
    expect(leaked(log.text(), [TOKEN])).toEqual([]);
    expect(leaked(dbText(dbPath), [TOKEN])).toEqual([]);
  });

  it('an MCP server’s progress messages reach subscribers masked', async () => {
    t = await makeApp(
      // The fixture's progress messages are "step N": a server.redact pattern makes them secrets.
      { server: { tokens: [{ name: 'a', token: TOKEN }], redact: ['/step [0-9]+/'] }, permissions: { allow: ['mcp__fx'] }, mcpServers: { fx: fixtureStdio() } },
      { mcp: FAST_MCP },
    );
    await waitConnected(t.app, ['fx']);
    const { frames } = await subscriber(t.app, 's');
    const r = await execute(t.app, { session_id: 's', tool_uses: [use('mcp__fx__progress', { steps: 3 })] }, AUTH);
    expect(textOf(r.body.tool_results[0]!.content)).toBe('done 3');
    await waitFor(() => frames.some((f) => f.includes('execution.finished')), 'the finished frame');
    const progress = frames.filter((f) => f.includes('execution.progress'));
    expect(progress).toHaveLength(3);
    for (const f of progress) expect(JSON.parse(f).progress.message).toBe('[redacted]');
  });
});

describe('maskValue', () => {
  const mask = makeMasker([TOKEN])!;
  it('returns the value itself when nothing is masked, and a copy with every string and key masked otherwise', () => {
    const clean = { a: ['x', { b: 1, c: null }], d: true };
    expect(maskValue(clean, mask)).toBe(clean);
    const input = JSON.parse(`{"a": ["x", {"${TOKEN}": "k ${TOKEN}"}], "__proto__": {"t": "${TOKEN}"}, "n": 1}`) as Record<string, unknown>;
    const masked = maskValue(input, mask);
    expect(JSON.stringify(masked)).toBe('{"a":["x",{"[redacted]":"k [redacted]"}],"__proto__":{"t":"[redacted]"},"n":1}');
    // A "__proto__" key stays a key; the input is untouched.
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(JSON.stringify(input)).toContain(TOKEN);
  });
});
