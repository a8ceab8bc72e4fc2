/**
 * What a reader of whole trees (`grep -r`, `grep -R`, `rg -L`, `zip -r`,
 * `tar -h`, `cp -rL`) reaches beyond the names below its directory: a
 * symbolic link inside the tree leads anywhere (`src/l` → `../.env`, `src/up`
 * → `..`), and a hard link inside it is another name of a file. Judging the
 * directory by the deny rules' prefixes alone let `grep -R SECRET src` print
 * `.env` through `src/l`.
 *
 * Walked only while Read deny rules exist and no rule reaches the directory
 * itself (that case asks already): directories are listed without a stat per
 * entry; a symbolic link's target is judged (a directory it leads to is
 * walked too, once: one inside the tree is walked where it lies, not again
 * through the link); a file is stat'ed only when a denied file has several
 * names. Past TREE_LIMIT entries, what the tree reaches cannot be known.
 * A directory's entries are kept between checks until it changes (entriesOf).
 */
import fs from 'node:fs';
import path from 'node:path';
import { settledNow, type HardLinkCheck } from './hard-links.js';
import { IGNORE_FILES } from './rg-hidden.js';
import { memoFs } from '../util/decision-memo.js';

export const TREE_LIMIT = 50_000;

/** A directory's entries as last read, with what identifies its state then (as hard-links.ts keeps its listings). */
interface KeptListing {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  entries: fs.Dirent[];
}

/** Directory entries kept between checks, at most (the oldest listings go first): two trees of TREE_LIMIT entries, about 10 MB of Dirents. */
const KEPT_LIMIT = 2 * TREE_LIMIT;
const kept = new Map<string, KeptListing>();
let keptEntries = 0;

/**
 * The entries of a directory (by the path it is read through), kept between checks: read again only
 * when the directory there is another one or changed (its mtime or ctime: `touch -r` sets mtime back
 * after an entry is added, never ctime), or was read within a clock tick of its last change. Adding,
 * removing, renaming or replacing an entry changes the directory; what the entries' names lead to
 * (a link's target, a file's links) is judged anew by every walk. `rg TODO` at the root of a
 * 32,000-entry project read about 2,200 directories on every check; now it stats them.
 * Undefined when the directory cannot be read.
 */
function entriesOf(dir: string): fs.Dirent[] | undefined {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(dir, { bigint: true });
  } catch {
    return undefined;
  }
  const k = kept.get(dir);
  if (k) {
    kept.delete(dir);
    keptEntries -= k.entries.length;
    if (k.dev === st.dev && k.ino === st.ino && k.mtimeNs === st.mtimeNs && k.ctimeNs === st.ctimeNs) {
      kept.set(dir, k);
      keptEntries += k.entries.length;
      return k.entries;
    }
  }
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  // A listing made within a clock tick of the directory's last change may miss a change that moved neither time.
  if (!st.isDirectory() || !settledNow(st) || entries.length > KEPT_LIMIT) return entries;
  kept.set(dir, { dev: st.dev, ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, entries });
  keptEntries += entries.length;
  for (const [d, old] of kept) {
    if (keptEntries <= KEPT_LIMIT) break;
    kept.delete(d);
    keptEntries -= old.entries.length;
  }
  return entries;
}

export interface TreeDeps {
  /** Where a path really leads. */
  canonical(p: string): string;
  /** A real path as canonical() spells it (case folded where the file system folds it). */
  fold(p: string): string;
  /** A Read deny rule (or toolexec's own files) covers this path; `canonical`, where it really leads, when known. */
  readDenied(abs: string, canonical?: string): boolean;
  /** The Read deny rule that may cover something at or below this directory. */
  deniedBelow(dir: string): string | undefined;
  links: HardLinkCheck;
  /** The rules readDenied stands for, as the answer names them: 'a Read deny rule' when not given. */
  rules?: string;
}

export type TreeEscape = { path: string; why: string; named?: true } | { unknown: true };

/**
 * A reader that skips names starting with `.` below its tree (rg, rg-hidden.ts): such entries are
 * neither judged nor entered, unless an ignore file in the tree may whitelist one; then `whitelist`
 * is set to it and the walk stops (the caller lists the tree again with every name).
 */
export interface HiddenSkip {
  /** Whether this ignore file (or a repository's `.git`) may whitelist a name. */
  whitelists(file: string, gitDir: boolean): boolean;
  whitelist?: string;
}

/**
 * `names`: a Read deny rule may match something below the directory by its name (a pattern at any
 * depth, such as `.env`, below src): every entry is judged too, where it is listed and where it
 * really lies (`named` in the answer), so that a tree holding no such file (`grep -r TODO src`) is
 * read as any other. A function: only the files whose base name it accepts are read (grep's
 * `--include='*.ts'`). `excludedDir`: the base names of directories below the tree the reader does
 * not enter (grep's `--exclude-dir`). `takes`: whether the reader takes the entry at this path (git
 * add leaves an ignored file out); what it finds at one it does not take is passed over, and a
 * directory it does not take is not entered.
 */
export function treeEscape(
  dir: string,
  deps: TreeDeps,
  names: boolean | ((base: string) => boolean) = false,
  hidden?: HiddenSkip,
  excludedDir?: (base: string) => boolean,
  takes?: (p: string, isDir: boolean) => boolean,
): TreeEscape | undefined {
  try {
    if (!memoFs.stat(dir)?.isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const statFiles = deps.links.anyLinked();
  // Each directory by where it really lies (a real subdirectory's is its parent's plus its name).
  const queue: { at: string; real: string }[] = [{ at: dir, real: deps.canonical(dir) }];
  const walked = new Set<string>([queue[0]!.real]);
  const top = queue[0]!.real;
  /** Directories inside the tree a symbolic link leads to: the walk reaches them where they lie (pnpm's node_modules/x → .pnpm/x@1/node_modules/x); walked through the link only if it did not. */
  const later: string[] = [];
  let budget = TREE_LIMIT;
  for (let at = 0; ; at++) {
    if (at === queue.length) {
      for (const t of later.splice(0)) {
        if (!walked.has(t)) {
          walked.add(t);
          queue.push({ at: t, real: t });
        }
      }
      if (at === queue.length) break;
    }
    const cur = queue[at]!;
    const entries = entriesOf(cur.at);
    if (entries === undefined) continue;
    budget -= entries.length;
    if (budget < 0) return { unknown: true };
    if (hidden) {
      for (const e of entries) {
        const special = IGNORE_FILES.has(e.name) ? 'file' : e.name === '.git' ? 'git' : undefined;
        if (special && hidden.whitelists(path.join(cur.at, e.name), special === 'git')) {
          hidden.whitelist = path.join(cur.at, e.name);
          return undefined;
        }
      }
    }
    for (const e of entries) {
      // A name that is not UTF-8 comes back with U+FFFD in its place: it names another file than the one
      // there (or none), so what lies below it cannot be judged (`$'\xff'/.env`, or a link in it).
      if (e.name.includes('\ufffd')) return { unknown: true };
      if (hidden && e.name.startsWith('.')) continue;
      // A directory the reader does not enter below its tree (grep's --exclude-dir): neither judged nor
      // walked where it lies. Not a link to one: the reader may follow it (grep -R), and a directory a
      // link leads to is walked all the same.
      if (excludedDir && e.isDirectory() && excludedDir(e.name)) continue;
      const p = path.join(cur.at, e.name);
      // A filter of base names (grep's --include/--exclude): only the files it lets through are read; a directory is entered whatever its name.
      const judged = names === true || (typeof names === 'function' && !e.isDirectory() && names(e.name));
      // A plain entry of a directory whose real path is known really lies there: judged by both names without
      // resolving either again (a 32,000-entry tree cost 66,000 stats a check that way).
      const real = path.join(cur.real, e.name);
      const taken = (): boolean => takes === undefined || takes(p, e.isDirectory());
      if (judged && (e.isSymbolicLink() ? deps.readDenied(p) || deps.readDenied(real) : deps.readDenied(p, deps.fold(real))) && taken()) return { path: p, why: `a file ${deps.rules ?? 'a Read deny rule'} covers`, named: true };
      if (e.isDirectory()) {
        // A directory the reader leaves out whole (git add's ignored directory holding nothing tracked).
        if (!taken()) continue;
        walked.add(real);
        queue.push({ at: p, real });
        continue;
      }
      let file = p;
      if (e.isSymbolicLink()) {
        // One the reader leaves out is not followed either (git add stores a link it takes as a link).
        if (!taken()) continue;
        const target = deps.canonical(p);
        if (deps.readDenied(target)) return { path: p, why: `a symbolic link to ${target}, which ${deps.rules ?? 'a Read deny rule'} covers` };
        let st: fs.Stats | undefined;
        try {
          st = memoFs.stat(target);
        } catch {
          continue;
        }
        if (st === undefined) continue;
        if (st.isDirectory()) {
          const inside = top === '/' || target.startsWith(`${top}/`);
          // A directory inside the tree is walked where it lies, and while names are judged every entry
          // there is (through the link, its base names are the same): a rule that may match below it by
          // name (`.env` at any depth, below pnpm's node_modules/x → .pnpm/x@1/node_modules/x) asks only
          // for what is there. Outside the tree, or with names not judged, it asks.
          const rule = inside && names !== false ? undefined : deps.deniedBelow(target);
          if (rule) return { path: p, why: `a symbolic link to ${target}, where the rule ${rule} denies files` };
          if (walked.has(target)) continue;
          if (inside) later.push(target);
          else {
            walked.add(target);
            queue.push({ at: target, real: target });
          }
          continue;
        }
        if (!st.isFile()) continue;
        file = target;
      } else if (!e.isFile()) continue;
      if (!statFiles) continue;
      const link = deps.links(file);
      if (link && 'unknown' in link) return { unknown: true };
      if (link && taken()) return { path: p, why: `a hard link to ${link.other}, which ${link.rule.raw} denies` };
    }
  }
  return undefined;
}
