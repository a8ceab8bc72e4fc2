/**
 * The memory of denied files met by identity (permissions/denied-memory.ts)
 * reaches the database even when the database refused the write at first: a
 * refused write is kept and tried again, so a restart after the database
 * recovers still finds the file. Real SQLite; the refusal is SQLite's own
 * (`PRAGMA query_only`, SQLITE_READONLY), as a full disk would give.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/db.js';
import { SqliteDeniedFiles } from '../src/storage/denied-files.js';
import { assumeBirthTimes, assumeFileSystemType, birthTimesReliable, DeniedFileMemory } from '../src/permissions/denied-memory.js';
import { cleanupTmp, tmpDir } from './helpers.js';

afterAll(cleanupTmp);

describe('a denied file met while the database refuses writes', () => {
  it('is written once the database takes writes again, and a restart finds it', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'toolexec.db');
    const secret = path.join(dir, '.env');
    const other = path.join(dir, 'other.pem');
    fs.writeFileSync(secret, 'SECRET=1\n');
    fs.writeFileSync(other, 'KEY\n');
    const db = openDatabase({ path: file });
    const errors: unknown[] = [];
    const memory = new SqliteDeniedFiles(db).load(undefined, (e) => errors.push(e));
    const stillAt = (): boolean => true;
    db.pragma('query_only = ON');
    memory.note(fs.statSync(secret), secret, 'Read(./.env)', stillAt);
    // Refused, and said so; the running service remembers it meanwhile.
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/readonly|read-only|query_only/i);
    expect(memory.get(fs.statSync(secret), secret)?.path).toBe(secret);
    expect(memory.unsavedWrites).toBe(1);
    // Still refused: the next write waits behind it, in order.
    await new Promise((r) => setTimeout(r, 1100));
    memory.note(fs.statSync(other), other, 'Read(./*.pem)', stillAt);
    expect(memory.unsavedWrites).toBe(2);
    db.pragma('query_only = OFF');
    // The database takes writes again: the next walk's note() (the file met again) writes both.
    await new Promise((r) => setTimeout(r, 1100));
    memory.note(fs.statSync(secret), secret, 'Read(./.env)', stillAt);
    expect(memory.unsavedWrites).toBe(0);
    db.close();
    // A restart: the memory as loaded from the file holds both.
    const again = openDatabase({ path: file });
    try {
      const loaded = new SqliteDeniedFiles(again).load();
      expect([...loaded.entries()].map((f) => f.path).sort()).toEqual([secret, other].sort());
    } finally {
      again.close();
    }
  });
});

describe('birth times that are ctimes in disguise', () => {
  /** A stat as libuv gives it without statx: the birth time is the ctime, which a new link moves. */
  const aliased = (st: fs.Stats, ctimeMs: number): fs.Stats => Object.assign(Object.create(Object.getPrototypeOf(st) as object) as fs.Stats, st, { ctimeMs, birthtimeMs: ctimeMs });

  it('are told apart from real ones on this machine (the probe chmods a file and sees its birth time stay)', () => {
    assumeBirthTimes(undefined);
    // coreutils' stat reads the birth time through statx too, and prints 0 or - where there is none.
    const f = path.join(tmpDir(), 'f');
    fs.writeFileSync(f, '');
    const born = execFileSync('stat', ['-c', '%W', f], { encoding: 'utf8' }).trim();
    const reliable = birthTimesReliable();
    if (born !== '0' && born !== '-') expect(reliable).toBe(true);
    // Without a birth time, birth times are trusted only where node reads none either (0, never the ctime).
    else expect(reliable ? fs.statSync(f).birthtimeMs : 0).toBe(0);
  });

  it('are not used: the denied file whose ctime a hard link moved is still the denied file', () => {
    const { secret, st } = plantSecret();
    const memory = new DeniedFileMemory();
    try {
      assumeBirthTimes(false);
      memory.note(aliased(st, 1000), secret, 'Read(./.env)', () => true);
      // tar links N to it (ctime moves), then replaces .env: N is the secret, met by identity.
      expect(memory.get(aliased(st, 2000), secret)?.path).toBe(secret);
      // With birth times trusted, the moved "birth time" reads as another file on a reused inode.
      assumeBirthTimes(true);
      assumeFileSystemType(() => 0xef53);
      const trusting = new DeniedFileMemory();
      trusting.note(aliased(st, 1000), secret, 'Read(./.env)', () => true);
      expect(trusting.get(aliased(st, 2000), secret)).toBeUndefined();
    } finally {
      assumeBirthTimes(undefined);
      assumeFileSystemType(undefined);
    }
  });
});

/** A .env in a directory of its own, and its stat. */
function plantSecret(): { secret: string; st: fs.Stats } {
  const secret = path.join(tmpDir(), '.env');
  fs.writeFileSync(secret, 'SECRET=1\n');
  return { secret, st: fs.statSync(secret) };
}

/** A stat whose birth time is `born`: overlayfs gives the upper file's once a change copied the file up. */
const bornAt = (st: fs.Stats, born: number): fs.Stats => Object.assign(Object.create(Object.getPrototypeOf(st) as object) as fs.Stats, st, { birthtimeMs: born });

describe('a denied file on overlayfs (a workspace in a container image)', () => {
  it('is remembered without its birth time: copied up by the link that takes its name away, it is still the denied file', () => {
    const { secret, st } = plantSecret();
    try {
      assumeBirthTimes(true);
      assumeFileSystemType(() => 0x794c7630);
      const overlay = new DeniedFileMemory();
      overlay.note(bornAt(st, 1000), secret, 'Read(./.env)', () => true);
      expect(overlay.get(bornAt(st, 2000), secret)?.path).toBe(secret);
      // On another file system the moved birth time says another file took the inode.
      assumeFileSystemType(() => 0xef53);
      const ext4 = new DeniedFileMemory();
      ext4.note(bornAt(st, 1000), secret, 'Read(./.env)', () => true);
      expect(ext4.get(bornAt(st, 2000), secret)).toBeUndefined();
    } finally {
      assumeBirthTimes(undefined);
      assumeFileSystemType(undefined);
    }
  });
});

describe('where birth times are not kept, whichever the reason', () => {
  it('a denied file on overlayfs met past the limit leaves every file there in doubt, whatever birth time it reads now', () => {
    const { secret, st } = plantSecret();
    try {
      assumeBirthTimes(true);
      assumeFileSystemType(() => 0x794c7630);
      const full = new DeniedFileMemory(undefined, { files: [] }, 0);
      full.note(bornAt(st, 1000), secret, 'Read(./.env)', () => true);
      expect(full.overflowed).toBe(true);
      // tar linked N to it (copying it up: a new birth time) and replaced .env: N may be the forgotten secret.
      const n = path.join(path.dirname(secret), 'N');
      expect(full.mayBeForgotten(bornAt(st, 2000), n)).toBe(true);
    } finally {
      assumeBirthTimes(undefined);
      assumeFileSystemType(undefined);
    }
  });

  it('a file remembered with its birth time is still the denied file when read by a process that cannot trust birth times', () => {
    const { secret, st } = plantSecret();
    try {
      assumeBirthTimes(true);
      assumeFileSystemType(() => 0xef53);
      const memory = new DeniedFileMemory();
      memory.note(bornAt(st, 1000), secret, 'Read(./.env)', () => true);
      // Restarted where stat gives the ctime for a birth time (no statx): the "birth time" read is the ctime the link moved.
      assumeBirthTimes(false);
      expect(memory.get(bornAt(st, 2000), path.join(path.dirname(secret), 'N'))?.path).toBe(secret);
      expect(memory.size).toBe(1);
    } finally {
      assumeBirthTimes(undefined);
      assumeFileSystemType(undefined);
    }
  });
});
