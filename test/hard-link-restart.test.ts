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
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir } from './helpers.js';
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

describe('a denied file that lost its denied name, after a restart', () => {
  it('is still denied under its other name when the service is started again on the same database', async () => {
    const dir = tmpDir();
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    fs.writeFileSync(path.join(ws, 'a.tar'), linkThenReplace());
    const permissions = { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' };
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
