/**
 * What `toolexec serve` tells an operator: once it listens, where it works,
 * where its database is, who may call it, the tools and the policy in force;
 * and, when it cannot start, one line naming the problem and the fix, with a
 * non-zero exit and no stack trace.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir } from './helpers.js';
import { cleanEnv, runBin, serveBin, spawnBin } from './helpers-cli.js';

afterAll(cleanupTmp);

function project(config: unknown): { dir: string; file: string; ws: string } {
  const dir = tmpDir('toolexec-cli-serve-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const file = path.join(dir, 'toolexec.json');
  fs.writeFileSync(file, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './data/toolexec.db' }, ...(config as object) }));
  return { dir, file, ws };
}

describe('serve: the startup summary', () => {
  it('names the address, workspace, database, auth, tools, MCP servers and policy', async () => {
    const p = project({
      permissions: { defaultMode: 'acceptEdits', allow: ['Read', 'Bash(npm test:*)'], ask: ['Bash(git push:*)'], deny: ['Read(./.env)'] },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }, { type: 'command', command: 'true' }, { type: 'prompt', prompt: 'is it safe?' }] }],
        // Warned about as never run; the summary must not count them as if they were.
        Stop: [{ hooks: [{ type: 'command', command: 'true' }] }],
      },
      features: { WebFetch: false },
    });
    const served = await serveBin(['--config', p.file]);
    try {
      await served.proc.waitFor(/API docs/);
      const lines = served.proc.stderr().trimEnd().split('\n').filter((l) => !l.startsWith('toolexec: warning: hooks: '));
      expect(lines).toEqual([
        `toolexec: listening on ${served.url} (workspace ${p.ws})`,
        `toolexec: database ${path.join(p.dir, 'data', 'toolexec.db')}`,
        'toolexec: auth: none: every local process may call it (loopback only; set TOOLEXEC_TOKEN or server.tokens to require a token)',
        'toolexec: tools: Bash, Edit, Glob, Grep, Read, ToolSearch, Write; deferred behind ToolSearch: NotebookEdit, TaskOutput, TaskStop, TodoWrite',
        'toolexec: MCP servers: none',
        'toolexec: permissions: mode acceptEdits; rules: 2 allow, 1 ask, 1 deny; hooks: 2 PreToolUse, 1 PreToolUse (not run), 1 Stop (not run); an ask with no approver subscribed is denied',
        `toolexec: console ${served.url}/console, API docs ${served.url}/docs`,
      ]);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it('listening on every interface, names the console and docs on loopback, a page a browser opens', async () => {
    const p = project({});
    const served = await serveBin(['--config', p.file, '--host', '0.0.0.0'], { env: cleanEnv({ TOOLEXEC_TOKEN: 'cli-serve-any-host-token-0123' }) });
    try {
      const m = await served.proc.waitFor(/toolexec: listening on http:\/\/0\.0\.0\.0:(\d+) /);
      await served.proc.waitFor(/API docs/);
      expect(served.proc.stderr()).toContain(`toolexec: console http://127.0.0.1:${m[1]}/console, API docs http://127.0.0.1:${m[1]}/docs\n`);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it('names the tokens (never their values) and the configured MCP servers', async () => {
    const secret = 'cli-serve-config-token-0123456789';
    const envSecret = 'cli-serve-env-token-0123456789';
    const p = project({
      server: { tokens: [{ name: 'agent', token: secret, scopes: ['execute', 'read'] }] },
      mcpServers: { nowhere: { type: 'http', url: 'http://127.0.0.1:9/mcp' } },
      permissions: { headless: 'wait' },
    });
    const served = await serveBin(['--config', p.file], { env: cleanEnv({ TOOLEXEC_TOKEN: envSecret }) });
    try {
      await served.proc.waitFor(/API docs/);
      const err = served.proc.stderr();
      expect(err).toContain('toolexec: auth: bearer tokens: agent (execute, read); TOOLEXEC_TOKEN (every scope)\n');
      expect(err).toContain('toolexec: MCP servers: nowhere (connecting in the background; their state: GET /mcp/servers)\n');
      expect(err).toContain('an ask with no approver subscribed is held until answered\n');
      expect(err + served.proc.stdout()).not.toContain(secret);
      expect(err + served.proc.stdout()).not.toContain(envSecret);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });
});

describe('serve: its files in a project', () => {
  it('keeps the .toolexec/ it makes in a git project out of git, and leaves a data directory it did not make alone', async () => {
    const ws = tmpDir('toolexec-cli-serve-git-');
    execFileSync('git', ['init', '-q'], { cwd: ws });
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a\n');
    // npm start's defaults, run from the project: the database under ./.toolexec/.
    const served = await serveBin([], { cwd: ws });
    try {
      await served.proc.waitFor(/API docs/);
      expect(fs.existsSync(path.join(ws, '.toolexec', 'toolexec.db'))).toBe(true);
      expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ws, encoding: 'utf8' })).toBe('?? a.txt\n');
    } finally {
      expect(await served.stop()).toBe(0);
    }
    const data = tmpDir('toolexec-cli-serve-data-');
    const again = await serveBin(['--workspace', ws, '--data-dir', data]);
    try {
      await again.proc.waitFor(/API docs/);
      expect(fs.readdirSync(data).filter((f) => !f.startsWith('toolexec.db'))).toEqual([]);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});

/**
 * Runs serve expecting it to refuse: its outcome, or 'listening' (the
 * server then stopped at once) when it started instead, so that a regression
 * fails the test rather than leaving a server running.
 */
async function serveRefused(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = spawnBin(['serve', '--port', '0', ...args], { env });
  const started = proc.waitFor(/listening on/).then(
    () => 'listening' as const,
    () => undefined,
  );
  const code = await Promise.race([proc.exited, started.then((s) => s ?? proc.exited)]);
  if (code === 'listening') {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

describe('serve: what stops it from starting', () => {
  it('refuses a TOOLEXEC_TOKEN shorter than a configured token may be (exit 2), before anything listens', async () => {
    const p = project({});
    const r = await serveRefused(['--config', p.file], cleanEnv({ TOOLEXEC_TOKEN: 'abc' }));
    expect(r).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'toolexec: TOOLEXEC_TOKEN is 3 characters long; a token must be at least 16 (for one: TOOLEXEC_TOKEN="$(openssl rand -hex 24)")\n',
    });
    // Nor does a short one let it listen beyond loopback.
    const wide = await serveRefused(['--config', p.file, '--host', '0.0.0.0'], cleanEnv({ TOOLEXEC_TOKEN: 'x'.repeat(15) }));
    expect(wide.code).toBe(2);
    expect(wide.stderr).toContain('TOOLEXEC_TOKEN is 15 characters long');
    expect(fs.existsSync(path.join(p.dir, 'data'))).toBe(false);
  });

  it('names the database path and the fix when storage.path is a directory or lies under a file (exit 1)', async () => {
    const asDir = project({ storage: { path: './data' } });
    fs.mkdirSync(path.join(asDir.dir, 'data'));
    const r = await runBin(['serve', '--config', asDir.file, '--port', '0']);
    const db = path.join(asDir.dir, 'data');
    expect(r).toMatchObject({
      code: 1,
      stderr: `toolexec: cannot start: cannot open the database ${db}: it is a directory; storage.path names the database file (such as ${path.join(db, 'toolexec.db')}), or give the directory as --data-dir\n`,
    });
    const underFile = project({});
    fs.writeFileSync(path.join(underFile.dir, 'plain'), 'x');
    const f = await runBin(['serve', '--config', underFile.file, '--port', '0', '--data-dir', path.join(underFile.dir, 'plain')]);
    expect(f).toMatchObject({
      code: 1,
      stderr: `toolexec: cannot start: cannot open the database ${path.join(underFile.dir, 'plain', 'toolexec.db')}: a part of ${path.join(underFile.dir, 'plain')} is a file, not a directory; choose another place with storage.path or --data-dir\n`,
    });
    expect(r.stderr + f.stderr).not.toMatch(/\n\s+at /);
  });
});
