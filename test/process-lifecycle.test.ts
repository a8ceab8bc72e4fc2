/**
 * The service as a real process: SIGTERM with calls in flight (they finish,
 * or are cancelled with their rows, and the exit code is 0), and SIGKILL
 * under load (every execution that was acknowledged has its audit row, and the
 * database passes PRAGMA integrity_check), and SIGKILL with a background task
 * running (the next service to start stops it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir } from './helpers.js';
import { eventually, isAlive, readPid } from './helpers-bash.js';
import { waitFor } from './helpers-mcp.js';

const CLI = path.resolve('dist/cli.js');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(cleanupTmp);

interface Running {
  child: ChildProcess;
  base: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

async function startService(config: Record<string, unknown>, existing?: string, env?: NodeJS.ProcessEnv): Promise<Running & { dir: string; db: string }> {
  const dir = existing ?? tmpDir();
  fs.mkdirSync(path.join(dir, 'ws'), { recursive: true });
  const db = path.join(dir, 'data', 'toolexec.db');
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(cfg, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './data/toolexec.db' }, logging: { level: 'warn' }, ...config }));
  const child = spawn(process.execPath, [CLI, 'serve', '--config', cfg, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'], ...(env ? { env } : {}) });
  children.push(child);
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(({ code }) => reject(new Error(`the service exited (${code}) before listening: ${err}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, exited, stderr: () => err, dir, db };
}

const execute = (base: string, body: unknown) =>
  fetch(`${base}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function integrity(db: string): string {
  const d = new Database(db, { readonly: true });
  try {
    return (d.pragma('integrity_check', { simple: true }) as string) ?? '';
  } finally {
    d.close();
  }
}

describe('SIGTERM', () => {
  it('lets running calls finish, answers new requests with 503, closes SQLite cleanly and exits 0', async () => {
    const s = await startService({ permissions: { allow: ['Bash(sleep:*)'] }, server: { shutdownGraceMs: 20_000 } });
    const running = execute(s.base, { session_id: 'term', tool_uses: [{ type: 'tool_use', id: 'slow', name: 'Bash', input: { command: 'sleep 1.5 && echo done' } }] });
    // Wait until the call is running.
    for (let i = 0; i < 200; i++) {
      const r = await fetch(`${s.base}/executions?session_id=term`);
      const body = (await r.json()) as { executions: Array<{ status: string }> };
      if (body.executions[0]?.status === 'running') break;
      await new Promise((r2) => setTimeout(r2, 20));
    }
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 150));
    // Still listening while it drains: a new request is answered, with 503.
    const late = await fetch(`${s.base}/tools`);
    expect(late.status).toBe(503);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('TOOLEXEC_ERR_SHUTTING_DOWN');
    expect(late.headers.get('retry-after')).toBeTruthy();
    // Probes still answer while draining, whatever their query string.
    const alive = await fetch(`${s.base}/healthz?probe=lb`);
    expect(alive.status).toBe(200);
    await alive.text();
    const res = await running;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { executions: Array<{ status: string }>; tool_results: Array<{ content: string }> };
    expect(body.executions[0]!.status).toBe('succeeded');
    expect(body.tool_results[0]!.content).toContain('done');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(integrity(s.db)).toBe('ok');
    // Closed cleanly: the WAL was checkpointed into the database file.
    expect(fs.existsSync(`${s.db}-wal`) ? fs.statSync(`${s.db}-wal`).size : 0).toBe(0);
    const d = new Database(s.db, { readonly: true });
    const audit = d.prepare("SELECT behavior, reason_type FROM audit WHERE tool_use_id = 'slow'").all();
    d.close();
    expect(audit).toEqual([{ behavior: 'allow', reason_type: 'rule' }]);
  });

  it('cancels calls still running after the grace period, with their rows, and exits 0', async () => {
    const s = await startService({ permissions: { allow: ['Bash(sleep:*)'] }, server: { shutdownGraceMs: 300 }, execution: { maxConcurrency: 1 } });
    // One call at a time: 'next' and 'last' wait behind 'long', queued, with no decision yet.
    const running = execute(s.base, {
      session_id: 'grace',
      tool_uses: ['long', 'next', 'last'].map((id) => ({ type: 'tool_use', id, name: 'Bash', input: { command: 'sleep 60' } })),
    });
    for (let i = 0; i < 200; i++) {
      const body = (await (await fetch(`${s.base}/executions?session_id=grace`)).json()) as { executions: Array<{ status: string }> };
      if (body.executions.some((e) => e.status === 'running')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    s.child.kill('SIGTERM');
    const res = await running;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { executions: Array<{ status: string; error_class: string }> };
    expect(body.executions).toHaveLength(3);
    for (const e of body.executions) expect(e).toMatchObject({ status: 'cancelled', error_class: 'cancelled' });
    expect(await s.exited).toEqual({ code: 0, signal: null });
    const d = new Database(s.db, { readonly: true });
    expect(d.prepare("SELECT tool_use_id, status FROM executions WHERE session_id = 'grace' ORDER BY seq").all()).toEqual(
      ['long', 'next', 'last'].map((id) => ({ tool_use_id: id, status: 'cancelled' })),
    );
    // Every one is in the audit: the running call's decision, and the queued ones' cancellation.
    expect(d.prepare("SELECT tool_use_id, behavior, reason_type, reason_detail FROM audit WHERE session_id = 'grace' ORDER BY id").all()).toEqual([
      { tool_use_id: 'long', behavior: 'allow', reason_type: 'rule', reason_detail: 'Bash(sleep:*)' },
      { tool_use_id: 'next', behavior: 'deny', reason_type: 'cancelled', reason_detail: 'cancelled before its permission decision' },
      { tool_use_id: 'last', behavior: 'deny', reason_type: 'cancelled', reason_detail: 'cancelled before its permission decision' },
    ]);
    d.close();
    expect(integrity(s.db)).toBe('ok');
  });
  it('with 2,000 calls waiting for a person: each is cancelled with its row and an audit row, and it exits 0', async () => {
    const s = await startService({ permissions: { headless: 'wait' }, server: { shutdownGraceMs: 200, maxInFlightCalls: 5000 } });
    // Reads outside the workspace ask; Read is concurrency-safe, so a session's ten wait together.
    for (let i = 0; i < 200; i++) {
      const uses = Array.from({ length: 10 }, (_, k) => ({ type: 'tool_use', id: `w-${i}-${k}`, name: 'Read', input: { file_path: `/etc/hostname-${k}` } }));
      const r = await fetch(`${s.base}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: `wait-${i}`, wait: false, tool_uses: uses }) });
      expect(r.status).toBe(202);
    }
    await waitFor(async () => ((await (await fetch(`${s.base}/permissions/requests?limit=1`)).json()) as { pending_count: number }).pending_count === 2000, 'every call to wait');
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    const d = new Database(s.db, { readonly: true });
    expect(d.prepare("SELECT status, COUNT(*) AS n FROM executions WHERE session_id LIKE 'wait-%' GROUP BY 1").all()).toEqual([{ status: 'cancelled', n: 2000 }]);
    expect(d.prepare("SELECT behavior, reason_type, COUNT(DISTINCT execution_id) AS n FROM audit WHERE session_id LIKE 'wait-%' GROUP BY 1, 2").all()).toEqual([
      { behavior: 'deny', reason_type: 'cancelled', n: 2000 },
    ]);
    expect(d.prepare("SELECT status, COUNT(*) AS n FROM permission_requests WHERE session_id LIKE 'wait-%' GROUP BY 1").all()).toEqual([{ status: 'cancelled', n: 2000 }]);
    d.close();
    expect(integrity(s.db)).toBe('ok');
  });
});

describe('SIGKILL under load', () => {
  it('loses no acknowledged execution: each has its audit row, and integrity_check is ok', async () => {
    const s = await startService({ permissions: { allow: ['Glob', 'Read'] } });
    fs.writeFileSync(path.join(s.dir, 'ws', 'a.txt'), 'hello\n');
    const acknowledged: string[] = [];
    let stop = false;
    let n = 0;
    const worker = async (w: number): Promise<void> => {
      while (!stop) {
        const id = `w${w}-${n++}`;
        try {
          const res = await execute(s.base, {
            session_id: `kill-${w}`,
            tool_uses: [
              { type: 'tool_use', id: `${id}-r`, name: 'Read', input: { file_path: 'a.txt' } },
              { type: 'tool_use', id: `${id}-g`, name: 'Glob', input: { pattern: '*.txt' } },
            ],
          });
          if (res.status !== 200) continue;
          const body = (await res.json()) as { executions: Array<{ id: string; status: string }> };
          for (const e of body.executions) acknowledged.push(e.id);
        } catch {
          return; // the process is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    while (acknowledged.length < 400) await new Promise((r) => setTimeout(r, 20));
    s.child.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);
    expect((await s.exited).signal).toBe('SIGKILL');
    expect(integrity(s.db)).toBe('ok');
    const d = new Database(s.db, { readonly: true });
    const audited = new Set((d.prepare('SELECT execution_id FROM audit').all() as Array<{ execution_id: string }>).map((r) => r.execution_id));
    const rows = new Map((d.prepare('SELECT id, status FROM executions').all() as Array<{ id: string; status: string }>).map((r) => [r.id, r.status]));
    d.close();
    const missingAudit = acknowledged.filter((id) => !audited.has(id));
    const notFinished = acknowledged.filter((id) => rows.get(id) !== 'succeeded');
    expect(acknowledged.length).toBeGreaterThanOrEqual(400);
    expect(missingAudit).toEqual([]);
    expect(notFinished).toEqual([]);

    // Restarted on the same database: ready, every acknowledged execution
    // served as it was, calls cut off by the kill closed as interrupted, and
    // a repeated tool_use id answered from its row, not run again.
    const again = await startService({ permissions: { allow: ['Glob', 'Read'] } }, s.dir);
    expect((await fetch(`${again.base}/readyz`)).status).toBe(200);
    for (const id of acknowledged.slice(-20)) {
      const res = await fetch(`${again.base}/executions/${id}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { execution: { status: string } }).execution.status).toBe('succeeded');
    }
    const left = (await (await fetch(`${again.base}/executions?limit=200&status=running`)).json()) as { executions: unknown[] };
    expect(left.executions).toEqual([]);
    const first = acknowledged[0]!;
    const d2 = new Database(s.db, { readonly: true });
    const row = d2.prepare('SELECT session_id, tool_use_id FROM executions WHERE id = ?').get(first) as { session_id: string; tool_use_id: string };
    const before = (d2.prepare('SELECT COUNT(*) AS n FROM executions').get() as { n: number }).n;
    d2.close();
    const replay = await execute(again.base, {
      session_id: row.session_id,
      tool_uses: [{ type: 'tool_use', id: row.tool_use_id, name: row.tool_use_id.endsWith('-r') ? 'Read' : 'Glob', input: row.tool_use_id.endsWith('-r') ? { file_path: 'a.txt' } : { pattern: '*.txt' } }],
    });
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as { executions: Array<{ id: string; replayed?: boolean }> }).executions[0]).toMatchObject({ id: first, replayed: true });
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
    const d3 = new Database(s.db, { readonly: true });
    expect((d3.prepare('SELECT COUNT(*) AS n FROM executions').get() as { n: number }).n).toBe(before);
    expect((d3.prepare(`SELECT COUNT(*) AS n FROM executions WHERE finished_at IS NULL`).get() as { n: number }).n).toBe(0);
    d3.close();
    expect(integrity(s.db)).toBe('ok');
  });
});

describe('SIGKILL with a background task running', () => {
  async function killWithTask(spawner: 'direct' | 'helper') {
    // A temp directory of their own: services started meanwhile by other test files reap in theirs.
    const tmp = tmpDir();
    const env = { ...process.env, TMPDIR: tmp };
    const config = { permissions: { allow: ['Bash'] }, execution: { spawner } };
    const s = await startService(config, undefined, env);
    const pidFile = path.join(s.dir, 'ws', 'grandchild.pid');
    const res = await execute(s.base, {
      session_id: 'orphan',
      tool_uses: [{ type: 'tool_use', id: 'bg', name: 'Bash', input: { command: 'sleep 300 & echo $! > grandchild.pid; wait', run_in_background: true } }],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tool_results: Array<{ content: string }> }).tool_results[0]!.content).toMatch(/^Command running in background with ID: b[0-9a-f]{8}\./);
    const grandchild = await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n') && readPid(pidFile), 'the grandchild pid');
    const deadPid = s.child.pid!;
    const ownDirs = () => fs.readdirSync(tmp).filter((d) => d.startsWith(`toolexec-tasks-${deadPid}-`));
    expect(ownDirs()).toHaveLength(1);
    s.child.kill('SIGKILL');
    expect((await s.exited).signal).toBe('SIGKILL');
    return { grandchild, ownDirs, next: () => startService(config, undefined, env) };
  }

  it('with the spawn helper, the helper stops the task as soon as its service is gone; the next service removes its directory', async () => {
    const { grandchild, ownDirs, next } = await killWithTask('helper');
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
    expect(ownDirs()).toHaveLength(1);
    const again = await next();
    expect(await eventually(() => ownDirs().length === 0)).toBe(true);
    again.child.kill('SIGTERM');
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  it('forked directly, the task outlives its service, and the next service to start stops it and removes its directory', async () => {
    const { grandchild, ownDirs, next } = await killWithTask('direct');
    // Nothing could stop it: the task outlives its service.
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(grandchild)).toBe(true);
    const again = await next();
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
    // The directory goes after the processes.
    expect(await eventually(() => ownDirs().length === 0)).toBe(true);
    again.child.kill('SIGTERM');
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
