/**
 * One service per database file. A second service started on a database in
 * use wrote its execution rows over the first's (row numbers are handed out
 * per process and rows are upserted on them: a session's replay answered
 * another session's output, and the second service's own call ran with its
 * result withheld) and, at start-up, marked the first's running calls
 * cancelled, even when it then failed to listen on a port already taken. It
 * now refuses to start, saying why; a service that crashed leaves no lock
 * behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { cleanupTmp, execute, makeApp, probeTool, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { serveBin, spawnBin, type Served } from './helpers-cli.js';

let t: TestApp | undefined;
const served: Served[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const s of served.splice(0)) await s.stop();
});
afterAll(cleanupTmp);

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

describe('a database in use by another service', () => {
  it('a second service in the same process is refused, and the first keeps its rows; once it closes, the next one opens it', async () => {
    const probe = probeTool({ permission: 'allow' });
    t = await makeApp({}, { extraTools: [probe] });
    const first = await execute(t.app, { session_id: 'alice', tool_uses: [use('Probe', { value: 'alice-1' }, 'ta1')] });
    expect(first.status).toBe(200);
    const config = { workspace: { root: t.workspace }, storage: { path: t.dbPath } };
    await expect(buildApp({ logger: false, extraTools: [probe], config })).rejects.toMatchObject({
      code: 'TOOLEXEC_ERR_STORAGE_UNAVAILABLE',
      message: expect.stringContaining('in use by another toolexec service'),
    });
    // The first service goes on: a new call, and the replay of the first, answer alice's own output.
    const second = await execute(t.app, { session_id: 'alice', tool_uses: [use('Probe', { value: 'alice-2' }, 'ta2')] });
    expect(textOf(second.body.tool_results[0]!.content)).toBe('value=alice-2');
    const replay = await execute(t.app, { session_id: 'alice', tool_uses: [use('Probe', { value: 'alice-2' }, 'ta2')] });
    expect(replay.body.executions[0]).toMatchObject({ id: second.body.executions[0]!.id, status: 'succeeded', replayed: true });
    expect(textOf(replay.body.tool_results[0]!.content)).toBe('value=alice-2');
    await t.close();
    t = undefined;
    const next = await buildApp({ logger: false, extraTools: [probe], config });
    try {
      const again = await execute(next, { session_id: 'alice', tool_uses: [use('Probe', { value: 'alice-1' }, 'ta1')] });
      expect(again.body.executions[0]).toMatchObject({ id: first.body.executions[0]!.id, replayed: true });
      expect(textOf(again.body.tool_results[0]!.content)).toBe('value=alice-1');
    } finally {
      await next.close();
    }
  });

  it('a database reached through a link to it is the same database: the second service is refused', async () => {
    const probe = probeTool({ permission: 'allow' });
    t = await makeApp({}, { extraTools: [probe] });
    await execute(t.app, { session_id: 'alice', tool_uses: [use('Probe', { value: 'alice-1' }, 'ta1')] });
    const other = path.join(tmpDir(), 'linked.db');
    fs.symlinkSync(t.dbPath, other);
    await expect(buildApp({ logger: false, extraTools: [probe], config: { workspace: { root: t.workspace }, storage: { path: other } } })).rejects.toMatchObject({
      code: 'TOOLEXEC_ERR_STORAGE_UNAVAILABLE',
      message: expect.stringContaining('in use by another toolexec service'),
    });
  });

  it('a second `toolexec serve` on the same data directory exits with the reason, before it touches the first one\'s running call', async () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    const data = path.join(root, 'data');
    fs.mkdirSync(ws);
    const cfg = path.join(root, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ permissions: { allow: ['Bash(sleep:*)', 'Bash(echo:*)'] } }));
    const a = await serveBin(['--config', cfg, '--workspace', ws, '--data-dir', data]);
    served.push(a);
    const running = await post(a.url, { session_id: 'alice', wait: false, tool_uses: [use('Bash', { command: 'sleep 30' }, 'long')] });
    expect(running.status).toBe(202);
    const id = running.json.executions[0].id as string;
    // Its row is committed as started (what a crash would leave).
    const db = new Database(path.join(data, 'toolexec.db'), { readonly: true });
    const rowStatus = (): string | undefined => (db.prepare('SELECT status FROM executions WHERE id = ?').get(id) as { status: string } | undefined)?.status;
    try {
      for (let i = 0; i < 200 && rowStatus() === undefined; i++) await new Promise((r) => setTimeout(r, 25));
      expect(rowStatus()).toBeDefined();

      const b = spawnBin(['serve', '--port', '0', '--config', cfg, '--workspace', ws, '--data-dir', data]);
      // It either listens (then it is stopped) or ends (waitFor fails once the process has ended).
      const listened = await b.waitFor(/listening on/).then(
        () => true,
        () => false,
      );
      if (listened) b.child.kill('SIGTERM');
      const code = await b.exited;
      expect(listened).toBe(false);
      expect(code).not.toBe(0);
      expect(b.stderr()).toContain('in use by another toolexec service');
      // The first service's call was not closed as interrupted behind its back.
      expect(rowStatus()).not.toBe('cancelled');
      const echo = await post(a.url, { session_id: 'alice', tool_uses: [use('Bash', { command: 'echo alice-2' }, 'e2')] });
      expect(textOf(echo.json.tool_results[0].content)).toBe('alice-2');
      expect((await fetch(`${a.url}/executions/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    } finally {
      db.close();
    }
  });

  it('a service killed with SIGKILL leaves no lock behind: the next one starts on its database', async () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    const data = path.join(root, 'data');
    fs.mkdirSync(ws);
    const a = await serveBin(['--workspace', ws, '--data-dir', data]);
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    const b = await serveBin(['--workspace', ws, '--data-dir', data]);
    served.push(b);
    const res = await fetch(`${b.url}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('a database that cannot be used at start-up', () => {
  it('a file that is not a database, or one another process keeps locked, is refused naming the file and what to do', async () => {
    const root = tmpDir();
    const dbPath = path.join(root, 'data', 'toolexec.db');
    fs.mkdirSync(path.dirname(dbPath));
    fs.writeFileSync(dbPath, 'this is not a database, but it is long enough to be read as a header');
    const config = { workspace: { root }, storage: { path: dbPath } };
    await expect(buildApp({ logger: false, config })).rejects.toMatchObject({
      code: 'TOOLEXEC_ERR_STORAGE_UNAVAILABLE',
      message: expect.stringMatching(new RegExp(`^cannot open the database ${dbPath}: it is not an SQLite database, or it is damaged`)),
    });
    fs.rmSync(dbPath);
    // Another program (a backup, an sqlite3 shell) in a write transaction on it.
    const other = new Database(dbPath);
    other.exec('CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)');
    try {
      await expect(buildApp({ logger: false, config })).rejects.toMatchObject({
        code: 'TOOLEXEC_ERR_STORAGE_UNAVAILABLE',
        message: expect.stringMatching(new RegExp(`^cannot open the database ${dbPath}: another process holds a lock on it`)),
      });
    } finally {
      other.close();
    }
    // Once it lets go, the service starts (the refused attempts left no lock of their own).
    const app = await buildApp({ logger: false, config });
    await app.close();
  });
});
