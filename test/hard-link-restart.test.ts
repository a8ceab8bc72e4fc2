/**
 * The denied files met by identity (permissions/hard-links.ts) across a
 * restart of the service. With Read(./.env) denied under Bash(tar:*),
 * 'tar -xf a.tar' of an archive whose member N is a hard link to .env and
 * whose next member is a regular .env leaves the secret under N alone, with
 * one name; the walk met .env before tar ran, so 'cat N' is denied. That
 * memory lived in the process only: after a restart 'cat N' (read-only,
 * allowed in default mode) printed the secret. Real service processes, a
 * real SQLite file, real tar.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { cleanupTmp, execute, makeApp, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { linkThenReplace } from './helpers-tar.js';

const CLI = path.resolve('dist/cli.js');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(cleanupTmp);

interface Service {
  base: string;
  stop(): Promise<void>;
}

/** The service as a real process on `dir`'s workspace and database. */
async function start(dir: string, permissions: Record<string, unknown>): Promise<Service> {
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(cfg, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './data/toolexec.db' }, logging: { level: 'warn' }, permissions }));
  const child = spawn(process.execPath, [CLI, 'serve', '--config', cfg, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening: ${err}`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  };
}

interface Answer {
  executions: Array<{ status: string; decision: { behavior: string; reason: { type: string; detail: string } } | null }>;
  tool_results: Array<{ content: unknown }>;
}

async function call(s: Service, name: string, input: unknown): Promise<{ behavior: string | undefined; text: string }> {
  const res = await fetch(`${s.base}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ session_id: 'm', tool_uses: [{ type: 'tool_use', id: `t${Math.random().toString(36).slice(2, 10)}`, name, input }] }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Answer;
  return { behavior: body.executions[0]!.decision?.behavior, text: JSON.stringify(body.tool_results[0]!.content) };
}

/** A workspace holding .env and the link-then-replace archive, with the rules the two runs share. */
function tarWorkspace(): { dir: string; ws: string; permissions: Record<string, unknown> } {
  const dir = tmpDir();
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.writeFileSync(path.join(ws, 'a.tar'), linkThenReplace());
  return { dir, ws, permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } };
}

describe('a denied file that lost its denied name, after a restart', () => {
  it('is still denied under its other name when the service is started again on the same database', async () => {
    const { dir, ws, permissions } = tarWorkspace();
    const first = await start(dir, permissions);
    expect((await call(first, 'Bash', { command: 'tar -xf a.tar' })).behavior).toBe('allow');
    // The secret has one name now, N; .env is another file.
    expect(fs.readFileSync(path.join(ws, 'N'), 'utf8')).toBe('SECRET=hunter2\n');
    expect(fs.statSync(path.join(ws, 'N')).nlink).toBe(1);
    const before = await call(first, 'Bash', { command: 'cat N' });
    expect(before.behavior).toBe('deny');
    await first.stop();

    const second = await start(dir, permissions);
    try {
      const cat = await call(second, 'Bash', { command: 'cat N' });
      expect(cat.text).not.toContain('hunter2');
      expect(cat.behavior).toBe('deny');
      const read = await call(second, 'Read', { file_path: path.join(ws, 'N') });
      expect(read.text).not.toContain('hunter2');
      expect(read.behavior).toBe('deny');
      const grep = await call(second, 'Grep', { pattern: 'SECRET', output_mode: 'content' });
      expect(grep.text).not.toContain('hunter2');
      // A file never denied is read as before.
      fs.writeFileSync(path.join(ws, 'other'), 'x\n');
      expect((await call(second, 'Bash', { command: 'cat other' })).behavior).toBe('allow');
    } finally {
      await second.stop();
    }
  });
});

describe('a denied file that lost its denied name while the service was stopped', () => {
  it('is denied if a walk met it while the service ran (tar -x by hand between two runs)', async () => {
    const { dir, ws, permissions } = tarWorkspace();
    const first = await start(dir, permissions);
    // A line running tar walks the denied files before it runs: .env is met by identity.
    expect((await call(first, 'Bash', { command: 'tar --version' })).behavior).toBe('allow');
    await first.stop();
    execFileSync('tar', ['-xf', 'a.tar'], { cwd: ws });
    expect(fs.readFileSync(path.join(ws, 'N'), 'utf8')).toBe('SECRET=hunter2\n');
    const second = await start(dir, permissions);
    try {
      const cat = await call(second, 'Bash', { command: 'cat N' });
      expect(cat.text).not.toContain('hunter2');
      expect(cat.behavior).toBe('deny');
    } finally {
      await second.stop();
    }
  });
});

/** The same service built again in this process on the same database and workspace, as restart-recovery does. */
async function restart(t: TestApp, config: ConfigInput): Promise<TestApp> {
  await t.close();
  const next = await makeApp({ ...config, workspace: { root: t.workspace }, storage: { path: t.dbPath } });
  return { ...next, workspace: t.workspace, dbPath: t.dbPath };
}

async function run(t: TestApp, name: string, input: unknown) {
  const r = await execute(t.app, { session_id: 'm', tool_uses: [use(name, input)] });
  expect(r.status).toBe(200);
  return { decision: r.body.executions[0]!.decision, text: textOf(r.body.tool_results[0]!.content) };
}

function rows(dbPath: string): unknown[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT dev, ino, born, path, rule, met_at FROM denied_files ORDER BY path').all();
  } finally {
    db.close();
  }
}

describe('the denied files met by identity, kept in the database', () => {
  const config: ConfigInput = { permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } };

  it('are loaded by the next service on the same database: cat N, Read N and Grep are denied after the restart', async () => {
    let t = await makeApp(config);
    try {
      fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(t.workspace, 'a.tar'), linkThenReplace());
      expect((await run(t, 'Bash', { command: 'tar -xf a.tar' })).decision).toMatchObject({ behavior: 'allow' });
      expect(fs.readFileSync(path.join(t.workspace, 'N'), 'utf8')).toBe('SECRET=hunter2\n');
      // One row: the secret's file, as met under .env before tar ran.
      const st = fs.statSync(path.join(t.workspace, 'N'));
      expect(rows(t.dbPath)).toEqual([{ dev: st.dev, ino: st.ino, born: st.birthtimeMs, path: path.join(t.workspace, '.env'), rule: 'Read(./.env)', met_at: expect.any(Number) }]);
      t = await restart(t, config);
      const cat = await run(t, 'Bash', { command: 'cat N' });
      expect(cat.text).not.toContain('hunter2');
      expect(cat.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Read(./.env)' } });
      const read = await run(t, 'Read', { file_path: path.join(t.workspace, 'N') });
      expect(read.text).not.toContain('hunter2');
      expect(read.decision).toMatchObject({ behavior: 'deny' });
      const grep = await run(t, 'Grep', { pattern: 'SECRET', output_mode: 'content' });
      expect(grep.text).not.toContain('hunter2');
      fs.writeFileSync(path.join(t.workspace, 'other'), 'x\n');
      expect((await run(t, 'Bash', { command: 'cat other' })).decision).toMatchObject({ behavior: 'allow' });
    } finally {
      await t.close();
    }
  });

  it('are written when a denied file is met for the first time, not on every check', async () => {
    const t = await makeApp(config);
    try {
      fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(t.workspace, 'a.tar'), linkThenReplace());
      await run(t, 'Bash', { command: 'tar -xf a.tar' });
      const after = rows(t.dbPath);
      expect(after).toHaveLength(1);
      // Each of these walks the denied files again (the new .env among them): the row stays as written.
      for (let i = 0; i < 3; i++) {
        expect((await run(t, 'Bash', { command: 'cat N' })).decision).toMatchObject({ behavior: 'deny' });
        await run(t, 'Bash', { command: 'tar -tf a.tar' });
      }
      // The new .env was met too (a file of its own): one more row, written once.
      const now = rows(t.dbPath) as Array<{ path: string; met_at: number }>;
      expect(now).toHaveLength(2);
      expect(now.filter((r) => r.path === path.join(t.workspace, '.env'))).toHaveLength(2);
      expect(now).toContainEqual(after[0]);
      const again = rows(t.dbPath);
      await run(t, 'Bash', { command: 'cat N' });
      await run(t, 'Bash', { command: 'tar -tf a.tar' });
      expect(rows(t.dbPath)).toEqual(again);
    } finally {
      await t.close();
    }
  });

  it('forget a file whose inode now holds another file (born at another time), and deny nothing unrelated', async () => {
    let t = await makeApp(config);
    fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'hello\n');
    const st = fs.statSync(path.join(t.workspace, 'notes.txt'));
    expect(st.birthtimeMs).toBeGreaterThan(0);
    await t.close();
    const { workspace, dbPath } = t;
    // What a deleted denied file leaves when its inode is given to notes.txt: its row, born earlier.
    const db = new Database(dbPath);
    db.prepare('INSERT INTO denied_files (dev, ino, born, path, rule, met_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      st.dev,
      st.ino,
      st.birthtimeMs - 5000,
      path.join(workspace, '.env'),
      'Read(./.env)',
      Date.now(),
    );
    db.close();
    t = await makeApp({ ...config, workspace: { root: workspace }, storage: { path: dbPath } });
    try {
      const cat = await run(t, 'Bash', { command: 'cat notes.txt' });
      expect(cat.decision).toMatchObject({ behavior: 'allow' });
      expect(cat.text).toContain('hello');
      // Pruned when checked: the row is gone.
      expect(rows(dbPath)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

/** The last approval asked for: why. */
function lastAsk(dbPath: string): unknown {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT reason_type, reason_detail FROM permission_requests ORDER BY created_at DESC, rowid DESC LIMIT 1').get();
  } finally {
    db.close();
  }
}

/** Writes `file` anew until its birth time is later than `ref`'s. */
async function writeBornAfter(file: string, data: string | Buffer, ref: string): Promise<void> {
  const born = fs.statSync(ref).birthtimeMs;
  for (;;) {
    fs.rmSync(file, { force: true });
    fs.writeFileSync(file, data);
    if (fs.statSync(file).birthtimeMs > born) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('past the limit of denied files remembered (10,000)', () => {
  const config: ConfigInput = { permissions: { deny: ['Read(./.env)', 'Read(./secrets/**)'], allow: ['Bash(tar:*)'], headless: 'deny' } };

  it('a denied file met then is not remembered, so a file born before it asks (fails closed), before and after a restart', async () => {
    let t = await makeApp(config);
    try {
      const secrets = path.join(t.workspace, 'secrets');
      fs.mkdirSync(secrets);
      for (let i = 0; i < 10_000; i++) fs.writeFileSync(path.join(secrets, `k${i}`), 'k\n');
      // A walk meets the 10,000 (a line running tar walks before it runs).
      expect((await run(t, 'Bash', { command: 'tar --version' })).decision).toMatchObject({ behavior: 'allow' });
      expect(rows(t.dbPath)).toHaveLength(10_000);
      // The 10,001st: met as sub/.env before tar runs, not remembered. Every file born before it is in
      // doubt from then on; 'early' is one.
      fs.writeFileSync(path.join(t.workspace, 'early'), 'early\n');
      fs.mkdirSync(path.join(t.workspace, 'sub'));
      fs.writeFileSync(path.join(t.workspace, 'sub', '.env'), 'SECRET=hunter2\n');
      // Born after it: a file system's clock moves by ticks, and files made in one tick share a birth time.
      await writeBornAfter(path.join(t.workspace, 'a.tar'), linkThenReplace(), path.join(t.workspace, 'sub', '.env'));
      const xx = await run(t, 'Bash', { command: 'tar -xf a.tar -C sub' });
      expect(xx.decision).toMatchObject({ behavior: 'allow' });
      expect(fs.readFileSync(path.join(t.workspace, 'sub', 'N'), 'utf8')).toBe('SECRET=hunter2\n');
      expect(rows(t.dbPath)).toHaveLength(10_000);
      await writeBornAfter(path.join(t.workspace, 'fresh'), 'new\n', path.join(t.workspace, 'sub', '.env'));
      for (let round = 0; round < 2; round++) {
        const cat = await run(t, 'Bash', { command: 'cat sub/N' });
        expect(cat.text).not.toContain('hunter2');
        // An ask (safety), denied here since no approver is connected.
        expect(cat.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
        expect(lastAsk(t.dbPath)).toMatchObject({ reason_type: 'safety', reason_detail: expect.stringContaining('remembers by identity') });
        const read = await run(t, 'Read', { file_path: path.join(t.workspace, 'sub', 'N') });
        expect(read.text).not.toContain('hunter2');
        expect(read.decision?.behavior).toBe('deny');
        const grep = await run(t, 'Grep', { pattern: 'SECRET', output_mode: 'content' });
        expect(grep.text).not.toContain('hunter2');
        expect(grep.text).toContain('remembers by identity');
        // So does any file born before it: whether it is the forgotten one cannot be known.
        const early = await run(t, 'Bash', { command: 'cat early' });
        expect(early.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
        expect(lastAsk(t.dbPath)).toMatchObject({ reason_type: 'safety', reason_detail: expect.stringContaining('whether ' + path.join(t.workspace, 'early')) });
        // A file born after the forgotten one cannot be it: read as before.
        const fresh = await run(t, 'Bash', { command: 'cat fresh' });
        expect(fresh.decision).toMatchObject({ behavior: 'allow' });
        expect(fresh.text).toContain('new');
        t = await restart(t, config);
      }
    } finally {
      await t.close();
    }
  });
});
