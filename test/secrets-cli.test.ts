/**
 * What the command line prints holds no secret: `toolexec serve`'s start-up
 * summary and logs (a real process), `check` and `tools` built from a
 * configuration full of credentials, and the one line that reports a
 * configuration file that is not valid JSON (V8's message quoted the
 * characters before the fault: the end of a token).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir } from './helpers.js';
import { cleanEnv, cli, runBin, serveBin } from './helpers-cli.js';
import { leaked } from './helpers-secrets.js';

afterAll(cleanupTmp);

const TOKEN = 'tok-cli-principal-0123456789abcdef';
const ENV_TOKEN = 'tok-cli-env-9876543210zyxwvu';
const MCP_HEADER = 'mcp-header-secret-0123456789';
const MCP_ENV = 'mcp-env-secret-0123456789';
const HOOK_HEADER = 'hook-header-secret-0123456789';
const CLASSIFIER = 'classifier-secret-0123456789';

/** A workspace and a configuration that holds a secret in every place one can be. */
function setup(): { dir: string; config: string; env: NodeJS.ProcessEnv } {
  const dir = tmpDir();
  fs.mkdirSync(path.join(dir, 'ws'));
  const config = path.join(dir, 'toolexec.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      server: { tokens: [{ name: 'agent', token: TOKEN }] },
      workspace: { root: 'ws' },
      storage: { path: 'data/toolexec.db' },
      mcpServers: {
        // Refused at once (a closed port), with the credentials it would have sent.
        remote: { type: 'http', url: `http://svc:${MCP_HEADER}@127.0.0.1:9/mcp?api_key=${MCP_HEADER}`, headers: { Authorization: 'Bearer ${MCP_TOKEN}' } },
        local: { command: process.execPath, args: ['-e', 'console.error("env key " + process.env.API_KEY); process.exit(3)'], env: { API_KEY: MCP_ENV } },
      },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: 'http://127.0.0.1:9/hook', headers: { Authorization: 'Bearer $HOOK_TOKEN' }, allowedEnvVars: ['HOOK_TOKEN'] }] }] },
      classifier: { url: 'http://127.0.0.1:9/classify', headers: { Authorization: `Bearer ${CLASSIFIER}` } },
      logging: { level: 'debug' },
    }),
  );
  return { dir, config, env: cleanEnv({ TOOLEXEC_TOKEN: ENV_TOKEN, MCP_TOKEN: MCP_HEADER, HOOK_TOKEN: HOOK_HEADER }) };
}

const SECRETS = [TOKEN, ENV_TOKEN, MCP_HEADER, MCP_ENV, HOOK_HEADER, CLASSIFIER];

describe('toolexec serve', () => {
  it('prints its summary and logs without a secret, through a failing MCP server, a failing hook and a refused token', async () => {
    const { dir, config, env } = setup();
    const served = await serveBin(['--config', config], { env, cwd: dir });
    try {
      // A call that runs the hook (which fails), a refused token, and time for the MCP servers to fail.
      const bad = await fetch(`${served.url}/stats`, { headers: { authorization: `Bearer ${TOKEN.slice(0, 20)}` } });
      expect(bad.status).toBe(401);
      const r = await fetch(`${served.url}/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'true' } }] }),
      });
      expect(r.status).toBe(200);
      await served.proc.waitFor(/process exited with code 3/);
      await served.proc.waitFor(/MCP server failed to connect[\s\S]*"mcp_server":"remote"|"mcp_server":"remote"[\s\S]*MCP server failed to connect/);
    } finally {
      expect(await served.stop()).toBe(0);
    }
    const out = served.proc.stdout() + served.proc.stderr();
    expect(out).toContain('auth: bearer tokens: agent (execute, read, approve, admin); TOOLEXEC_TOKEN (every scope)');
    expect(out).toContain('MCP servers: remote, local');
    expect(leaked(out, SECRETS)).toEqual([]);
  });
});

describe('toolexec check and tools', () => {
  it('print decisions, catalogs and MCP servers’ errors without a secret', async () => {
    const { dir, config, env } = setup();
    const check = await cli(['check', '--json', '--config', config, 'Bash', '{"command":"curl https://example.com"}'], { env, cwd: dir });
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout).behavior).toBe('ask');
    const tools = await cli(['tools', '--json', '--config', config, '--mcp-wait', '10000'], { env, cwd: dir });
    expect(tools.code).toBe(0);
    // Both servers' failures are reported, masked.
    expect(tools.stderr).toContain('MCP server "local"');
    expect(tools.stderr).toContain('env key [redacted]');
    expect(tools.stderr).toContain('MCP server "remote"');
    expect(leaked(check.stdout + check.stderr + tools.stdout + tools.stderr, SECRETS)).toEqual([]);
  });
});

describe('a configuration file that is not valid JSON', () => {
  it.each([
    ['--config', 'toolexec.json', `{"server": {"tokens": [{"name": "a",\n  "token": "${TOKEN}"},]}}`, 'line 2, column'],
    ['--mcp-config', '.mcp.json', `{"mcpServers": {"s": {"command": "npx",\n  "args": ["server", "--api-key", "${MCP_ENV}",]}}}`, 'line 2, column'],
  ])('%s %s is reported by line and column, quoting none of it', async (option, name, text, where) => {
    const dir = tmpDir();
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    const r = await runBin(['check', '--no-mcp', '--workspace', dir, option, file, 'Read', '{"file_path":"x"}'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: is not valid JSON (Unexpected token ']'`);
    expect(r.stderr).toContain(where);
    // Not even the end of the secret, which V8's message quoted (`..."3456789"},]`).
    const secret = option === '--config' ? TOKEN : MCP_ENV;
    expect(r.stderr).not.toContain(secret.slice(-6));
  });
});
