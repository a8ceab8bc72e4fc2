/**
 * The WAL under sustained writes: the checkpointer worker copies frames back
 * while commits keep landing, so on its own the WAL would never start over
 * and would grow without bound (1.2 GB after 220,000 calls, measured). Once
 * it is past its frame threshold the worker holds the group commit for a
 * last checkpoint, and the next commit starts the WAL over.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpointer } from '../src/storage/checkpointer.js';
import { GroupCommitWriter, openDatabase, type Db } from '../src/storage/db.js';
import { tmpDir } from './helpers.js';

const open: Array<{ db: Db; cp: Checkpointer }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.cp.stop();
    o.db.close();
  }
});

/** The WAL header's checkpoint sequence number: SQLite adds one each time the WAL starts over. */
function walGeneration(file: string): number {
  const fd = fs.openSync(`${file}-wal`, 'r');
  try {
    const h = Buffer.alloc(16);
    fs.readSync(fd, h, 0, 16, 0);
    return h.readUInt32BE(12);
  } finally {
    fs.closeSync(fd);
  }
}

/** Commits 6,000 rows one commit at a time (each at the next turn of the event loop), as a busy service does: a 4 KiB frame or more each. */
async function sustainedWrites(opts: { startAfterMs?: number } = {}): Promise<{ walBytes: number; holds: number; rows: number; restarts: number }> {
  const file = path.join(tmpDir(), 'wal.db');
  const db = openDatabase({ path: file });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const writer = new GroupCommitWriter(db, 0);
  // A short tick and a low threshold, so that the test needs seconds, not minutes.
  const cp = new Checkpointer(db, file, writer, { intervalMs: 20, restartFrames: 200, ...opts });
  open.push({ db, cp });
  await cp.ready;
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  const body = 'x'.repeat(200);
  let maxWal = 0;
  let first = -1;
  for (let i = 0; i < 6000; i++) {
    await writer.write(() => {
      insert.run(body);
    });
    if (first < 0) first = walGeneration(file);
    if (i % 100 === 0) maxWal = Math.max(maxWal, fs.statSync(`${file}-wal`).size);
  }
  maxWal = Math.max(maxWal, fs.statSync(`${file}-wal`).size);
  const rows = (db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
  return { walBytes: maxWal, holds: cp.holds, rows, restarts: walGeneration(file) - first };
}

describe('WAL restart under sustained writes', () => {
  it('keeps the WAL small by holding the commits for a last checkpoint, losing no row', async () => {
    const held = await sustainedWrites();
    expect(held.rows).toBe(6000);
    // Each hold lets the WAL start over (the last one may still be under way).
    expect(held.holds).toBeGreaterThan(1);
    expect(held.restarts).toBeGreaterThanOrEqual(held.holds - 1);
    // 6,000 commits of a page or more each: over 24 MB of frames written in all.
    // Without the hold, 13-25 MB of WAL were measured (it started over only
    // by chance, when the machine was loaded); with it, 4-10 MB.
    expect(held.walBytes).toBeLessThan(12 * 1024 * 1024);
  }, 60_000);

  it('a hold that runs out lets the commits go on, and holds are declined for a while after it', async () => {
    const file = path.join(tmpDir(), 'slow.db');
    const db = openDatabase({ path: file });
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const writer = new GroupCommitWriter(db, 0);
    // The held checkpoint starts 1 s late (a disk slow to sync); a hold lasts 10 ms at most.
    const cp = new Checkpointer(db, file, writer, { intervalMs: 20, restartFrames: 200, maxHoldMs: 10, heldDelayMs: 1000 });
    open.push({ db, cp });
    await cp.ready;
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    // The worker's late answer to the first hold: commits made after that hold ran out and before
    // this answer came did not wait for the slow checkpoint.
    let lateAnswer = false;
    (cp as unknown as { worker: Worker }).worker.on('message', (m: unknown) => {
      if (m !== null && typeof m === 'object' && 'release' in m) lateAnswer = true;
    });
    let commitsBeforeLateAnswer = 0;
    const started = performance.now();
    // Commits keep going until a hold has been declined (or 10 s, which fails below).
    while (cp.holdsDeclined === 0 && performance.now() - started < 10_000) {
      await writer.write(() => void insert.run('x'.repeat(200)));
      if (cp.holdsTimedOut > 0 && !lateAnswer) commitsBeforeLateAnswer += 1;
    }
    const elapsed = performance.now() - started;
    expect(cp.holds).toBeGreaterThan(0);
    expect(cp.holdsTimedOut).toBe(cp.holds);
    expect(cp.holdsDeclined).toBeGreaterThan(0);
    // After one ran out, holds are declined for 1 s, then 2, then 4: at most one more per second.
    expect(cp.holds).toBeLessThanOrEqual(1 + Math.floor(elapsed / 1000));
    // Commits went on while the held checkpoint was still under way (1 s late): none waited it out.
    expect(commitsBeforeLateAnswer).toBeGreaterThan(0);
  }, 60_000);

  it('queues writes while held and commits them on release; flushNow commits even while held', async () => {
    const db = openDatabase({ path: path.join(tmpDir(), 'hold.db') });
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    const writer = new GroupCommitWriter(db, 0);
    const insert = db.prepare('INSERT INTO t (id) VALUES (?)');
    const count = (): number => (db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
    writer.hold();
    let done = false;
    const first = writer.write(() => void insert.run(1)).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    expect(count()).toBe(0);
    writer.release();
    await first;
    expect(count()).toBe(1);
    writer.hold();
    const second = writer.write(() => void insert.run(2));
    writer.flushNow();
    await second;
    expect(count()).toBe(2);
    writer.release();
    db.close();
  });
});

describe('a checkpointer whose worker starts late (startAfterMs, as the service has it)', () => {
  it('starts no worker when stopped before its start, and settles ready', async () => {
    const file = path.join(tmpDir(), 'late-stop.db');
    const db = openDatabase({ path: file });
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    const writer = new GroupCommitWriter(db, 0);
    const cp = new Checkpointer(db, file, writer, { startAfterMs: 60_000 });
    await writer.write(() => void db.prepare('INSERT INTO t (id) VALUES (1)').run());
    expect(cp.started).toBe(false);
    await cp.stop();
    await cp.ready;
    expect(cp.started).toBe(false);
    db.close();
  });

  it('starts its worker after the delay, which then holds the commits to let the WAL start over', async () => {
    const held = await sustainedWrites({ startAfterMs: 50 });
    expect(held.rows).toBe(6000);
    // Holds come from the worker only: it started and checkpoints.
    expect(held.holds).toBeGreaterThan(1);
    expect(held.restarts).toBeGreaterThanOrEqual(held.holds - 1);
  }, 60_000);
});
