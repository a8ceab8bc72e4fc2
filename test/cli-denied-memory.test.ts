/**
 * `toolexec denied-memory`: an operator's way to see the memory of denied
 * files met by identity and to leave an overflow, which before could only be
 * cleared by hand in SQLite (and until then every file born before the file
 * that could not be remembered asked). Real SQLite file, real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/db.js';
import { cleanupTmp, execute, makeApp, tmpDir, use } from './helpers.js';
import { cli } from './helpers-cli.js';

afterAll(cleanupTmp);

/** A data directory whose database remembers `.env` in place and a file that left its denied name, and overflowed. */
function seeded(): { root: string; dataDir: string; ws: string; secret: string } {
  const root = tmpDir();
  const ws = path.join(root, 'ws');
  fs.mkdirSync(ws);
  const secret = path.join(ws, '.env');
  fs.writeFileSync(secret, 'SECRET=1\n');
  const st = fs.statSync(secret);
  const dataDir = path.join(root, 'data');
  const db = openDatabase({ path: path.join(dataDir, 'toolexec.db') });
  const put = db.prepare('INSERT INTO denied_files (dev, ino, born, path, rule, met_at) VALUES (?, ?, ?, ?, ?, ?)');
  put.run(st.dev, st.ino, 0, secret, 'Read(./.env)', 1_000);
  put.run(st.dev, st.ino + 1_000_000, 0, path.join(ws, 'gone', '.env'), 'Read(./.env)', 2_000);
  // Overflowed with a birth time later than every file here: all of them are in doubt.
  db.prepare('INSERT INTO denied_files_overflow (id, born, path, at) VALUES (1, ?, ?, 3000)').run(Date.now() + 86_400_000, path.join(ws, 'k.pem'));
  db.close();
  return { root, dataDir, ws, secret };
}

describe('toolexec denied-memory', () => {
  it('prints the size against the limit, the files no longer at their denied names, and the overflow', async () => {
    const s = seeded();
    const r = await cli(['denied-memory', '--data-dir', s.dataDir, '--list'], { cwd: s.root });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('denied files remembered: 2 of 10000 (1 no longer at the denied name met at');
    expect(r.stdout).toMatch(/overflowed: yes, since 1970-01-01T00:00:03.000Z \(latest at .*k\.pem\)/);
    expect(r.stdout).toMatch(/in place\s+.*ws\/\.env \(Read\(\.\/\.env\)\)/);
    expect(r.stdout).toMatch(/moved\s+.*ws\/gone\/\.env/);
    const json = JSON.parse((await cli(['denied-memory', '--data-dir', s.dataDir, '--json'], { cwd: s.root })).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ remembered: 2, limit: 10_000, displaced: 1, overflow: { path: path.join(s.ws, 'k.pem') }, changes: [] });
  });

  it('--clear-overflow and --forget-displaced leave it, and a service started after no longer asks about every older file', async () => {
    const s = seeded();
    const dbPath = path.join(s.dataDir, 'toolexec.db');
    const other = path.join(s.ws, 'notes.txt');
    fs.writeFileSync(other, 'hello\n');
    const config = { permissions: { deny: ['Read(./.env)'], headless: 'deny' as const }, storage: { path: dbPath }, workspace: { root: s.ws } };
    const readOther = async (): Promise<unknown> => {
      const t = await makeApp(config);
      try {
        return (await execute(t.app, { session_id: 'o', tool_uses: [use('Read', { file_path: other })] })).body.executions[0]!.decision;
      } finally {
        await t.close();
      }
    };
    // Overflowed: the file may be a forgotten denied one, so it asks (denied, headless).
    expect(await readOther()).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    const r = await cli(['denied-memory', '--data-dir', s.dataDir, '--clear-overflow', '--forget-displaced'], { cwd: s.root });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('forgot 1 file no longer at its denied name');
    expect(r.stdout).toContain('cleared the overflow');
    expect(r.stdout).toContain('denied files remembered: 1 of 10000\n');
    expect(r.stdout).toContain('overflowed: no');
    expect(await readOther()).toMatchObject({ behavior: 'allow' });
    // The file still at its denied name is still remembered.
    const db = openDatabase({ path: dbPath });
    try {
      expect(db.prepare('SELECT path FROM denied_files').all()).toEqual([{ path: s.secret }]);
    } finally {
      db.close();
    }
  });

  it('--forget-displaced leaves a file whose denied name cannot be looked at (unknown, not moved)', async () => {
    const s = seeded();
    // A name that cannot be resolved (here a symlink loop, ELOOP; for another user, a directory it cannot search).
    fs.symlinkSync('loop', path.join(s.ws, 'loop'));
    const hidden = path.join(s.ws, 'loop', '.env');
    const db = openDatabase({ path: path.join(s.dataDir, 'toolexec.db') });
    db.prepare('INSERT INTO denied_files (dev, ino, born, path, rule, met_at) VALUES (1, 2, 0, ?, ?, 4000)').run(hidden, 'Read(./.env)');
    db.close();
    const r = await cli(['denied-memory', '--data-dir', s.dataDir, '--forget-displaced', '--list'], { cwd: s.root });
    expect(r.stdout).toContain('forgot 1 file no longer at its denied name');
    expect(r.stdout).toMatch(/unknown\s+.*loop\/\.env/);
    expect(r.stdout).toContain('denied files remembered: 2 of 10000\n');
  });

  it('--forget-displaced keeps a file that lost its denied name to another name in the workspace (tar: N linked to .env, .env replaced)', async () => {
    const s = seeded();
    const n = path.join(s.ws, 'sub', 'N');
    fs.mkdirSync(path.dirname(n));
    fs.linkSync(s.secret, n);
    fs.writeFileSync(path.join(s.ws, '.env.new'), 'SECRET=2\n');
    fs.renameSync(path.join(s.ws, '.env.new'), s.secret);
    const dbPath = path.join(s.dataDir, 'toolexec.db');
    const listed = await cli(['denied-memory', '--data-dir', s.dataDir, '--list'], { cwd: s.root });
    expect(listed.stdout).toMatch(new RegExp(`elsewhere .*ws/\\.env \\(Read\\(\\./\\.env\\)\\), now at ${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const r = await cli(['denied-memory', '--data-dir', s.dataDir, '--forget-displaced', '--clear-overflow'], { cwd: s.root });
    expect(r.code).toBe(0);
    // Only the file gone from the workspace is forgotten; N's row stays.
    expect(r.stdout).toContain('forgot 1 file no longer at its denied name');
    expect(r.stdout).toContain('living on under another name in the workspace: 1');
    const db = openDatabase({ path: dbPath });
    try {
      expect(db.prepare('SELECT ino FROM denied_files').all()).toEqual([{ ino: fs.statSync(n).ino }]);
    } finally {
      db.close();
    }
    // A service started after still knows N for the denied file it is.
    const t = await makeApp({ permissions: { deny: ['Read(./.env)'], headless: 'deny' as const }, storage: { path: dbPath }, workspace: { root: s.ws } });
    try {
      const d = (await execute(t.app, { session_id: 'n', tool_uses: [use('Read', { file_path: n })] })).body.executions[0]!.decision;
      expect(d).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Read(./.env)' } });
    } finally {
      await t.close();
    }
  });

  it('says so, exit 1, when there is no database yet, and creates none', async () => {
    const root = tmpDir();
    const r = await cli(['denied-memory', '--data-dir', path.join(root, 'data')], { cwd: root });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no database at .*toolexec\.db/);
    expect(fs.existsSync(path.join(root, 'data'))).toBe(false);
  });
});
