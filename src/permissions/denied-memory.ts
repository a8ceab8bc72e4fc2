/**
 * The denied files met by identity (hard-links.ts), kept after they lose
 * their denied name: a file given a second name and then replaced under its
 * denied one (a tar member `N` linked to `.env`, then a member `.env`, in one
 * extraction) has a single name again, no rule covers it, and the link count
 * no longer shows it. Only its identity (device, inode, birth time) says it
 * is the denied file, and only if that identity was met before the name was
 * lost: so it is kept in the database (storage/denied-files.ts) as well, and
 * loaded at start-up, or a restart would forget it and `cat N` print the
 * secret.
 *
 * One memory per service, shared by every rule index and kind (an index is
 * made anew whenever a rule is added, and its walk never met a file that had
 * already lost its denied name); each walk judges an entry by its own rules.
 *
 * Bounded: at most `limit` files. Past it, a denied file met is not
 * remembered, and whether a file is one that was forgotten cannot be known:
 * every file born no later than the latest such file is then in doubt (the
 * caller asks, Grep leaves it out), for good, since a forgotten file that
 * has lost its name cannot be found again. The state is kept in the database
 * too. A file born later cannot be one (a file keeps its birth time under
 * every name). Asking is the price of a bound; forgetting in silence would
 * let the 10,001st secret out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A denied file met: where, as which rule, and its birth time (0 where the file system keeps none). */
export interface MetDenied {
  dev: number;
  ino: number;
  born: number;
  path: string;
  rule: string;
}

/** Where the memory is kept across restarts; each call is one small committed write. */
export interface DeniedFileStore {
  put(f: MetDenied): void;
  remove(dev: number, ino: number): void;
  /** A denied file born at `born` (the latest so far) could not be remembered. */
  overflow(born: number, path: string): void;
}

/**
 * Denied files remembered, at most: a row is about 100 bytes on disk and 250 in memory, so 10,000 cost
 * 1 MB and 2.5 MB. displaced() stats each entry's denied name on every tree read while the memory is not
 * empty, so it is not made larger.
 */
export const DENIED_MEMORY_LIMIT = 10_000;

let birthTimes: boolean | undefined;

/**
 * Whether birth times read here are birth times. Where stat has no birth time
 * (a kernel or container that refuses statx, as older Docker seccomp profiles
 * do), libuv gives the ctime in its place, which a chmod or a new hard link
 * moves: the very link that takes a denied file's name away (tar's member N)
 * would then make the file look like another, and it would be forgotten. A
 * file is made and chmod-ed once per process to tell; where its birth time
 * follows its ctime, none is used (0: a reused inode is then taken for the
 * denied file, which asks).
 */
export function birthTimesReliable(): boolean {
  if (birthTimes !== undefined) return birthTimes;
  let dir: string | undefined;
  try {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-btime-'));
    const f = path.join(dir, 'probe');
    fs.writeFileSync(f, '');
    const before = fs.statSync(f, { bigint: true });
    // A ctime later than the first, whatever the clock's grain: chmod until it moves (a few ms at most).
    let after = before;
    for (let i = 0; i < 1000 && after.ctimeNs === before.ctimeNs; i++) {
      fs.chmodSync(f, i % 2 === 0 ? 0o600 : 0o644);
      after = fs.statSync(f, { bigint: true });
    }
    birthTimes = after.ctimeNs !== before.ctimeNs && after.birthtimeNs === before.birthtimeNs;
  } catch {
    birthTimes = false;
  } finally {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  }
  return birthTimes;
}

/** Tests: what the probe would say on a system whose stat has no birth time (undefined: probe again). */
export function assumeBirthTimes(reliable: boolean | undefined): void {
  birthTimes = reliable;
}

/** A file's birth time as the memory keeps it: 0 where birth times are not to be trusted. */
function bornOf(st: fs.Stats): number {
  return birthTimesReliable() ? st.birthtimeMs : 0;
}

/** overlayfs's statfs type (linux/magic.h OVERLAYFS_SUPER_MAGIC). */
const OVERLAYFS_MAGIC = 0x794c7630;
let fileSystemType = (p: string): number => fs.statfsSync(p).type;

/** Tests: the file system type statfs would give (undefined: ask statfs again). */
export function assumeFileSystemType(fn: ((p: string) => number) | undefined): void {
  fileSystemType = fn ?? ((p) => fs.statfsSync(p).type);
}

/**
 * Whether birth times of files on the device of `p` (`st`) may change under
 * the same inode number: overlayfs (a workspace in a container image's layers)
 * keeps a file's inode number when a change (a chmod, or the hard link that
 * takes a denied name away) copies it up from a lower layer, while its birth
 * time becomes the new upper file's. A denied file there is remembered
 * without one. Asked once per device.
 */
function birthMayMove(dev: number, p: string, seen: Map<number, boolean>): boolean {
  let moves = seen.get(dev);
  if (moves === undefined) {
    try {
      moves = fileSystemType(p) === OVERLAYFS_MAGIC;
    } catch {
      moves = true;
    }
    seen.set(dev, moves);
  }
  return moves;
}

export class DeniedFileMemory {
  private readonly met = new Map<string, MetDenied>();
  /** The latest birth time of a denied file met past the limit (not remembered); undefined while none was. */
  private forgottenBorn: number | undefined;
  /** Writes the store refused, oldest first, tried again before the next one. */
  private readonly unsaved: Array<() => void> = [];
  private retryAt = 0;
  /** By device: whether birth times there may move under the same inode (birthMayMove). */
  private readonly birthMoves = new Map<number, boolean>();

  constructor(
    private readonly store: DeniedFileStore | undefined = undefined,
    loaded: { files: Iterable<MetDenied>; forgottenBorn?: number | undefined } = { files: [] },
    readonly limit = DENIED_MEMORY_LIMIT,
    /** Told when the store fails a write: the memory still holds it, but a restart would not. */
    private readonly onStoreError: (e: unknown) => void = () => {},
  ) {
    for (const f of loaded.files) this.met.set(`${f.dev}:${f.ino}`, f);
    this.forgottenBorn = loaded.forgottenBorn;
  }

  get size(): number {
    return this.met.size;
  }

  /**
   * The denied file `st` was met as, if it is that file. An entry whose inode now holds a file born at
   * another time is of a file deleted since: it is dropped, here and in the store.
   */
  get(st: fs.Stats): MetDenied | undefined {
    const id = `${st.dev}:${st.ino}`;
    const f = this.met.get(id);
    if (f === undefined) return undefined;
    // Remembered without a birth time (none kept, or one that may move): the inode is taken for the file.
    if (f.born === 0 || f.born === bornOf(st)) return f;
    this.met.delete(id);
    this.write(() => this.store?.remove(f.dev, f.ino));
    return undefined;
  }

  /**
   * Whether `st` may be a denied file met past the limit and so not remembered: every file born no
   * later than the latest of those (all files, where the file system keeps no birth time).
   */
  mayBeForgotten(st: fs.Stats): boolean {
    return this.forgottenBorn !== undefined && !(bornOf(st) > this.forgottenBorn);
  }

  /** Whether a denied file was met that could not be remembered. */
  get overflowed(): boolean {
    return this.forgottenBorn !== undefined;
  }

  /**
   * Remembers the denied file `st` met at `p` as `rule`. Called for every denied file on every walk, so
   * it writes only what changes: a file not met before, an inode reused, or a file no longer where it was
   * recorded (met again under another denied name). `stillAt` says whether the recorded name still holds it.
   */
  note(st: fs.Stats, p: string, rule: string, stillAt: (p: string) => boolean): void {
    if (this.unsaved.length > 0 && Date.now() >= this.retryAt) this.flush();
    const id = `${st.dev}:${st.ino}`;
    const born = birthMayMove(st.dev, p, this.birthMoves) ? 0 : bornOf(st);
    const was = this.met.get(id);
    if (was !== undefined && was.born === born && (was.path === p || stillAt(was.path))) return;
    if (was === undefined && this.met.size >= this.limit) {
      if (this.forgottenBorn === undefined || born > this.forgottenBorn) {
        this.forgottenBorn = born;
        this.write(() => this.store?.overflow(born, p));
      }
      return;
    }
    const f: MetDenied = { dev: st.dev, ino: st.ino, born, path: p, rule };
    this.met.set(id, f);
    this.write(() => this.store?.put(f));
  }

  entries(): IterableIterator<MetDenied> {
    return this.met.values();
  }

  /**
   * Writes to the store, after any write it failed before: a write refused (disk full, a database
   * opened read-only for a while) is kept and tried again, in order, at the next write or the next
   * note(), so that what the running service remembers reaches the database once it takes writes
   * again, and a later restart does not forget it. At most `limit` + 1 writes wait (a file
   * remembered, removed or the overflow, each a closure over a few fields).
   */
  private write(op: () => void): void {
    if (this.unsaved.length <= this.limit) this.unsaved.push(op);
    this.flush();
  }

  private flush(): void {
    while (this.unsaved.length > 0) {
      try {
        this.unsaved[0]!();
      } catch (e) {
        // note() runs for every denied file of every walk: it tries again a second later, not each time.
        this.retryAt = Date.now() + 1000;
        this.onStoreError(e);
        return;
      }
      this.unsaved.shift();
    }
  }

  /** Writes the store refused and that wait to be tried again. */
  get unsavedWrites(): number {
    return this.unsaved.length;
  }
}
