/**
 * The directories tools may touch: the workspace root and the additional
 * directories. Paths are compared after canonicalising: `..` and repeated
 * slashes resolved, symlinks followed (for the longest existing prefix, so a
 * file about to be created is judged by its real parent), Unicode folded to
 * NFC, and case folded where the file system folds it.
 *
 * Tools open the path `resolve()` returns (`..` resolved lexically), and the
 * permission check judges the same string canonicalised, so what is checked
 * is what is opened.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { memoFs, memoised, memoPeek, memoSeed } from './util/decision-memo.js';

/** Entries of toolexec's data directory compared with a file that has several names (it holds a handful). */
const SERVICE_DIR_ENTRIES = 1000;

/** Symlink hops followed before giving up (the kernel's own limit is 40). */
const MAX_SYMLINK_HOPS = 40;

/** Where a path leads (fs.realpathSync), or the path as given when that cannot be told (missing, a loop). */
export function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** realpath of the longest existing prefix, with the rest appended (once per path within a util/decision-memo.ts scope). */
export function realpathLoose(p: string): string {
  return memoised('realpathLoose', absolute(p), realpathLooseNow);
}

/** realpathLoose of a directory that is most likely there (the one a file is named in). */
function realpathLooseDir(p: string): string {
  return memoised('realpathLoose', absolute(p), realpathLooseThere);
}

/** No `.` or `..` component, no empty one, no trailing slash. */
const NOT_NORMAL = /\/\.{0,2}(?:\/|$)/;

/**
 * path.resolve(p), without its work for a path that is absolute and normal already (the checks pass
 * such paths many times a decision: a file's, its directory's, the roots).
 */
export function absolute(p: string): string {
  return p.startsWith('/') && (p === '/' || !NOT_NORMAL.test(p)) ? p : path.resolve(p);
}

/**
 * realpathLoose of a path that is most likely there (a file's directory): realpath asked at once, without
 * the lstat that spares a missing name realpath's exception (realpathLooseNow, which answers where it fails).
 */
function realpathLooseThere(abs: string): string {
  if (!memoFs.scoped() || memoFs.knownMissing(abs)) return realpathLooseNow(abs);
  const known = knownRealBelow(abs);
  if (known !== undefined) return known;
  try {
    const real = memoFs.realpath(abs);
    seedRealAncestors(real);
    return real;
  } catch {
    // Gone, or not searchable: as any other path.
    return realpathLooseNow(abs);
  }
}

function realpathLooseNow(abs: string): string {
  let head = abs;
  const tail: string[] = [];
  for (let i = 0; i < 4096; i++) {
    // Where lstat finds no such name, realpath would fail the same way, at the cost of an exception: the
    // parent at once. Within a decision the path itself is looked at (resolveTarget lstats it too, and the
    // answer is kept); a parent only if it was. Outside one an lstat would be one more call for a name that is there.
    if (!(tail.length === 0 && memoFs.scoped() ? lstatMissing(head) : memoFs.knownMissing(head))) {
      // A name that is no symbolic link, in a directory whose real path this decision knows (resolveTarget
      // asked it of the file's directory): the real path is that one's, and no realpath is asked again.
      const real = tail.length === 0 ? knownRealBelow(head) : undefined;
      if (real !== undefined) return real;
      try {
        const real = memoFs.realpath(head);
        seedRealAncestors(real);
        return tail.length === 0 ? real : path.join(real, ...tail.reverse());
      } catch {
        /* gone since, or not searchable: the parent */
      }
    }
    const parent = path.dirname(head);
    if (parent === head) return abs;
    tail.push(path.basename(head));
    head = parent;
  }
  return abs;
}

/**
 * Within a decision, a real path and every directory above it are real as they are spelt (at the
 * moment realpath answered): a later realpathLoose of one of them (the walks up for a `.git` from
 * the file's directory and from each root) is answered from it.
 */
function seedRealAncestors(real: string): void {
  if (!memoFs.scoped()) return;
  for (let d = real; ; d = path.dirname(d)) {
    memoSeed('realpathLoose', d, d);
    if (path.dirname(d) === d) return;
  }
}

/** The real path of `p` when it is a name other than a symbolic link in a directory whose real path this decision has (none outside a scope). */
function knownRealBelow(p: string): string | undefined {
  const parent = path.dirname(p);
  if (parent === p) return undefined;
  const dir = memoPeek('realpathLoose', parent);
  const st = memoPeek('lstat', p);
  if (dir === undefined || st === undefined) return undefined;
  const s = st.value as fs.Stats | undefined;
  return s !== undefined && !s.isSymbolicLink() ? path.join(dir.value as string, path.basename(p)) : undefined;
}

function lstatMissing(p: string): boolean {
  try {
    return memoFs.lstat(p) === undefined;
  } catch {
    return true;
  }
}

/**
 * Where an access to `abs` really lands: a symlink as the last component is
 * followed even when it dangles (a write through it would create its target),
 * and the parent is canonicalised. `viaSymlink` says whether any symlink was
 * involved. Once per path within a util/decision-memo.ts scope.
 */
export function resolveTarget(abs: string): { target: string; viaSymlink: boolean } {
  const start = absolute(abs);
  return memoised('resolveTarget', start, resolveTargetNow);
}

function resolveTargetNow(abs: string): { target: string; viaSymlink: boolean } {
  let p = abs;
  let viaSymlink = false;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const parent = realpathLooseDir(path.dirname(p));
    if (parent !== path.dirname(p)) viaSymlink = true;
    p = path.join(parent, path.basename(p));
    let st: fs.Stats | undefined;
    try {
      st = memoFs.lstat(p);
    } catch {
      st = undefined;
    }
    if (!st?.isSymbolicLink()) return { target: p, viaSymlink };
    viaSymlink = true;
    p = path.resolve(path.dirname(p), memoFs.readlink(p));
  }
  const err = new Error(`Too many levels of symbolic links: ${abs}`) as NodeJS.ErrnoException;
  err.code = 'ELOOP';
  throw err;
}

function probeCaseInsensitive(dir: string): boolean {
  const upper = dir.toUpperCase();
  const lower = dir.toLowerCase();
  if (upper === lower) return false;
  try {
    const a = fs.statSync(upper);
    const b = fs.statSync(lower);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

export interface WorkspaceOptions {
  /** Overrides the probe of the root's file system (tests; a FS the probe cannot judge). */
  caseInsensitive?: boolean;
  /**
   * The service's own files: the configuration files it loaded (they may hold
   * tokens) and its database. No tool may read them (permissions/filesystem.ts).
   */
  serviceFiles?: ServiceFiles | undefined;
  /**
   * Scripts the service runs itself (hooks, stdio MCP servers;
   * permissions/run-scripts.ts): changing one always asks a person.
   */
  runScripts?: { absolute: readonly string[]; relative: readonly string[] } | undefined;
}

export interface ServiceFiles {
  /** Configuration files loaded (toolexec's, the Claude Code settings, .mcp.json). */
  config?: readonly string[] | undefined;
  /** The SQLite database file (or ':memory:'). */
  database?: string | undefined;
}

/**
 * The paths a ServiceFiles stands for: the configuration files; the
 * database's directory (where SQLite keeps -wal, -shm and -journal files
 * beside it, and toolexec its .lock), or, when that directory holds a working
 * directory (a database kept in the workspace root itself), the database and
 * those files alone.
 */
export function servicePaths(s: ServiceFiles, roots: readonly string[]): { files: string[]; dirs: string[] } {
  const files = (s.config ?? []).map((f) => path.resolve(f));
  const dirs: string[] = [];
  if (s.database !== undefined && s.database !== ':memory:' && s.database !== '') {
    const db = path.resolve(s.database);
    const dir = path.dirname(db);
    const realDir = realpathLoose(dir);
    const holdsRoot = [dir, realDir].some((d) => roots.some((r) => r === d || r.startsWith(d.endsWith(path.sep) ? d : d + path.sep)));
    if (holdsRoot) files.push(db, `${db}-wal`, `${db}-shm`, `${db}-journal`, `${db}.lock`);
    else dirs.push(dir);
  }
  return { files, dirs };
}

/** `/a/b/c.sh` → [`/a/b`, `/a`]: the directories a relative script path names. */
function suffixDirs(suffix: string): string[] {
  const out: string[] = [];
  for (let d = path.dirname(suffix); d !== path.sep && d !== '.'; d = path.dirname(d)) out.push(d);
  return out;
}

/** A file's identity (device and inode), or undefined when it does not exist (a directory's too). */
function inode(p: string): string | undefined {
  try {
    const st = fs.statSync(p);
    return st.isFile() ? `${st.dev}:${st.ino}` : undefined;
  } catch {
    return undefined;
  }
}

export class Workspace {
  readonly root: string;
  readonly roots: readonly string[];
  readonly caseInsensitive: boolean;
  readonly home: string;
  /** The roots as `fold` leaves them, each with a trailing separator. */
  private readonly foldedRoots: readonly string[];
  /** The roots as configured (resolved, symlinks not followed), for lexical checks. */
  private readonly lexicalRoots: readonly string[];
  /** The service's own files and directories, folded, as given and where they really lead. */
  private readonly serviceFiles: ReadonlySet<string>;
  private readonly serviceDirs: readonly string[];
  /** Scripts the service runs, folded, as given and where they really lead; and relative ones, as `/`-led suffixes. */
  private readonly runScripts: ReadonlySet<string>;
  private readonly runScriptSuffixes: readonly string[];

  constructor(root: string, additional: readonly string[] = [], opts: WorkspaceOptions = {}) {
    this.root = realpathLoose(root);
    const extraGiven = additional.map((d) => path.resolve(this.root, expandHome(d)));
    const extra = extraGiven.map((d) => realpathLoose(d));
    this.roots = [...new Set([this.root, ...extra])];
    this.caseInsensitive = opts.caseInsensitive ?? probeCaseInsensitive(this.root);
    this.home = os.homedir();
    const withSep = (r: string): string => (r.endsWith(path.sep) ? r : r + path.sep);
    this.foldedRoots = this.roots.map((r) => withSep(this.fold(r)));
    this.lexicalRoots = [...new Set([path.resolve(root), ...extraGiven, ...this.roots])].map((r) => withSep(this.fold(r)));
    const svc = servicePaths(opts.serviceFiles ?? {}, [...new Set([path.resolve(root), ...extraGiven, ...this.roots])]);
    const spelt = (ps: string[]): string[] => [...new Set(ps.flatMap((p) => [this.fold(p), this.fold(realpathLoose(p))]))];
    this.serviceFiles = new Set(spelt(svc.files));
    this.serviceDirs = spelt(svc.dirs).map(withSep);
    this.runScripts = new Set(spelt([...(opts.runScripts?.absolute ?? [])]));
    this.runScriptSuffixes = (opts.runScripts?.relative ?? []).map((r) => path.sep + this.fold(r));
  }

  /**
   * Why writing an absolute path changes a script the service runs (a
   * command hook, a stdio MCP server), or undefined. A relative script counts
   * below any directory of the working directories (a hook runs in the
   * session's).
   */
  runScriptReason(abs: string): string | undefined {
    if (this.runScripts.size === 0 && this.runScriptSuffixes.length === 0) return undefined;
    const f = this.fold(abs);
    if (this.runScripts.has(f) || this.runScriptSuffixes.some((x) => f.endsWith(x) && this.containsCanonical(f))) {
      return `${abs} is a script toolexec runs itself (a hook or an MCP server)`;
    }
    // A directory that holds one: moving or removing it takes the script away (a hook that cannot start does not stop the call).
    const dir = f.endsWith(path.sep) ? f.slice(0, -1) : f;
    const held =
      [...this.runScripts].find((x) => x.startsWith(dir + path.sep)) ??
      this.runScriptSuffixes.find((x) => this.containsCanonical(f) && suffixDirs(x).some((d) => dir.endsWith(d)));
    if (held !== undefined) return `${abs} holds ${held.replace(/^\//, '')}, a script toolexec runs itself (a hook or an MCP server)`;
    // The same file under another name (a hard link): what is written there is written to the script.
    const id = inode(abs);
    if (id !== undefined && [...this.runScripts].some((x) => inode(x) === id)) {
      return `${abs} is a hard link to a script toolexec runs itself (a hook or an MCP server)`;
    }
    return undefined;
  }

  /** Whether the service has files of its own a tool must not read. */
  get hasServiceFiles(): boolean {
    return this.serviceFiles.size > 0 || this.serviceDirs.length > 0;
  }

  /**
   * Why an absolute path is one of the service's own files (its
   * configuration, its database or the database's directory), or undefined.
   * Compared as spelt (folded): callers pass each spelling they judge,
   * canonical included.
   */
  serviceFileReason(abs: string): string | undefined {
    if (!this.hasServiceFiles) return undefined;
    const f = this.fold(abs);
    if (this.serviceFiles.has(f)) return `${abs} is one of toolexec's own files (its configuration or database)`;
    const withSep = f.endsWith(path.sep) ? f : f + path.sep;
    if (this.serviceDirs.some((d) => withSep.startsWith(d))) return `${abs} is in toolexec's data directory`;
    return undefined;
  }

  /**
   * The service's own files and the entries of its data directory, as they are now (SQLite makes its
   * -wal and -shm anew), by identity (`dev:ino`): what serviceFileLinkReason compares a file with.
   */
  serviceFileIds(): Map<string, string> {
    const ids = new Map<string, string>();
    if (!this.hasServiceFiles) return ids;
    const candidates = [...this.serviceFiles];
    for (const d of this.serviceDirs) {
      try {
        for (const n of fs.readdirSync(d).slice(0, SERVICE_DIR_ENTRIES)) candidates.push(path.join(d, n));
      } catch {
        /* gone, or not listable */
      }
    }
    for (const c of candidates) {
      let o: fs.Stats | undefined;
      try {
        o = fs.statSync(c, { throwIfNoEntry: false });
      } catch {
        continue;
      }
      const id = o?.isFile() ? `${o.dev}:${o.ino}` : undefined;
      if (id !== undefined && !ids.has(id)) ids.set(id, c);
    }
    return ids;
  }

  /**
   * Why a file (followed where a symlink leads) is one of the service's own files under another name,
   * a hard link, or undefined: an archive extracted in the workspace (`tar x` of a member that links
   * to `toolexec.json`) makes one no path check sees. Only a regular file with several links is
   * looked at (one stat); its identity is compared with serviceFileIds(), taken now or, for a search
   * that asks of many files, once by the caller (`ids`, called at the first file with several links).
   */
  serviceFileLinkReason(abs: string, ids: () => Map<string, string> = () => this.serviceFileIds()): string | undefined {
    if (!this.hasServiceFiles) return undefined;
    // The stat the decision's other checks take of the same path (util/decision-memo.ts).
    const st = memoFs.multiplyLinked(abs);
    if (st === undefined) return undefined;
    const c = ids().get(`${st.dev}:${st.ino}`);
    return c === undefined ? undefined : `${abs} is another name (a hard link) of ${c}, one of toolexec's own files (its configuration or database)`;
  }

  /** The first of the service's own files or directories at or below a directory (a recursive read would reach it), or undefined. */
  serviceFileBelow(dir: string): string | undefined {
    if (!this.hasServiceFiles) return undefined;
    const f = this.fold(dir);
    const withSep = f.endsWith(path.sep) ? f : f + path.sep;
    for (const p of [...this.serviceFiles, ...this.serviceDirs]) if (p.startsWith(withSep) || withSep.startsWith(p.endsWith(path.sep) ? p : p + path.sep)) return p.replace(/\/+$/, '');
    return undefined;
  }

  /** Absolute path of `p` seen from `cwd` (not canonical). */
  resolve(p: string, cwd: string = this.root): string {
    return path.resolve(cwd, expandHome(p));
  }

  /** Unicode NFC, and lower case where the file system folds case. */
  fold(p: string): string {
    const n = p.normalize('NFC');
    return this.caseInsensitive ? n.toLowerCase() : n;
  }

  /**
   * The canonical form used for every comparison: where the path really
   * leads, following a dangling symlink too (a write would create its target).
   */
  canonical(p: string, cwd: string = this.root): string {
    const abs = this.resolve(p, cwd);
    let real: string;
    try {
      real = resolveTarget(abs).target;
    } catch {
      real = realpathLoose(abs);
    }
    return this.fold(real);
  }

  /** Whether `p` (after canonicalising) lies in one of the roots. */
  contains(p: string, cwd: string = this.root): boolean {
    return this.containsCanonical(this.canonical(p, cwd));
  }

  /** Whether an already canonical path lies in one of the roots. */
  containsCanonical(c: string): boolean {
    const withSep = c.endsWith(path.sep) ? c : c + path.sep;
    return this.foldedRoots.some((r) => withSep.startsWith(r));
  }

  /**
   * Whether `p`, as spelt (`..` resolved, symlinks not followed), lies in one
   * of the roots: a path that looks inside but really leads outside is what
   * the file tools refuse to write through.
   */
  containsLexically(p: string, cwd: string = this.root): boolean {
    const f = this.fold(this.resolve(p, cwd));
    const withSep = f.endsWith(path.sep) ? f : f + path.sep;
    return this.lexicalRoots.some((r) => withSep.startsWith(r));
  }

  /** Path relative to the root where inside it, for display. */
  display(abs: string): string {
    const rel = path.relative(this.root, abs);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs;
  }
}

export function expandHome(p: string): string {
  if (p === '~') return os.homedir();
  if (p.startsWith('~/')) return path.join(os.homedir(), p.slice(2));
  return p;
}
