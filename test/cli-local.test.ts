/**
 * `toolexec tools` and `toolexec check` without a server: the configuration
 * built in-process answers exactly what a running service with the same
 * configuration answers, reads remembered rules and session modes from the
 * configured database, and never writes to that database; with tokens
 * configured (in the file or TOOLEXEC_TOKEN) it answers all the same.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { cleanupTmp, makeApp, tmpDir } from './helpers.js';
import { everythingStdio } from './helpers-mcp.js';
import { cleanEnv, cli, runBin } from './helpers-cli.js';

afterAll(cleanupTmp);

/** A configuration file, its workspace, and its data directory. */
function project(config: ConfigInput): { dir: string; file: string; ws: string; data: string } {
  const dir = tmpDir('toolexec-cli-local-');
  const ws = path.join(dir, 'ws');
  const data = path.join(dir, 'data');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
  const file = path.join(dir, 'toolexec.json');
  fs.writeFileSync(file, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './data/toolexec.db' }, ...config }));
  return { dir, file, ws, data };
}

function digestOf(dir: string): string {
  const h = createHash('sha256');
  for (const f of fs.readdirSync(dir).sort()) h.update(f).update(fs.readFileSync(path.join(dir, f)));
  return h.digest('hex');
}

const POLICY: ConfigInput = {
  permissions: { allow: ['Read', 'Bash(npm run test:*)'], deny: ['Bash(rm:*)', 'WebFetch'], ask: ['Bash(git push:*)'] },
};


/** What `check` prints for `rm -rf /` under the deny rule Bash(rm:*). */
const DENY_LINES = (input: object): string =>
  [
    `Bash ${JSON.stringify(input)}`,
    '  decision: deny',
    '  reason:   rule: Bash(rm:*)',
    '  mode:     default',
    '  message:  Permission to use Bash with command rm -rf / has been denied.',
    '  chain:',
    '    tool  deny        rule: Bash(rm:*)',
    '',
  ].join('\n');

describe('toolexec tools (local)', () => {
  it('prints the same catalog, byte for byte, as GET /tools of a service with the same configuration', async () => {
    const p = project(POLICY);
    const app = await makeApp(POLICY);
    try {
      for (const format of ['anthropic', 'openai', 'mcp']) {
        const r = await cli(['tools', '--config', p.file, '--json', '--format', format]);
        expect(r.code).toBe(0);
        expect(r.stderr).toBe('');
        const served = (await app.app.inject({ url: `/tools?format=${format}` })).json();
        expect(JSON.parse(r.stdout)).toEqual(served);
      }
      const all = await cli(['tools', '--config', p.file, '--json', '--include-deferred']);
      expect(JSON.parse(all.stdout)).toEqual((await app.app.inject({ url: '/tools?deferred=include' })).json());
    } finally {
      await app.close();
    }
  });

  it('lists each tool as loaded up front or deferred, without the tools a blanket deny removes', async () => {
    const p = project(POLICY);
    const r = await cli(['tools', '--config', p.file]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TOOL\s+LOADING\s+DESCRIPTION$/);
    expect(lines.find((l) => l.startsWith('Read '))).toMatch(/^Read\s+up front\s+Reads a file/);
    expect(lines.find((l) => l.startsWith('TodoWrite '))).toMatch(/^TodoWrite\s+deferred\s+/);
    expect(lines.some((l) => l.startsWith('WebFetch'))).toBe(false);
    const json = JSON.parse((await cli(['tools', '--config', p.file, '--json'])).stdout) as { tools: unknown[]; deferred_tools: string[]; tokens: { full: number; deferred: number } };
    expect(lines.at(-1)).toBe(
      `${json.tools.length + json.deferred_tools.length} tools (${json.deferred_tools.length} deferred, found through ToolSearch); ~${json.tokens.deferred.toLocaleString('en-US')} tokens up front, ~${json.tokens.full.toLocaleString('en-US')} without deferral`,
    );
  });

  it('shows a session in plan mode only the tools that can be read-only, read from the configured database', async () => {
    const p = project({});
    // A session put in plan mode by an approver on the service that owns the database.
    const owner = await makeApp({ storage: { path: path.join(p.data, 'toolexec.db') } });
    const res = await owner.app.inject({ method: 'PATCH', url: '/sessions/s-plan', payload: { mode: 'plan' } });
    expect(res.statusCode).toBe(200);
    await owner.close();
    const names = (out: string): string[] => (JSON.parse(out) as { tools: Array<{ name: string }>; deferred_tools: string[] }).tools.map((t) => t.name);
    const plan = await cli(['tools', '--config', p.file, '--json', '--session', 's-plan']);
    expect(plan.code).toBe(0);
    expect(names(plan.stdout)).not.toContain('Write');
    expect(names(plan.stdout)).toContain('Read');
    const other = await cli(['tools', '--config', p.file, '--json', '--session', 's-other']);
    expect(names(other.stdout)).toContain('Write');
  });

  it('connects the configured MCP servers and lists their tools as deferred; --no-mcp leaves them out with a warning', async () => {
    const p = project({ mcpServers: { everything: everythingStdio } });
    const r = await cli(['tools', '--config', p.file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mcp__everything__echo\s+deferred\s+/m);
    const none = await cli(['tools', '--config', p.file, '--no-mcp']);
    expect(none.code).toBe(0);
    expect(none.stdout).not.toContain('mcp__everything__');
    expect(none.stderr).toBe('toolexec: warning: MCP servers not connected (--no-mcp): everything\n');
  });

  it('warns about an MCP server that does not connect, and still prints the rest', async () => {
    const p = project({ mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } } });
    const r = await cli(['tools', '--config', p.file, '--mcp-wait', '5000']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Read\s+up front/m);
    expect(r.stderr).toMatch(/^toolexec: warning: MCP server "broken" is (failed|reconnecting)\b.*its tools are missing here\n$/);
  });
});

describe('toolexec check (local)', () => {
  it('explains a deny rule that holds against a compound command, as POST /permissions/check would', async () => {
    const p = project(POLICY);
    const input = { command: 'cd /tmp && rm -rf /' };
    const r = await cli(['check', '--config', p.file, 'Bash', JSON.stringify(input)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(DENY_LINES(input));
    const app = await makeApp(POLICY);
    try {
      const served = (await app.app.inject({ method: 'POST', url: '/permissions/check', payload: { name: 'Bash', input } })).json();
      const json = await cli(['check', '--config', p.file, '--json', 'Bash', JSON.stringify(input)]);
      expect(JSON.parse(json.stdout)).toEqual(served);
    } finally {
      await app.close();
    }
  });

  it('tells what an ask would become with no approver (headless deny)', async () => {
    const p = project(POLICY);
    const r = await cli(['check', '--config', p.file, '--json', 'Bash', '{"command":"git push origin main"}']);
    const a = JSON.parse(r.stdout) as { behavior: string; reason: { type: string; detail: string }; notes: string[] };
    expect(a.behavior).toBe('ask');
    expect(a.reason).toEqual({ type: 'rule', detail: 'Bash(git push:*)' });
    expect(a.notes).toContain('no approver is subscribed: the call would be denied as headless');
  });

  it('applies rules remembered on the service and session modes from its database, and leaves that database as it was', async () => {
    const p = project(POLICY);
    const dbPath = path.join(p.data, 'toolexec.db');
    const owner = await makeApp({ ...POLICY, storage: { path: dbPath } });
    const rule = await owner.app.inject({ method: 'POST', url: '/permissions/rules', payload: { behavior: 'allow', rule: 'Bash(make:*)', scope: 'always' } });
    expect(rule.statusCode).toBe(201);
    const mode = await owner.app.inject({ method: 'PATCH', url: '/sessions/s-plan', payload: { mode: 'plan' } });
    expect(mode.statusCode).toBe(200);
    await owner.close();
    const before = digestOf(p.data);

    const make = JSON.parse((await cli(['check', '--config', p.file, '--json', 'Bash', '{"command":"make test"}'])).stdout) as { behavior: string; reason: unknown };
    expect(make).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(make:*)' } });
    const plan = JSON.parse((await cli(['check', '--config', p.file, '--json', '--session', 's-plan', 'Write', '{"file_path":"b.txt","content":"x"}'])).stdout) as {
      mode: string;
      behavior: string;
    };
    expect(plan).toMatchObject({ mode: 'plan', behavior: 'deny' });
    // --data-dir names the same database.
    const viaDir = JSON.parse((await cli(['check', '--workspace', p.ws, '--data-dir', p.data, '--json', 'Bash', '{"command":"make"}'])).stdout) as { behavior: string };
    expect(viaDir.behavior).toBe('allow');
    expect(digestOf(p.data)).toBe(before);
  });

  it('reads a database a service has open, as one more reader, and creates no file beside it', async () => {
    const p = project(POLICY);
    const dbPath = path.join(p.data, 'toolexec.db');
    const owner = await makeApp({ ...POLICY, storage: { path: dbPath } });
    try {
      const rule = await owner.app.inject({ method: 'POST', url: '/permissions/rules', payload: { behavior: 'deny', rule: 'Read(./a.txt)', scope: 'always' } });
      expect(rule.statusCode).toBe(201);
      const files = fs.readdirSync(p.data).sort();
      // The service made the directory, and with it a .gitignore (and the lock that keeps a second service off the database).
      expect(files).toEqual(['.gitignore', 'toolexec.db', 'toolexec.db-shm', 'toolexec.db-wal', 'toolexec.db.lock']);
      const r = await cli(['check', '--config', p.file, '--json', 'Read', '{"file_path":"a.txt"}']);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Read(./a.txt)' } });
      expect(fs.readdirSync(p.data).sort()).toEqual(files);
    } finally {
      await owner.close();
    }
  });

  it('says the database could not be read, and answers from the configuration alone', async () => {
    const p = project(POLICY);
    fs.mkdirSync(p.data);
    fs.writeFileSync(path.join(p.data, 'toolexec.db'), 'this is not a database');
    const r = await cli(['check', '--config', p.file, '--json', 'Read', '{"file_path":"a.txt"}']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^toolexec: warning: remembered rules and session modes were not read from .*toolexec\.db: file is not a database\n$/);
    expect(JSON.parse(r.stdout)).toMatchObject({ behavior: 'allow' });
  });

  it('fails (exit 1) for an unknown tool and for an input the tool does not accept', async () => {
    const p = project(POLICY);
    const nope = await cli(['check', '--config', p.file, 'Nope', '{}']);
    expect(nope).toMatchObject({ code: 1, stdout: '', stderr: 'toolexec: check: TOOLEXEC_ERR_TOOL_NOT_FOUND: No such tool available: Nope\n' });
    const bad = await cli(['check', '--config', p.file, 'Read', '{"path":"a.txt"}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('The required parameter `file_path` is missing');
  });

  it('connects MCP servers for an MCP tool and judges it by its server rule', async () => {
    const p = project({ mcpServers: { everything: everythingStdio }, permissions: { deny: ['mcp__everything__echo'] } });
    const r = await cli(['check', '--config', p.file, '--json', 'mcp__everything__echo', '{"message":"hi"}']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tool: 'mcp__everything__echo', behavior: 'deny', reason: { type: 'rule', detail: 'mcp__everything__echo' } });
  });
});

describe('toolexec tools and check (local) with tokens configured', () => {
  const TOKEN = 'tok-local-0123456789abcdef';

  // The built binary as a process: what a user's shell runs.
  async function both(file: string, env: NodeJS.ProcessEnv): Promise<void> {
    const app = await makeApp(POLICY);
    try {
      const tools = await runBin(['tools', '--config', file, '--json'], { env });
      expect(tools.stderr).toBe('');
      expect(tools.code).toBe(0);
      expect(JSON.parse(tools.stdout)).toEqual((await app.app.inject({ url: '/tools' })).json());
      const table = await runBin(['tools', '--config', file], { env });
      expect(table).toMatchObject({ code: 0, stderr: '' });
      expect(table.stdout).toMatch(/^Read\s+up front\s+Reads a file/m);
      const input = { command: 'cd /tmp && rm -rf /' };
      const check = await runBin(['check', '--config', file, 'Bash', JSON.stringify(input)], { env });
      expect(check).toEqual({ code: 0, stdout: DENY_LINES(input), stderr: '' });
      const json = await runBin(['check', '--config', file, '--json', 'Read', '{"file_path":"a.txt"}'], { env });
      expect(json).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(json.stdout)).toMatchObject({ tool: 'Read', behavior: 'allow', reason: { type: 'rule', detail: 'Read' } });
      for (const out of [tools, table, check, json]) expect(out.stdout + out.stderr).not.toContain(TOKEN);
    } finally {
      await app.close();
    }
  }

  it('answers with tokens in the configuration file, even when none has the scope the route needs', async () => {
    const p = project({
      ...POLICY,
      server: {
        tokens: [
          { name: 'ops', token: TOKEN },
          { name: 'approver', token: 'tok-approver-0123456789abcdef', scopes: ['approve'] },
        ],
      },
    });
    await both(p.file, cleanEnv());
    const approverOnly = project({ ...POLICY, server: { tokens: [{ name: 'approver', token: TOKEN, scopes: ['approve'] }] } });
    await both(approverOnly.file, cleanEnv());
  });

  it('answers with TOOLEXEC_TOKEN set', async () => {
    const p = project(POLICY);
    await both(p.file, cleanEnv({ TOOLEXEC_TOKEN: TOKEN }));
  });
});
