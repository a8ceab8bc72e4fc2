/**
 * The memory of denied files met by identity drops the row of a file that
 * has no name left (permissions/denied-memory.ts, Pruning): a `.env` a build
 * writes anew (write, then rename over it) made a row per generation, and
 * past the memory's limit every file born before the latest asked, for good.
 * A file held open reads a link count of 0 once its last name is gone; one
 * that lost its denied name to another name keeps its row. Real files, real
 * SQLite, real Bash checks; the file system type is pinned to ext4 so that
 * the tests run the same on a CI machine whose /tmp is overlayfs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assumeFileSystemType, DeniedFileMemory } from '../src/permissions/denied-memory.js';
import { openDatabase } from '../src/storage/db.js';
import { SqliteDeniedFiles } from '../src/storage/denied-files.js';
import { bashTests, ruleEnv } from './helpers-bash.js';
import { execute, makeApp, tmpDir, use } from './helpers.js';

bashTests();

const EXT4 = 0xef53;
const OVERLAYFS = 0x794c7630;
const memories: DeniedFileMemory[] = [];
beforeEach(() => assumeFileSystemType(() => EXT4));
afterEach(() => {
  assumeFileSystemType(undefined);
  for (const m of memories.splice(0)) m.close();
});
afterAll(() => assumeFileSystemType(undefined));

function memory(...args: ConstructorParameters<typeof DeniedFileMemory>): DeniedFileMemory {
  const m = new DeniedFileMemory(...args);
  memories.push(m);
  return m;
}

/** What a build does to regenerate .env: a new file renamed over the old one (a new inode each time). */
function regenerate(ws: string, n: number): void {
  fs.writeFileSync(path.join(ws, '.env.tmp'), `SECRET=${n}\n`);
  fs.renameSync(path.join(ws, '.env.tmp'), path.join(ws, '.env'));
}

const stillAt = (): boolean => true;

describe('a denied file regenerated often (write, then rename over it)', () => {
  it('leaves one row, not one per generation, and the memory never overflows (through the Bash check that walks before tar)', async () => {
    const dbFile = path.join(tmpDir(), 'toolexec.db');
    const db = openDatabase({ path: dbFile });
    try {
      const store = new SqliteDeniedFiles(db);
      const deniedFiles = memory(store, { files: [] }, 3, undefined, { pinLimit: 10 });
      const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], deniedFiles });
      const old = path.join(env.ws, 'old');
      fs.writeFileSync(old, 'x\n');
      for (let i = 0; i < 10; i++) {
        regenerate(env.ws, i);
        // The walk before an extractor meets the denied files (and prunes).
        expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
      }
      expect(deniedFiles.overflowed).toBe(false);
      expect([...deniedFiles.entries()].map((f) => f.ino)).toEqual([fs.statSync(path.join(env.ws, '.env')).ino]);
      expect((db.prepare('SELECT count(*) AS n FROM denied_files').get() as { n: number }).n).toBe(1);
      expect(db.prepare('SELECT * FROM denied_files_overflow').all()).toEqual([]);
      // A file born before every generation is judged as before, not asked about (it would be past an overflow).
      expect(await env.check('cat old')).toMatchObject({ behavior: 'allow' });
    } finally {
      db.close();
    }
  });
});

describe('through the service', () => {
  it('a .env regenerated between Bash calls leaves one row in the database', async () => {
    const t = await makeApp({ permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } });
    try {
      for (let i = 0; i < 5; i++) {
        regenerate(t.workspace, i);
        // Allowed (the archive is missing, so tar fails): the walk before an extractor met .env.
        const r = await execute(t.app, { session_id: 'p', tool_uses: [use('Bash', { command: 'tar -xf missing.tar' })] });
        expect(r.body.executions[0]!.decision).toMatchObject({ behavior: 'allow' });
      }
    } finally {
      await t.close();
    }
    const db = openDatabase({ path: t.dbPath });
    try {
      const rows = db.prepare('SELECT ino FROM denied_files').all() as Array<{ ino: number }>;
      expect(rows.map((r) => r.ino)).toEqual([fs.statSync(path.join(t.workspace, '.env')).ino]);
    } finally {
      db.close();
    }
  });
});

describe('a denied file that lost its denied name but lives on', () => {
  it('keeps its row while another name holds it (tar: N linked, .env replaced), and loses it once that name goes too', async () => {
    const deniedFiles = memory(undefined, { files: [] }, 10, undefined, { pinLimit: 10 });
    const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], deniedFiles });
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    fs.linkSync(path.join(env.ws, '.env'), path.join(env.ws, 'N'));
    regenerate(env.ws, 1);
    expect(deniedFiles.prune()).toBe(0);
    expect(await env.check('cat N')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
    // Moved out of the workspace: still alive, still remembered.
    const away = path.join(tmpDir(), 'moved');
    fs.renameSync(path.join(env.ws, 'N'), away);
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    expect(deniedFiles.prune()).toBe(0);
    expect(await env.check(`cat ${away}`)).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
    // Its last name gone: its row goes at the next prune; the .env of now stays.
    const ino = fs.statSync(away).ino;
    fs.unlinkSync(away);
    expect(deniedFiles.prune()).toBe(1);
    expect([...deniedFiles.entries()].map((f) => f.ino)).not.toContain(ino);
    expect([...deniedFiles.entries()].map((f) => f.path)).toEqual([path.join(env.ws, '.env')]);
  });

  it('keeps its row where a link count read through a descriptor does not prove the file gone (overlayfs)', () => {
    assumeFileSystemType(() => OVERLAYFS);
    const dir = tmpDir();
    const secret = path.join(dir, '.env');
    fs.writeFileSync(secret, 'SECRET=1\n');
    const m = memory(undefined, { files: [] }, 10, undefined, { pinLimit: 10 });
    m.note(fs.statSync(secret), secret, 'Read(./.env)', stillAt);
    fs.unlinkSync(secret);
    expect(m.prune()).toBe(0);
    expect(m.size).toBe(1);
  });
});

describe('the descriptors the memory holds', () => {
  it('are at most pinLimit: a file past it keeps its row after it is deleted', () => {
    const dir = tmpDir();
    const files = ['a.pem', 'b.pem', 'c.pem'].map((n) => path.join(dir, n));
    const m = memory(undefined, { files: [] }, 10, undefined, { pinLimit: 2 });
    for (const f of files) {
      fs.writeFileSync(f, 'KEY\n');
      m.note(fs.statSync(f), f, 'Read(./*.pem)', stillAt);
    }
    expect(m.pinnedFiles).toBe(2);
    for (const f of files) fs.unlinkSync(f);
    expect(m.prune()).toBe(2);
    expect(m.size).toBe(1);
    expect(m.pinnedFiles).toBe(0);
  });

  it('go to the file met anew when all are held by files that never change: a .env rewritten each build still leaves one row', () => {
    const dir = tmpDir();
    const keys = ['a.pem', 'b.pem', 'c.pem'].map((n) => path.join(dir, n));
    for (const k of keys) fs.writeFileSync(k, 'KEY\n');
    const env = path.join(dir, '.env');
    const m = memory(undefined, { files: [] }, 100, undefined, { pinLimit: 3 });
    for (let i = 0; i < 10; i++) {
      // A build: other files written too (so that the old .env's inode is not simply reused), then .env anew.
      fs.writeFileSync(path.join(dir, `out${i}.o`), 'o\n');
      regenerate(dir, i);
      // A walk: a prune, then every denied file met, the keys first.
      m.prune();
      for (const f of [...keys, env]) m.note(fs.statSync(f), f, 'Read(./.env)', stillAt);
    }
    m.prune();
    expect(m.pinnedFiles).toBe(3);
    expect([...m.entries()].map((f) => f.path).sort()).toEqual([env, ...keys].sort());
  });

  it('are opened again after a restart for the files still at their denied names, whose rows then go when they are deleted', () => {
    const dbFile = path.join(tmpDir(), 'toolexec.db');
    const dir = tmpDir();
    const secret = path.join(dir, '.env');
    fs.writeFileSync(secret, 'SECRET=1\n');
    const first = openDatabase({ path: dbFile });
    const before = memory(new SqliteDeniedFiles(first), { files: [] }, 10, undefined, { pinLimit: 10 });
    before.note(fs.statSync(secret), secret, 'Read(./.env)', stillAt);
    before.close();
    first.close();
    const db = openDatabase({ path: dbFile });
    try {
      const after = new SqliteDeniedFiles(db).load(10, undefined, { pinLimit: 10 });
      memories.push(after);
      expect(after.pinnedFiles).toBe(0);
      // The next walk meets it where it was recorded.
      after.note(fs.statSync(secret), secret, 'Read(./.env)', stillAt);
      expect(after.pinnedFiles).toBe(1);
      regenerate(dir, 2);
      expect(after.prune()).toBe(1);
      expect((db.prepare('SELECT count(*) AS n FROM denied_files').get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('a full memory', () => {
  it('prunes once, not once per denied file past its limit: each prune reads the link count of every file held', () => {
    const dir = tmpDir();
    const files = Array.from({ length: 40 }, (_, i) => path.join(dir, `k${i}.pem`));
    for (const f of files) fs.writeFileSync(f, 'KEY\n');
    const m = memory(undefined, { files: [] }, 10, undefined, { pinLimit: 10 });
    // A walk: a prune, then every denied file met; 30 of them past the limit.
    const walk = (): void => {
      m.prune();
      for (const f of files) m.note(fs.statSync(f), f, 'Read(./*.pem)', stillAt);
    };
    walk();
    expect(m.size).toBe(10);
    expect(m.pinnedFiles).toBe(10);
    expect(m.overflowed).toBe(true);
    const before = m.linkCountsRead;
    walk();
    // The walk's own prune (10 held), not 10 more for each of the 30 files past the limit.
    expect(m.linkCountsRead - before).toBe(10);
    // A file held deleted since: the next walk's prune drops its row and the first file past the limit takes its place.
    fs.unlinkSync(files[0]!);
    files.shift();
    walk();
    expect(m.size).toBe(10);
    expect([...m.entries()].map((f) => f.path)).toContain(files[9]);
  });
});

describe('the prune a walk makes (before each tar -x: one walk per kind of deny rule)', () => {
  /**
   * Extracted into `sub`, away from the Edit rule of the test that has one: into the workspace itself the
   * extraction asks before any walk counts (a tree an Edit deny rule reaches below, bash-edit-deny-trees),
   * while the walks are made for any extractor wherever it extracts.
   */
  const TAR_X = 'tar -xf a.tar -C sub';
  /** `n` denied keys in the workspace, met by a first walk (and so held). */
  async function keysMet(n: number, deny: string[]): Promise<{ env: ReturnType<typeof ruleEnv>; m: DeniedFileMemory; keys: string[] }> {
    const m = memory(undefined, { files: [] }, 100, undefined, { pinLimit: 100 });
    const env = ruleEnv({ deny, allow: ['Bash(tar:*)'], deniedFiles: m });
    fs.mkdirSync(path.join(env.ws, 'sub'));
    const keys = Array.from({ length: n }, (_, i) => path.join(env.ws, `k${i}.pem`));
    for (const k of keys) fs.writeFileSync(k, 'KEY\n');
    expect(await env.check(TAR_X)).toMatchObject({ behavior: 'allow' });
    expect(m.pinnedFiles).toBe(n);
    return { env, m, keys };
  }

  it('reads no link count of a file it met at its denied name, and still drops the row of one deleted since', async () => {
    const { env, m, keys } = await keysMet(20, ['Read(./*.pem)']);
    // Each walk read all 20 counts: 2,000 a decision with 1,000 files held and Read and Edit rules.
    let before = m.linkCountsRead;
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    expect(m.linkCountsRead - before).toBe(0);
    // Not met any more: its count is read, and its row goes at this walk's end.
    const gone = fs.statSync(keys[3]!).ino;
    fs.unlinkSync(keys[3]!);
    before = m.linkCountsRead;
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    expect(m.linkCountsRead - before).toBe(1);
    expect(m.size).toBe(19);
    expect([...m.entries()].map((f) => f.ino)).not.toContain(gone);
  });

  it('leaves the files the walk of the other kind remembered to that walk (Read keys, an Edit rule elsewhere)', async () => {
    const { env, m, keys } = await keysMet(20, ['Read(./*.pem)', 'Edit(./.github/workflows/**)']);
    const before = m.linkCountsRead;
    // The Edit walk meets none of the keys: they are the Read walk's, which met them all.
    expect(await env.check(TAR_X)).toMatchObject({ behavior: 'allow' });
    expect(m.linkCountsRead - before).toBe(0);
    // The timer's prune still reads them all.
    fs.unlinkSync(keys[0]!);
    expect(m.prune()).toBe(1);
    expect(m.linkCountsRead - before).toBe(20);
  });

  it('a full memory still prunes before a file would overflow it: a key deleted makes room for a new one met by the same walk', async () => {
    const m = memory(undefined, { files: [] }, 3, undefined, { pinLimit: 10 });
    const env = ruleEnv({ deny: ['Read(./*.pem)'], allow: ['Bash(tar:*)'], deniedFiles: m });
    const keys = ['a.pem', 'b.pem', 'c.pem'].map((n) => path.join(env.ws, n));
    for (const k of keys) fs.writeFileSync(k, 'KEY\n');
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    expect(m.size).toBe(3);
    fs.unlinkSync(keys[0]!);
    const fresh = path.join(env.ws, 'd.pem');
    fs.writeFileSync(fresh, 'KEY\n');
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    expect(m.overflowed).toBe(false);
    expect([...m.entries()].map((f) => f.path).sort()).toEqual([...keys.slice(1), fresh].sort());
  });
});
