/**
 * An operator sees the memory of denied files met by identity fill up: its
 * size, limit, overflow and the files it holds open are gauges of GET
 * /metrics, and the log says once when it passes 80% of its limit and once
 * when a denied file could not be remembered (from then on files born
 * before it ask, which otherwise shows only as unexplained asks). Real
 * service, real SQLite file, the real Bash check's walk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assumeFileSystemType, DeniedFileMemory } from '../src/permissions/denied-memory.js';
import { openDatabase } from '../src/storage/db.js';
import { cleanupTmp, execute, logCapture, makeApp, tmpDir, use } from './helpers.js';

afterAll(cleanupTmp);

function gauge(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

describe('GET /metrics', () => {
  it('gives the files remembered, the limit, the overflow (0/1) and the files held open', async () => {
    assumeFileSystemType(() => 0xef53);
    const t = await makeApp({ permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } });
    try {
      let text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(gauge(text, 'toolexec_denied_files_remembered')).toBe(0);
      expect(gauge(text, 'toolexec_denied_files_limit')).toBe(10_000);
      expect(gauge(text, 'toolexec_denied_files_overflowed')).toBe(0);
      fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=1\n');
      // The walk before an extractor meets .env.
      await execute(t.app, { session_id: 'm', tool_uses: [use('Bash', { command: 'tar -xf missing.tar' })] });
      text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(gauge(text, 'toolexec_denied_files_remembered')).toBe(1);
      expect(gauge(text, 'toolexec_denied_files_overflowed')).toBe(0);
      // Held open to see it deleted (on Linux; the file system is taken for ext4 so that an overlayfs /tmp gives the same).
      expect(gauge(text, 'toolexec_denied_files_held_open')).toBe(process.platform === 'linux' ? 1 : 0);
    } finally {
      await t.close();
      assumeFileSystemType(undefined);
    }
  });

  it('says 1, and the log says so at start, for a database an earlier process left overflowed', async () => {
    const dbPath = path.join(tmpDir(), 'data', 'toolexec.db');
    const db = openDatabase({ path: dbPath });
    db.prepare("INSERT INTO denied_files_overflow (id, born, path, at) VALUES (1, 1000, '/w/.env', 1)").run();
    db.close();
    const out = logCapture();
    const t = await makeApp({ permissions: { deny: ['Read(./.env)'] }, storage: { path: dbPath }, logging: { level: 'info' } }, { logger: undefined, logStream: out.stream });
    try {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(gauge(text, 'toolexec_denied_files_overflowed')).toBe(1);
      const warned = out.lines().filter((l) => typeof l.msg === 'string' && l.msg.includes('could not be remembered'));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, remembered: 0, limit: 10_000 });
    } finally {
      await t.close();
    }
  });
});

describe('the warnings', () => {
  it('come once past 80% of the limit and once at the overflow, however many files are met after', () => {
    const dir = tmpDir();
    const events: Array<[string, Record<string, unknown>]> = [];
    const m = new DeniedFileMemory(undefined, { files: [] }, 5, undefined, { warn: (e, d) => events.push([e, d]) });
    for (let i = 0; i < 8; i++) {
      const f = path.join(dir, `k${i}.pem`);
      fs.writeFileSync(f, 'KEY\n');
      m.note(fs.statSync(f), f, 'Read(./*.pem)', () => true);
      if (i === 2) expect(events).toEqual([]);
    }
    expect(events).toEqual([
      ['nearly_full', { remembered: 4, limit: 5 }],
      ['overflowed', { remembered: 5, limit: 5, path: path.join(dir, 'k5.pem') }],
    ]);
  });
});
