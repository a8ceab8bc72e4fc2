/**
 * Schema migrations (storage/migrations.ts): a database made by an earlier
 * release upgrades in place when the service opens it, its rows kept. Here a
 * database at version 4 (the release before the denied files met by identity
 * were kept, migration 5) with a session, a rule and an execution in it.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/db.js';
import { MIGRATIONS } from '../src/storage/migrations.js';
import { cleanupTmp, execute, makeApp, tmpDir, use } from './helpers.js';
import { linkThenReplace } from './helpers-tar.js';

afterAll(cleanupTmp);

/** A database as release `version` left it: migrations up to it, and user_version set. */
function databaseAt(file: string, version: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const m of MIGRATIONS.filter((x) => x.version <= version)) {
    db.exec(m.sql);
    db.pragma(`user_version = ${m.version}`);
  }
  db.prepare("INSERT INTO sessions (id, mode, cwd, created_at, updated_at) VALUES ('old', 'default', '/', 1, 1)").run();
  db.prepare("INSERT INTO rules (id, source, session_id, behavior, rule, created_at) VALUES ('rule_old', 'always', NULL, 'allow', 'Bash(make:*)', 1)").run();
  db.prepare(
    "INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, created_at, finished_at, input_key) VALUES (1, 'ex_00000000001deadbeef', 'old', 'tu', 'Bash', 'succeeded', 'd', 1, 2, 'k')",
  ).run();
  db.close();
}

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);

describe('migrations', () => {
  it('are numbered 1, 2, 3, … without a gap, so that user_version names the last one applied', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('upgrade a version 4 database to the last version, keeping its rows, and again is a no-op', () => {
    const file = path.join(tmpDir(), 'data', 'toolexec.db');
    databaseAt(file, 4);
    const last = MIGRATIONS[MIGRATIONS.length - 1]!.version;
    expect(last).toBeGreaterThanOrEqual(5);
    for (let i = 0; i < 2; i++) {
      const db = openDatabase({ path: file });
      try {
        expect(db.pragma('user_version', { simple: true })).toBe(last);
        expect(tables(db)).toEqual(expect.arrayContaining(['denied_files', 'denied_files_overflow', 'sessions', 'rules', 'executions']));
        expect(db.prepare('SELECT id FROM sessions').all()).toEqual([{ id: 'old' }]);
        expect(db.prepare('SELECT id, rule FROM rules').all()).toEqual([{ id: 'rule_old', rule: 'Bash(make:*)' }]);
        expect(db.prepare('SELECT id, input_key FROM executions').all()).toEqual([{ id: 'ex_00000000001deadbeef', input_key: 'k' }]);
        expect(db.prepare('SELECT count(*) AS n FROM denied_files').get()).toEqual({ n: 0 });
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
    }
  });

  it('a service started on a version 4 database remembers the denied files it meets, in the new table', async () => {
    const root = tmpDir();
    const dbPath = path.join(root, 'data', 'toolexec.db');
    const workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    databaseAt(dbPath, 4);
    const t = await makeApp({ workspace: { root: workspace }, storage: { path: dbPath }, permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } });
    try {
      fs.writeFileSync(path.join(workspace, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(workspace, 'a.tar'), linkThenReplace());
      const x = await execute(t.app, { session_id: 'new', tool_uses: [use('Bash', { command: 'tar -xf a.tar' })] });
      expect(x.body.executions[0]!.status).toBe('succeeded');
      // The rule remembered before the upgrade still applies.
      const rules = await t.app.inject({ method: 'GET', url: '/permissions/rules' });
      expect(JSON.stringify(rules.json())).toContain('Bash(make:*)');
    } finally {
      await t.close();
    }
    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT path, rule FROM denied_files').all()).toEqual([{ path: path.join(workspace, '.env'), rule: 'Read(./.env)' }]);
    } finally {
      db.close();
    }
  });
});
