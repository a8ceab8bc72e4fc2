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
 * has lost its name cannot be found again: until an operator, having checked
 * the workspace, clears it (`toolexec denied-memory --clear-overflow`; the
 * metrics and the log say when the memory fills). The state is kept in the
 * database too. A file born later cannot be one (a file keeps its birth time under
 * every name). Asking is the price of a bound; forgetting in silence would
 * let the 10,001st secret out. So the rows of files deleted since are
 * dropped where their deletion is proven (Pruning, below): a `.env` a build
 * writes anew each time holds one row, not one per generation.
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

/** overlayfs's statfs type (linux/magic.h OVERLAYFS_SUPER_MAGIC). */
const OVERLAYFS_MAGIC = 0x794c7630;
let fileSystemType = (p: string): number => fs.statfsSync(p).type;

/** Tests: the file system type statfs would give (undefined: ask statfs again). */
export function assumeFileSystemType(fn: ((p: string) => number) | undefined): void {
  fileSystemType = fn ?? ((p) => fs.statfsSync(p).type);
}

/** The type of the file system of the device of `p` (`dev`), by statfs once per device (`seen`); null when statfs fails. */
function fileSystemOf(dev: number, p: string, seen: Map<number, number | null>): number | null {
  let type = seen.get(dev);
  if (type === undefined) {
    try {
      type = fileSystemType(p);
    } catch {
      type = null;
    }
    seen.set(dev, type);
  }
  return type;
}

/**
 * Whether birth times read on the device of `p` (`dev`) are the files' own
 * and stay theirs under the same inode number: not where stat gives none
 * (birthTimesReliable), nor on overlayfs (a workspace in a container image's
 * layers), which keeps a file's inode number when a change (a chmod, or the
 * hard link that takes a denied name away) copies it up from a lower layer,
 * while its birth time becomes the new upper file's. A device statfs cannot
 * tell is taken for one where they move.
 */
function birthTimesKept(dev: number, p: string, seen: Map<number, number | null>): boolean {
  if (!birthTimesReliable()) return false;
  const type = fileSystemOf(dev, p, seen);
  return type !== null && type !== OVERLAYFS_MAGIC;
}

/*
 * Pruning: the rows of denied files deleted since. A row may be dropped only
 * once its file has no name left anywhere: the memory is for the file that
 * lost its denied name and lives on under another, possibly outside the
 * workspace, and nothing a walk sees proves that gone. Neither "its denied
 * name holds another inode now" (that is tar's `N` then `.env`), nor a link
 * count of 1 seen at the last walk (a link made since is not seen), nor an
 * inode number met again with another birth time (proof, but only when met:
 * get()), nor a walk of the workspace (the file may have been linked
 * anywhere on its file system; only a walk of all of it, with no directory
 * unreadable or hidden by a mount and none changed meanwhile, would prove
 * it). Linux has no open-by-inode for an unprivileged process.
 *
 * What does prove it is the link count read through a descriptor open on the
 * file: 0 means no name is left, and none can be made again (link(2) and
 * linkat(2) through /proc/self/fd refuse an inode whose count fell to 0 with
 * ENOENT; only an O_TMPFILE file never linked is exempt, and a file met by
 * name has been). So a denied file is held open (O_PATH: no read permission
 * needed, no content or device touched, close-on-exec) from when a walk
 * meets it at a denied name, and its row goes when the count it reads is 0.
 * The descriptor also keeps its inode number from being reused meanwhile.
 * Descriptors are held only for files alive now, not for every file ever met
 * (a `.env` a build writes anew each time costs one), and at most
 * `pinLimit` (a file met anew takes the one held longest: pin()). A file
 * deleted while not held (let go for a newer one, met only before a restart:
 * after one, a row whose file no longer lies at its denied name cannot be
 * opened again), or on a file system not in LINK_COUNTS_FINAL, keeps its row
 * as before. The costs: a deleted denied file's blocks are freed at the next
 * prune (a walk, or the service's timer), not at once, and the file system
 * cannot be unmounted while the service runs.
 *
 * A prune reads one link count per file held, up to pinLimit (1,000), and
 * every walk prunes: a walk runs before each `tar xf` (two, for Read and Edit
 * rules), so each of those decisions paid up to 2,000 fstats. A file a walk
 * meets at a denied name has a name, which is all a count would tell: so a
 * walk reads, at its end (endWalk()), only the counts of the files held that
 * it did not meet, and of those only the ones its own rules put in the
 * memory (the walk for the other kind, or another session's rules, looks at
 * theirs; the timer at all). A deleted file's row still goes at the next
 * walk of the rules that remembered it, or at the timer's prune where no
 * walk has those rules any more. A full memory still prunes before a file
 * overflows it (note()), skipping only the files met by the walk under way.
 */

/** Linux's O_PATH (asm-generic/fcntl.h): the same on every architecture of PIN_ARCHES. */
const O_PATH = 0o10000000;
const PIN_ARCHES = new Set(['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64']);

/**
 * File systems whose link count, read through a descriptor, is the inode's own (linux/magic.h): ext2-4,
 * xfs, btrfs, tmpfs, f2fs, zfs, bcachefs. Not overlayfs (a file's name may be a whiteout over a lower
 * file that other names still share), NFS or FUSE (counts a server gives).
 */
const LINK_COUNTS_FINAL = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1, 0xca451a4e]);

/**
 * Descriptors the service's memory holds open: an eighth of the process's limit (Node raises its soft
 * limit to the hard one at start), at most 1,000; none but on Linux.
 */
export function defaultPinLimit(): number {
  if (process.platform !== 'linux' || !PIN_ARCHES.has(process.arch)) return 0;
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    if (!m) return 0;
    return m[1] === 'unlimited' ? 1000 : Math.min(1000, Math.floor(Number(m[1]) / 8));
  } catch {
    return 0;
  }
}

/** The share of the limit past which the memory says it is filling up (DeniedMemoryOptions.warn). */
const NEARLY_FULL = 0.8;

export interface DeniedMemoryOptions {
  /** Descriptors held open to see remembered files deleted (Pruning above); none unless given. */
  pinLimit?: number | undefined;
  /**
   * Told once per memory (one per service) when the memory first holds NEARLY_FULL of its limit (or more), and once
   * when a denied file could not be remembered (or the memory was loaded in that state), so that an
   * operator sees it before, or when, files start to ask.
   */
  warn?: ((event: 'nearly_full' | 'overflowed', detail: { remembered: number; limit: number; path?: string }) => void) | undefined;
}

export class DeniedFileMemory {
  private readonly met = new Map<string, MetDenied>();
  /** The latest birth time of a denied file met past the limit (not remembered); undefined while none was. */
  private forgottenBorn: number | undefined;
  /** Writes the store refused, oldest first, tried again before the next one. */
  private readonly unsaved: Array<() => void> = [];
  private retryAt = 0;
  /** By device: the file system's type (fileSystemOf). */
  private readonly fileSystems = new Map<number, number | null>();
  /**
   * By `dev:ino`: a descriptor open on a remembered file, to see it deleted (see Pruning above), and the
   * latest walk (walks) that met the file at a denied name.
   */
  private readonly pinned = new Map<string, { fd: number; met: number }>();
  /** Walks begun (beginWalk()); `walking` while one is under way. */
  private walks = 0;
  private walking = false;
  /** Descriptors held at most: none unless asked (the owner then close()s the memory). */
  readonly pinLimit: number;

  constructor(
    private readonly store: DeniedFileStore | undefined = undefined,
    loaded: { files: Iterable<MetDenied>; forgottenBorn?: number | undefined } = { files: [] },
    readonly limit = DENIED_MEMORY_LIMIT,
    /** Told when the store fails a write: the memory still holds it, but a restart would not. */
    private readonly onStoreError: (e: unknown) => void = () => {},
    opts: DeniedMemoryOptions = {},
  ) {
    for (const f of loaded.files) this.met.set(`${f.dev}:${f.ino}`, f);
    this.forgottenBorn = loaded.forgottenBorn;
    this.pinLimit = opts.pinLimit ?? 0;
    this.warn = opts.warn;
    this.warnIfFilling(undefined);
  }

  private readonly warn: DeniedMemoryOptions['warn'];
  private warnedFull = false;
  private warnedOverflow = false;

  /** Tells `warn`, once each per memory, that it passed NEARLY_FULL of its limit, and that it overflowed (at `p`). */
  private warnIfFilling(p: string | undefined): void {
    if (!this.warn) return;
    if (!this.warnedFull && this.met.size >= NEARLY_FULL * this.limit && this.limit > 0) {
      this.warnedFull = true;
      this.warn('nearly_full', { remembered: this.met.size, limit: this.limit });
    }
    if (!this.warnedOverflow && this.forgottenBorn !== undefined) {
      this.warnedOverflow = true;
      this.warn('overflowed', { remembered: this.met.size, limit: this.limit, ...(p === undefined ? {} : { path: p }) });
    }
  }

  get size(): number {
    return this.met.size;
  }

  /** The birth time of the file `st` found at `p` as the memory keeps it: 0 where birth times are not kept (birthTimesKept). */
  private bornOf(st: fs.Stats, p: string): number {
    return birthTimesKept(st.dev, p, this.fileSystems) ? st.birthtimeMs : 0;
  }

  /**
   * The denied file `st` (found at `p`) was met as, if it is that file. An entry whose inode now holds
   * a file born at another time is of a file deleted since: it is dropped, here and in the store.
   */
  get(st: fs.Stats, p: string): MetDenied | undefined {
    const id = `${st.dev}:${st.ino}`;
    const f = this.met.get(id);
    if (f === undefined) return undefined;
    // Remembered without a birth time, or read where birth times are not kept (a row written by a process
    // that could read them, read by one that cannot): the inode is taken for the file.
    const born = this.bornOf(st, p);
    if (f.born === 0 || born === 0 || f.born === born) return f;
    this.unpin(id);
    this.met.delete(id);
    this.write(() => this.store?.remove(f.dev, f.ino));
    return undefined;
  }

  /**
   * Whether `st` (found at `p`) may be a denied file met past the limit and so not remembered: every
   * file born no later than the latest of those (every file where birth times are not kept: such a file
   * was met as born at 0).
   */
  mayBeForgotten(st: fs.Stats, p: string): boolean {
    return this.forgottenBorn !== undefined && !(this.bornOf(st, p) > this.forgottenBorn);
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
    const born = this.bornOf(st, p);
    const was = this.met.get(id);
    if (was !== undefined && was.born === born && (was.path === p || stillAt(was.path))) {
      this.pin(id, st, p);
      return;
    }
    // Full: the rows of files deleted since make room first (but of those the walk under way met at a
    // denied name, which are not); not again once a prune found none (the next walk, or the timer, looks
    // again), or each denied file past the limit would cost an fstat per file held on every walk: 2,000
    // files past it and 1,000 held blocked each walk for 2 s here.
    if (was === undefined && this.met.size >= this.limit && this.pinned.size > 0 && !this.nothingToPrune) {
      const walk = this.walking ? this.walks : undefined;
      this.nothingToPrune = this.pruneWhere((_, held) => held.met !== walk) === 0;
    }
    if (was === undefined && this.met.size >= this.limit) {
      if (this.forgottenBorn === undefined || born > this.forgottenBorn) {
        this.forgottenBorn = born;
        this.write(() => this.store?.overflow(born, p));
        this.warnIfFilling(p);
      }
      return;
    }
    const f: MetDenied = { dev: st.dev, ino: st.ino, born, path: p, rule };
    this.met.set(id, f);
    this.write(() => this.store?.put(f));
    this.pin(id, st, p, was === undefined);
    if (was === undefined) this.warnIfFilling(p);
  }

  /**
   * Holds the remembered file `st`, met at `p`, open to see it deleted, where that proves it (see Pruning
   * above). A file met anew (`fresh`) takes the descriptor held longest when all are taken: otherwise
   * pinLimit denied files that never change (`Read(./secrets/**)` over 1,000 keys) held them all for good,
   * and a `.env` a build writes anew added a row per generation again, until the memory overflowed. The
   * file let go is held again once a descriptor is free (a walk meets it again); deleted meanwhile, it
   * keeps its row.
   */
  private pin(id: string, st: fs.Stats, p: string, fresh = false): void {
    const held = this.pinned.get(id);
    if (held !== undefined) {
      // `p` held it when the walk stat'ed it: it has a name (endWalk() need not read its count).
      held.met = this.walks;
      return;
    }
    if (this.pinLimit <= 0 || (this.pinned.size >= this.pinLimit && !fresh)) return;
    const type = fileSystemOf(st.dev, p, this.fileSystems);
    if (type === null || !LINK_COUNTS_FINAL.has(type)) return;
    let fd: number;
    try {
      fd = fs.openSync(p, O_PATH);
    } catch {
      return;
    }
    try {
      // `p` may name another file by now: only the file met is held.
      const o = fs.fstatSync(fd);
      if (o.dev === st.dev && o.ino === st.ino && o.nlink > 0) {
        if (this.pinned.size >= this.pinLimit) this.unpin(this.pinned.keys().next().value!);
        this.pinned.set(id, { fd, met: this.walks });
        return;
      }
    } catch {
      /* closed below */
    }
    fs.closeSync(fd);
  }

  private unpin(id: string): void {
    const held = this.pinned.get(id);
    if (held === undefined) return;
    this.pinned.delete(id);
    try {
      fs.closeSync(held.fd);
    } catch {
      /* already closed */
    }
  }

  /**
   * Drops the rows of remembered files that have no name left (their held descriptor reads a link
   * count of 0; see Pruning above), here and in the store; how many. One fstat per file held.
   */
  prune(): number {
    const dropped = this.pruneWhere(() => true);
    this.nothingToPrune = dropped === 0;
    return dropped;
  }

  /**
   * A walk (hard-links.ts DeniedLinkWalk) begins: the files it meets at their denied names are known to
   * have a name until it ends (endWalk()), and a full memory may prune again (note()).
   */
  beginWalk(): void {
    this.walks++;
    this.walking = true;
    this.nothingToPrune = false;
  }

  /**
   * The walk under way ends: prunes the rows of the files held that it did not meet at a denied name,
   * among those `mine` (the rows its rules made) selects; how many it dropped. One fstat per such file
   * (Pruning above): none when every file the walk's rules remembered is still where it was met.
   */
  endWalk(mine: (f: MetDenied) => boolean): number {
    if (!this.walking) return 0;
    this.walking = false;
    const walk = this.walks;
    return this.pruneWhere((id, held) => {
      if (held.met === walk) return false;
      const f = this.met.get(id);
      return f === undefined || mine(f);
    });
  }

  /** Drops the rows of the files held, among those `look` selects, whose link count is 0; how many. */
  private pruneWhere(look: (id: string, held: { fd: number; met: number }) => boolean): number {
    let dropped = 0;
    for (const [id, held] of this.pinned) {
      if (!look(id, held)) continue;
      let links: number;
      this.countsRead++;
      try {
        links = fs.fstatSync(held.fd).nlink;
      } catch {
        // Unreadable now: the row stays, no longer watched.
        this.unpin(id);
        continue;
      }
      if (links > 0) continue;
      this.unpin(id);
      const f = this.met.get(id);
      if (f === undefined) continue;
      this.met.delete(id);
      this.write(() => this.store?.remove(f.dev, f.ino));
      dropped++;
    }
    return dropped;
  }

  /**
   * Whether the latest prune of the files held (prune(), or note()'s) dropped no row: a full memory then
   * leaves the next look to the next walk (beginWalk()) or the timer (note()).
   */
  private nothingToPrune = false;
  private countsRead = 0;

  /** Link counts read through held descriptors so far (one fstat each): what pruning has cost. */
  get linkCountsRead(): number {
    return this.countsRead;
  }

  /** Files held open to see them deleted. */
  get pinnedFiles(): number {
    return this.pinned.size;
  }

  /** Closes the descriptors held (the service's end); the rows stay. */
  close(): void {
    for (const id of [...this.pinned.keys()]) this.unpin(id);
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
