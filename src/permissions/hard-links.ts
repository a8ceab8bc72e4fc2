/**
 * Hard links to a denied file. Path rules judge a file by its names, and a
 * hard link is the same file under a name no rule covers: with `Read(./.env)`
 * denied, `x` made by `ln .env x` (or by extracting an archive holding a hard
 * link member, which cannot be judged before it runs) prints `.env`, and a
 * Bash write through it (`>> x`) changes `.env` in place.
 *
 * Only a regular file with more than one link (`st_nlink > 1`) is looked at,
 * and only while deny rules of the kind exist: one stat, which is all an
 * everyday file costs. For such a file, the denied files that have several
 * links themselves (only those can have another name) are collected once per
 * checker (one decision, one search), by a walk kept between checks
 * (DeniedLinkWalk): found below each rule's fixed prefix
 * (`./.env` is one stat; a bare `.env` walks the working directory;
 * `~/.ssh/**` walks ~/.ssh), with directory entries listed without a stat
 * each and only a name a rule covers stat'ed. A directory is entered only
 * when something a rule covers may lie in it: a rule without `**` below its
 * prefix covers names at a fixed depth (`./.env.*` lists the working
 * directory alone, not node_modules below it, whose pnpm files all have
 * several names). A check lists at most WALK_LIMIT entries anew: past it,
 * whether a file is a denied one cannot be known (the caller asks, or hides
 * the file), and the next check goes on from there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DeniedFileMemory } from './denied-memory.js';
import type { PathMatcher } from './path-rules.js';
import type { PermissionRule } from './types.js';
import { memoFs } from '../util/decision-memo.js';

/**
 * Directory entries listed per check. A checkout of 20,000 files (node_modules
 * excluded) is listed in about 40 ms on a laptop SSD; the check runs only
 * for files with several links (pnpm's and cargo's hard links, mostly).
 */
export const WALK_LIMIT = 20_000;

export interface DenyRuleEntry {
  rule: PermissionRule;
  /** The rule's fixed prefix (no wildcard): what it covers lies at or below it. */
  prefix: string;
  matches: PathMatcher;
  /**
   * Whether something the rule covers may lie at or below this directory (false for one
   * neither above nor below its prefix); without it, every directory is entered.
   */
  enters?: PathMatcher;
}

/** The file is also `other`, which `rule` denies. */
type Found = { rule: PermissionRule; other: string };

export type HardLinkVerdict =
  | Found
  /**
   * The walk was cut short, or (forgotten) the file may be a denied one met past the memory's
   * limit (denied-memory.ts): it may be a denied one.
   */
  | { unknown: true; forgotten?: true };

/** Whether `p` is (still) the file `st` describes. */
function sameFile(p: string, st: fs.Stats): boolean {
  try {
    const o = memoFs.stat(p);
    return o !== undefined && o.dev === st.dev && o.ino === st.ino;
  } catch {
    return false;
  }
}


/** A directory as last listed: what identifies its state, the directories entered below it, the covered files in it. */
interface Listing {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  /** The inode's change time: `touch -d`/`touch -r` set mtime back after an entry is added, never ctime. */
  ctimeNs: bigint;
  /** Listed within MODIFIED_LATELY_MS of its last change: a change in the same clock tick would not move mtime, so it is listed again. */
  settled: boolean;
  entries: number;
  subdirs: string[];
  covered: Array<{ path: string; rule: PermissionRule }>;
}

/** How close to a directory's last change (ctime) a listing is not trusted to have seen every change (coarse file-system clocks). */
export const MODIFIED_LATELY_MS = 1_000;

/**
 * Whether a listing made now of the directory `st` describes may be kept until the directory's
 * identity, mtime or ctime moves: not when it was last changed within MODIFIED_LATELY_MS (a change
 * in the same clock tick would not move them). The walk of whole trees (tree-reach.ts) keeps its
 * listings the same way.
 */
export function settledNow(st: fs.BigIntStats): boolean {
  return Date.now() - Number((st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs) / 1_000_000n) > MODIFIED_LATELY_MS;
}

/**
 * Entries the walk keeps listings of, at most: what a tree past it holds cannot be known (the caller
 * asks). WALK_LIMIT bounds what one check lists anew; a larger tree is listed over several checks.
 */
const WALK_KEPT_LIMIT = 10 * WALK_LIMIT;

/**
 * The walk for the denied files with several links, kept between checks (one per rule index and kind,
 * permissions/rule-index.ts): a directory is listed again only when it changed (its identity, mtime or ctime)
 * or was listed too soon after a change; every other is one lstat. A denied file gains a name elsewhere
 * without its directory changing (`ln .env /tmp/x`), so each covered file is stat'ed on every check
 * (there are few). Since `./.env` matches at any depth (as in Claude Code), the walk covers the whole
 * working directory: listing a 35,000-entry pnpm project on every Read of a dependency's file cost
 * 3,800 directory listings a check and, past WALK_LIMIT, made every such Read a safety ask.
 */
export class DeniedLinkWalk {
  private readonly listings = new Map<string, Listing>();
  /** The denied file the file `st` describes was met as, by any walk so far, if one of these rules still covers that name. */
  formerly(st: fs.Stats, p: string): Found | undefined {
    // An inode reused after a delete is born anew (where the file system records birth: 0 where not).
    const f = this.memory.get(st, p);
    if (f === undefined) return undefined;
    const rule = this.covering(f.path);
    return rule ? { rule, other: f.path } : undefined;
  }

  /** Whether `st` may be a denied file met past the memory's limit, which these rules would judge. */
  mayBeForgotten(st: fs.Stats, p: string): boolean {
    return this.rules.length > 0 && this.memory.mayBeForgotten(st, p);
  }

  /** Whether a denied file met so far no longer lies where it was met (it may have another name now), or may have been forgotten. */
  displaced(): boolean {
    if (this.memory.overflowed) return true;
    for (const f of this.memory.entries()) {
      if (!this.covering(f.path)) continue;
      try {
        const st = fs.statSync(f.path);
        if (st.dev !== f.dev || st.ino !== f.ino) return true;
        // Its inode under its denied name, born anew: the file met is gone (get() forgets it).
        this.memory.get(st, f.path);
      } catch {
        return true;
      }
    }
    return false;
  }

  /** @param memory the denied files met by identity, shared by every walk of a service (denied-memory.ts). */
  constructor(
    private readonly rules: readonly DenyRuleEntry[],
    private readonly memory: DeniedFileMemory = new DeniedFileMemory(),
  ) {
    this.raws = new Set(rules.map((r) => r.rule.raw));
  }

  /** Whether the walk has any rule to look for (none: no file is a denied one's other name). */
  get hasRules(): boolean {
    return this.rules.length > 0;
  }

  /** The denied files with several links, by `dev:ino`; undefined when the walk was cut short. */
  find(): Map<string, Found> | undefined {
    // The denied files deleted since are forgotten at the walk's end, of those it did not meet and its
    // own rules remembered: a file met at a denied name has a name (denied-memory.ts, Pruning).
    this.memory.beginWalk();
    try {
      return this.walk();
    } finally {
      this.memory.endWalk((f) => this.raws.has(f.rule));
    }
  }

  /** The rules' texts: a row of the memory made by one of them is this walk's to prune. */
  private readonly raws: ReadonlySet<string>;

  private walk(): Map<string, Found> | undefined {
    const rules = this.rules;
    const out = new Map<string, Found>();
    const note = (p: string, rule: PermissionRule): void => {
      let st: fs.Stats;
      try {
        st = fs.statSync(p);
      } catch {
        return;
      }
      if (!st.isFile()) return;
      this.memory.note(st, p, rule.raw, (q) => sameFile(q, st));
      if (st.nlink > 1) out.set(`${st.dev}:${st.ino}`, { rule, other: p });
    };
    // Each prefix once, and none below another one walked (`.env` and `./secrets/**` both start in the working directory).
    const prefixes = [...new Set(rules.map((r) => r.prefix))].sort((a, b) => a.length - b.length);
    const roots = prefixes.filter((p, i) => !prefixes.slice(0, i).some((q) => q === '/' || p.startsWith(`${q}/`)));
    this.listedNow = 0;
    let kept = 0;
    const seen = new Set<string>();
    let complete = true;
    for (const root of roots) {
      let st: fs.Stats;
      try {
        st = fs.lstatSync(root);
      } catch {
        continue;
      }
      if (!st.isDirectory()) {
        const rule = this.covering(root);
        if (rule) note(root, rule);
        continue;
      }
      // Breadth first, symlinks not followed: a file reached through one is also where it really lies.
      const queue = [root];
      for (let at = 0; at < queue.length; at++) {
        const dir = queue[at]!;
        const listing = this.listing(dir);
        if (listing === undefined) continue;
        if (listing === 'cut') {
          complete = false;
          break;
        }
        seen.add(dir);
        kept += listing.entries;
        if (kept > WALK_KEPT_LIMIT) return undefined;
        for (const c of listing.covered) note(c.path, c.rule);
        for (const d of listing.subdirs) queue.push(d);
      }
      if (!complete) break;
    }
    if (!complete) return undefined;
    // Directories gone (or no longer below a root): their listings go too.
    for (const d of this.listings.keys()) if (!seen.has(d)) this.listings.delete(d);
    return out;
  }

  /** Entries listed anew by the check under way. */
  private listedNow = 0;

  /**
   * The directory's listing, kept or made now; undefined when it cannot be listed; 'cut' once this
   * check has listed WALK_LIMIT entries anew (what it listed is kept: the next check goes on from there).
   */
  private listing(dir: string): Listing | undefined | 'cut' {
    let st: fs.BigIntStats | undefined;
    try {
      st = fs.lstatSync(dir, { bigint: true });
    } catch {
      st = undefined;
    }
    if (!st?.isDirectory()) {
      this.listings.delete(dir);
      return undefined;
    }
    const kept = this.listings.get(dir);
    if (kept && kept.settled && kept.dev === st.dev && kept.ino === st.ino && kept.mtimeNs === st.mtimeNs && kept.ctimeNs === st.ctimeNs) return kept;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      this.listings.delete(dir);
      return undefined;
    }
    // A name that is not UTF-8 comes back with U+FFFD: what lies below it cannot be listed, nor a
    // denied file there known by identity (a hard link to `$'\xff'/.env` elsewhere): not settled.
    if (entries.some((e) => e.name.includes('\ufffd'))) {
      this.listings.delete(dir);
      return 'cut';
    }
    this.listedNow += entries.length;
    const listing: Listing = {
      dev: st.dev,
      ino: st.ino,
      mtimeNs: st.mtimeNs,
      ctimeNs: st.ctimeNs,
      settled: settledNow(st),
      entries: entries.length,
      subdirs: [],
      covered: [],
    };
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (this.enters(p)) listing.subdirs.push(p);
      } else if (e.isFile()) {
        const rule = this.covering(p);
        if (rule) listing.covered.push({ path: p, rule });
      }
    }
    this.listings.set(dir, listing);
    return this.listedNow > WALK_LIMIT ? 'cut' : listing;
  }

  private covering(p: string): PermissionRule | undefined {
    return this.rules.find((r) => r.matches(p))?.rule;
  }

  /** A directory may hold a covered file when some rule says so (a rule that cannot tell: every directory). */
  private enters(dir: string): boolean {
    return this.rules.some((r) => r.enters?.(dir) ?? true);
  }
}

/**
 * A check of real paths against these deny rules by identity: the denied
 * file a path is another name of, `unknown` when that could not be settled,
 * undefined when it is none (or has a single name). The denied files are
 * looked for once, on the first path with several names (or the first
 * `anyLinked()`, which says whether any denied file has several names, or
 * whether that could not be settled: when none has, no other file needs a stat).
 */
export type HardLinkCheck = ((abs: string) => HardLinkVerdict | undefined) & {
  anyLinked(): boolean;
  /** Walks now, so that the denied files are known by identity before a command that may rename or link them runs. */
  meet(): void;
};

/** A check against the deny rules a walk looks for (a RuleIndex keeps one walk per kind), or against these rules with a walk of their own. */
export function hardLinkChecker(from: readonly DenyRuleEntry[] | DeniedLinkWalk): HardLinkCheck {
  const walk = from instanceof DeniedLinkWalk ? from : new DeniedLinkWalk(from);
  const any = walk.hasRules;
  let ids: Map<string, Found> | undefined | null = null;
  const found = (): Map<string, Found> | undefined => (ids === null ? (ids = walk.find()) : ids);
  const check = (abs: string): HardLinkVerdict | undefined => {
    if (!any) return undefined;
    let st: fs.Stats | undefined;
    try {
      st = memoFs.stat(abs);
    } catch {
      return undefined;
    }
    if (!st?.isFile()) return undefined;
    // A denied file met before that has since lost its denied name, whatever its link count now.
    const was = walk.formerly(st, abs);
    if (was && was.other !== abs && !sameFile(was.other, st)) return was;
    // A denied file met past the memory's limit may be this one: not remembered, it cannot be told.
    if (!was && walk.mayBeForgotten(st, abs)) return { unknown: true, forgotten: true };
    if (st.nlink < 2) return undefined;
    const known = found();
    if (known === undefined) return { unknown: true };
    const hit = known.get(`${st.dev}:${st.ino}`);
    return hit && hit.other !== abs ? hit : undefined;
  };
  return Object.assign(check, {
    anyLinked: () => any && ((found()?.size ?? 1) > 0 || walk.displaced()),
    meet: () => {
      if (any) found();
    },
  });
}
