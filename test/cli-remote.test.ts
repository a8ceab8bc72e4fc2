/**
 * The commands that talk to a running service, against `toolexec serve`
 * started as a process: exec, audit (and --follow), approve, check/tools --url,
 * health; the token from the option or TOOLEXEC_TOKEN; unreachable and
 * refusing services reported in one clear line with exit 1.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir } from './helpers.js';
import { cleanEnv, cli, runBin, serveBin, spawnBin, type Served } from './helpers-cli.js';

const TOKEN = 'cli-remote-test-token-0123456789';
let served: Served;
let ws: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const dir = tmpDir('toolexec-cli-remote-');
  ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'notes.txt'), 'first line\nsecond line\n');
  const config = path.join(dir, 'toolexec.json');
  fs.writeFileSync(config, JSON.stringify({ permissions: { allow: ['Read', 'Bash(echo:*)'], deny: ['Bash(rm:*)'] }, logging: { level: 'warn' } }));
  served = await serveBin(['--config', config, '--workspace', ws, '--data-dir', path.join(dir, 'data')], { env: cleanEnv({ TOOLEXEC_TOKEN: TOKEN }) });
  env = cleanEnv({ TOOLEXEC_URL: served.url, TOOLEXEC_TOKEN: TOKEN });
});

afterAll(async () => {
  const code = await served?.stop();
  // SIGTERM is a graceful shutdown: exit 0.
  expect(code).toBe(0);
  cleanupTmp();
});

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('toolexec exec', () => {
  it('prints the result text and exits 0', async () => {
    const r = await cli(['exec', 'Read', '{"file_path":"notes.txt"}'], { env });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^\s+1\tfirst line\n\s+2\tsecond line\n/);
  });

  it('exits 1 with the result text on stderr when the result is an error (denied, failed, unknown tool)', async () => {
    const denied = await cli(['exec', 'Bash', '{"command":"rm -rf /"}'], { env });
    expect(denied.code).toBe(1);
    expect(denied.stdout).toBe('');
    expect(denied.stderr).toContain('Permission to use Bash with command rm -rf / has been denied.');
    // The model's text says nothing of why; the line after it tells the person at the terminal.
    expect(denied.stderr.endsWith('\ntoolexec: decision deny (rule: Bash(rm:*))\n')).toBe(true);
    const headless = await cli(['exec', 'Bash', '{"command":"touch made.txt"}'], { env });
    expect(headless.code).toBe(1);
    expect(headless.stderr).toMatch(/\ntoolexec: decision deny \(headless: no approver subscribed \(open \/console .*toolexec approve\)\)\n$/);
    const missing = await cli(['exec', 'Read', '{"file_path":"nope.txt"}'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('File does not exist.');
    const unknown = await cli(['exec', 'Nope', '{}'], { env });
    expect(unknown).toMatchObject({ code: 1, stderr: '<tool_use_error>Error: No such tool available: Nope</tool_use_error>\n' });
  });

  it('keeps a session across calls and reports the execution with --verbose', async () => {
    const session = `s-cli-${Date.now()}`;
    const read = await cli(['exec', '--session', session, '-v', 'Read', '{"file_path":"notes.txt"}'], { env });
    expect(read.code).toBe(0);
    expect(read.stderr).toMatch(
      new RegExp(`^toolexec: session ${session}, execution ex_\\S+: succeeded, decision allow \\(rule: Read\\), [\\d.]+ ms\\n$`),
    );
    const r = await cli(['exec', '--session', session, '--json', '--id', 'toolu_fixed', 'Bash', '{"command":"echo hi"}'], { env });
    const body = JSON.parse(r.stdout) as { session_id: string; tool_results: Array<{ tool_use_id: string; content: string }> };
    expect(body.session_id).toBe(session);
    expect(body.tool_results[0]).toMatchObject({ tool_use_id: 'toolu_fixed', content: 'hi' });
    // The same id in the same session is answered from the first run.
    const again = await cli(['exec', '--session', session, '--json', '--id', 'toolu_fixed', 'Bash', '{"command":"echo hi"}'], { env });
    expect(JSON.parse(again.stdout)).toMatchObject({ tool_results: [{ content: 'hi' }], executions: [{ replayed: true, id: JSON.parse(r.stdout).executions[0].id }] });
    // The id given to another call is refused, in one line.
    const reused = await cli(['exec', '--session', session, '--id', 'toolu_fixed', 'Bash', '{"command":"echo other"}'], { env });
    expect(reused.code).toBe(1);
    expect(reused.stderr).toContain('TOOLEXEC_ERR_TOOL_USE_ID_REUSED');
  });

  it('needs a service: no URL is a usage error (2), an unreachable one a failure (1) in one clear line', async () => {
    const none = await cli(['exec', 'Read', '{}'], { env: cleanEnv() });
    expect(none).toMatchObject({ code: 2, stderr: 'toolexec: exec: no service given: pass --url http://HOST:PORT or set TOOLEXEC_URL\n' });
    const port = await closedPort();
    const down = await cli(['exec', '--url', `http://127.0.0.1:${port}`, 'Read', '{}'], { env: cleanEnv() });
    expect(down).toMatchObject({
      code: 1,
      stderr: `toolexec: cannot reach the service at http://127.0.0.1:${port} (ECONNREFUSED): is it running, and are --url / TOOLEXEC_URL right?\n`,
    });
    const bad = await cli(['exec', '--url', 'ftp://x', 'Read', '{}'], { env: cleanEnv() });
    expect(bad.code).toBe(2);
  });

  it('says when the token is missing or refused (exit 1)', async () => {
    const missing = await cli(['exec', '--url', served.url, 'Read', '{"file_path":"notes.txt"}'], { env: cleanEnv() });
    expect(missing).toMatchObject({
      code: 1,
      stderr: 'toolexec: /execute: the service answered 401 TOOLEXEC_ERR_AUTH_MISSING: A bearer token is required: send the header Authorization: Bearer TOKEN (the service needs a token: pass --token or set TOOLEXEC_TOKEN)\n',
    });
    const wrong = await cli(['exec', '--url', served.url, '--token', 'not-the-token-at-all', 'Read', '{"file_path":"notes.txt"}'], { env: cleanEnv() });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^toolexec: \/execute: the service answered 401 TOOLEXEC_ERR_AUTH_\w+: .*\(the token was refused: check --token \/ TOOLEXEC_TOKEN\)\n$/);
    const flag = await cli(['exec', '--url', served.url, '--token', TOKEN, 'Read', '{"file_path":"notes.txt"}'], { env: cleanEnv() });
    expect(flag.code).toBe(0);
  });
});

describe('toolexec check and tools --url', () => {
  it('asks the running service', async () => {
    const check = await cli(['check', '--json', 'Bash', '{"command":"echo a && rm -rf b"}'], { env });
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm:*)' } });
    const tools = await cli(['tools', '--json', '--format', 'openai'], { env });
    const res = await fetch(`${served.url}/tools?format=openai`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(JSON.parse(tools.stdout)).toEqual(await res.json());
  });
});

describe('toolexec audit', () => {
  it('prints decisions oldest first, filtered, and as JSON lines', async () => {
    const session = `s-audit-${Date.now()}`;
    for (const [tool, input] of [
      ['Read', '{"file_path":"notes.txt"}'],
      ['Bash', '{"command":"rm x"}'],
      ['Bash', '{"command":"echo y"}'],
    ] as const) {
      await cli(['exec', '--session', session, tool, input], { env });
    }
    const r = await cli(['audit', '--session', session], { env });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  allow  Read  \\(rule: Read\\)  session=${session}  tool_use=toolu_cli_\\w+  by=env$`));
    expect(lines[1]).toMatch(/ {2}deny {3}Bash {2}\(rule: Bash\(rm:\*\)\) {2}/);
    expect(lines[2]).toMatch(/ {2}allow {2}Bash {2}\(rule: Bash\(echo:\*\)\) {2}/);
    const denies = await cli(['audit', '--session', session, '--behavior', 'deny', '--json'], { env });
    const entries = denies.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { tool: string; behavior: string; reason: { type: string } });
    expect(entries).toEqual([expect.objectContaining({ tool: 'Bash', behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm:*)' } })]);
    const last = await cli(['audit', '--session', session, '--limit', '1', '--tool', 'Bash'], { env });
    expect(last.stdout.trimEnd().split('\n')).toEqual([lines[2]]);
    const since = await cli(['audit', '--session', session, '--since', '1h'], { env });
    expect(since.stdout).toBe(r.stdout);
    const future = await cli(['audit', '--session', session, '--since', new Date(Date.now() + 3_600_000).toISOString()], { env });
    expect(future).toMatchObject({ code: 0, stdout: '' });
  });

  it('pages through more decisions than one page of the service holds', async () => {
    const session = `s-pages-${Date.now()}`;
    const uses = Array.from({ length: 30 }, (_, i) => ({ type: 'tool_use', id: `toolu_p${i}`, name: 'Read', input: { file_path: 'notes.txt' } }));
    const res = await fetch(`${served.url}/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: session, tool_uses: uses }),
    });
    expect(res.status).toBe(200);
    const r = await cli(['audit', '--session', session, '--limit', '25', '--json'], { env });
    const ids = r.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { tool_use_id: string }).tool_use_id);
    expect(ids).toHaveLength(25);
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => `toolu_p${i + 5}`));
  });

  it('rejects bad filters as usage errors', async () => {
    expect((await cli(['audit', '--behavior', 'maybe'], { env })).stderr).toContain('--behavior: expected one of allow, deny, ask, got "maybe"');
    expect((await cli(['audit', '--since', 'yesterday-ish'], { env })).code).toBe(2);
    expect((await cli(['audit', '--limit', '0'], { env })).code).toBe(2);
  });

  it('--follow prints new decisions as they are made, only those matching, and stops on SIGINT with exit 0', async () => {
    const session = `s-follow-${Date.now()}`;
    await cli(['exec', '--session', session, 'Read', '{"file_path":"notes.txt"}'], { env });
    const tail = spawnBin(['audit', '--follow', '--interval', '100', '--session', session, '--json'], { env });
    // The decision made before the tail started is printed first (the last 10).
    await tail.waitFor(/"tool":"Read"/);
    await cli(['exec', '--session', 'someone-else', 'Bash', '{"command":"echo other"}'], { env });
    await cli(['exec', '--session', session, 'Bash', '{"command":"rm -rf nope"}'], { env });
    await cli(['exec', '--session', session, 'Bash', '{"command":"echo ok"}'], { env });
    await tail.waitFor(/"behavior":"allow","reason":\{"type":"rule","detail":"Bash\(echo:\*\)"\}/);
    tail.child.kill('SIGINT');
    expect(await tail.exited).toBe(0);
    const printed = tail
      .stdout()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { session_id: string; tool: string; behavior: string });
    expect(printed.map((e) => [e.session_id, e.tool, e.behavior])).toEqual([
      [session, 'Read', 'allow'],
      [session, 'Bash', 'deny'],
      [session, 'Bash', 'allow'],
    ]);
  });

  it('--follow keeps trying while the service is away, and says so once', async () => {
    const port = await closedPort();
    // Unreachable from the start is a failure: there is nothing to follow.
    const first = await cli(['audit', '--follow', '--url', `http://127.0.0.1:${port}`], { env: cleanEnv() });
    expect(first.code).toBe(1);
    // Once following, a lost service is waited for: a proxy in front of it drops every connection while "down".
    let down = false;
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((c) => {
      if (down) return void c.destroy();
      const up = net.connect(Number(new URL(served.url).port), '127.0.0.1');
      sockets.add(c).add(up);
      c.pipe(up).pipe(c);
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const proxyPort = (proxy.address() as net.AddressInfo).port;
    const session = `s-lost-${Date.now()}`;
    await cli(['exec', '--session', session, 'Read', '{"file_path":"notes.txt"}'], { env });
    const tail = spawnBin(['audit', '--follow', '--interval', '100', '--session', session, '--json', '--url', `http://127.0.0.1:${proxyPort}`], {
      env: cleanEnv({ TOOLEXEC_TOKEN: TOKEN }),
    });
    await tail.waitFor(/"tool":"Read"/);
    down = true;
    for (const s of sockets) s.destroy();
    sockets.clear();
    await tail.waitFor(/warning: .*; still trying every 100 ms/);
    down = false;
    await tail.waitFor(/warning: the service at .* answers again/);
    await cli(['exec', '--session', session, 'Bash', '{"command":"echo back"}'], { env });
    await tail.waitFor(/"tool":"Bash"/);
    tail.child.kill('SIGINT');
    expect(await tail.exited).toBe(0);
    expect(tail.stderr().match(/still trying/g)).toHaveLength(1);
    expect(tail.stdout().trimEnd().split('\n').map((l) => (JSON.parse(l) as { tool: string }).tool)).toEqual(['Read', 'Bash']);
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => proxy.close(() => r()));
  });
});

describe('toolexec serve with Claude Code files', () => {
  it('--claude-settings and --mcp-config: the rules, the hooks and the MCP servers of an existing project work unchanged', async () => {
    const project = tmpDir();
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(project, 'secret.txt'), 'hunter2\n');
    fs.writeFileSync(path.join(project, 'notes.txt'), 'plain\n');
    const marker = path.join(project, 'hook-ran');
    fs.writeFileSync(
      path.join(project, '.claude', 'settings.json'),
      JSON.stringify({
        permissions: { allow: ['mcp__fx__echo'], deny: ['Read(./secret.txt)'] },
        hooks: { PreToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: `cat > /dev/null; touch ${JSON.stringify(marker)}` }] }] },
      }),
    );
    fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [path.resolve('test/fixtures/mcp/fixture-server.mjs')] } } }));
    const svc = await serveBin(
      ['--workspace', project, '--data-dir', path.join(tmpDir(), 'data'), '--claude-settings', path.join(project, '.claude', 'settings.json'), '--mcp-config', path.join(project, '.mcp.json')],
      { env: cleanEnv() },
    );
    try {
      for (let i = 0; i < 200; i++) {
        const r = (await (await fetch(`${svc.url}/mcp/servers`)).json()) as { servers: Array<{ name: string; state: string }> };
        if (r.servers.some((x) => x.name === 'fx' && x.state === 'connected')) break;
        await new Promise((r2) => setTimeout(r2, 50));
      }
      const exec = async (name: string, input: unknown) =>
        (await (
          await fetch(`${svc.url}/execute`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ session_id: 's', tool_uses: [{ type: 'tool_use', id: `t-${name}-${Math.random()}`, name, input }] }),
          })
        ).json()) as { executions: Array<{ status: string; decision: { reason: { type: string; detail: string } } }>; tool_results: Array<{ content: unknown }> };
      const denied = await exec('Read', { file_path: 'secret.txt' });
      expect(denied.executions[0]).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: 'Read(./secret.txt)' } } });
      expect(JSON.stringify(denied.tool_results)).not.toContain('hunter2');
      expect((await exec('Read', { file_path: 'notes.txt' })).executions[0]!.status).toBe('succeeded');
      expect(fs.existsSync(marker)).toBe(true);
      const echoed = await exec('mcp__fx__echo', { message: 'from .mcp.json' });
      expect(echoed.executions[0]).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'mcp__fx__echo' } } });
      expect(JSON.stringify(echoed.tool_results[0]!.content)).toContain('from .mcp.json');
    } finally {
      expect(await svc.stop()).toBe(0);
    }
  });
});

describe('toolexec health', () => {
  it('exits 0 for a live service (no token needed), 1 for none', async () => {
    const r = await runBin(['health'], { env: cleanEnv({ TOOLEXEC_URL: served.url }) });
    expect(r).toMatchObject({ code: 0, stdout: '/healthz: ok\n' });
    const ready = await runBin(['health', '--ready'], { env: cleanEnv({ TOOLEXEC_URL: served.url }) });
    expect(ready).toMatchObject({ code: 0, stdout: '/readyz: ready\n' });
    const port = await closedPort();
    const down = await runBin(['health', '--url', `http://127.0.0.1:${port}`]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`cannot reach the service at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it('refuses bad options in one line with exit 2, before asking anything', async () => {
    const cases: Array<[string[], string]> = [
      [['--timeout', 'abc'], 'toolexec: health: --timeout: expected an integer from 1 to 600000, got "abc" (see: toolexec health --help)\n'],
      [['--timeout', '0'], 'toolexec: health: --timeout: expected an integer from 1 to 600000, got "0" (see: toolexec health --help)\n'],
      [['--url', 'notaurl'], 'toolexec: health: --url: expected an http(s) URL like http://127.0.0.1:8787, got "notaurl"\n'],
      [['--url', 'ftp://x'], 'toolexec: health: --url: expected an http(s) URL like http://127.0.0.1:8787, got "ftp://x"\n'],
      [['extra'], 'toolexec: health: unexpected argument "extra" (see: toolexec health --help)\n'],
    ];
    for (const [args, stderr] of cases) {
      expect(await runBin(['health', ...args], { env: cleanEnv({ TOOLEXEC_URL: served.url }) }), args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr });
    }
    const unknown = await runBin(['health', '--bogus'], { env: cleanEnv({ TOOLEXEC_URL: served.url }) });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^toolexec: health: Unknown option '--bogus'/);
  });
});

describe('toolexec approve', () => {
  const APPROVER = 'cli-approve-approver-0123456789';
  const READER = 'cli-approve-reader-token-0123456789';
  let svc: Served;
  let space: string;
  let aenv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const dir = tmpDir('toolexec-cli-approve-');
    space = path.join(dir, 'ws');
    fs.mkdirSync(space);
    const config = path.join(dir, 'toolexec.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        server: { tokens: [{ name: 'ops', token: APPROVER }, { name: 'dash', token: READER, scopes: ['read', 'execute'] }] },
        permissions: { headless: 'wait' },
        logging: { level: 'warn' },
      }),
    );
    svc = await serveBin(['--config', config, '--workspace', space, '--data-dir', path.join(dir, 'data')]);
    aenv = cleanEnv({ TOOLEXEC_URL: svc.url, TOOLEXEC_TOKEN: APPROVER });
  });

  afterAll(async () => {
    expect(await svc?.stop()).toBe(0);
  });

  /** The pending requests, once there are `n`. */
  async function pending(n: number): Promise<Array<{ id: string; summary: string; session_id: string }>> {
    for (;;) {
      const r = await cli(['approve', '--json'], { env: aenv });
      expect(r.code).toBe(0);
      const list = (JSON.parse(r.stdout) as { requests: Array<{ id: string; summary: string; session_id: string }> }).requests;
      if (list.length >= n) return list;
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it('lists what waits for a person, and allows one: the waiting call runs', async () => {
    expect(await cli(['approve'], { env: aenv })).toMatchObject({ code: 0, stdout: '', stderr: 'toolexec: no permission request is waiting\n' });
    const call = cli(['exec', '--session', 'ap-1', 'Bash', '{"command":"touch made.txt"}'], { env: aenv });
    const [req] = await pending(1);
    const listed = await cli(['approve'], { env: aenv });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${req!.id}  Bash\\(touch made\\.txt\\)  session=ap-1 \\(tool: [^)]*\\)  expires in \\d+ (s|min)\\n$`));
    // --session filters the list.
    expect(JSON.parse((await cli(['approve', '--json', '--session', 'other'], { env: aenv })).stdout)).toEqual({ requests: [] });
    const answered = await cli(['approve', req!.id], { env: aenv });
    expect(answered).toMatchObject({ code: 0, stdout: `${req!.id}: Bash(touch made.txt) allowed\n`, stderr: '' });
    expect((await call).code).toBe(0);
    expect(fs.existsSync(path.join(space, 'made.txt'))).toBe(true);
    // Answered once: a second answer is refused, naming why.
    const again = await cli(['approve', '--deny', req!.id], { env: aenv });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED');
  });

  it('denies one with --deny and a message the model reads, and needs the approve scope', async () => {
    const call = cli(['exec', '--session', 'ap-2', 'Bash', '{"command":"touch never.txt"}'], { env: aenv });
    const [req] = await pending(1);
    const scoped = await cli(['approve', req!.id], { env: cleanEnv({ TOOLEXEC_URL: svc.url, TOOLEXEC_TOKEN: READER }) });
    expect(scoped.code).toBe(1);
    expect(scoped.stderr).toContain('(the token lacks the scope this needs)');
    expect(await cli(['approve', '--deny', '--message', 'not on a Friday', req!.id], { env: aenv })).toMatchObject({ code: 0, stdout: `${req!.id}: Bash(touch never.txt) denied\n` });
    const r = await call;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('not on a Friday');
    expect(fs.existsSync(path.join(space, 'never.txt'))).toBe(false);
  });

  it('reports bad usage with exit 2', async () => {
    expect((await cli(['approve', '--remember', 'forever', 'preq_x'], { env: aenv })).code).toBe(2);
    const noId = await cli(['approve', '--deny'], { env: aenv });
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain('name the request to answer');
    expect((await cli(['approve'], { env: cleanEnv() })).stderr).toContain('approve: no service given');
  });
});
