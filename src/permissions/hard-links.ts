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
 * checker (one decision, one search): found below each rule's fixed prefix
 * (`./.env` is one stat; a bare `.env` walks the working directory;
 * `~/.ssh/**` walks ~/.ssh), with directory entries listed without a stat
 * each and only a name a rule covers stat'ed. A directory is entered only
 * when something a rule covers may lie in it: a rule without `**` below its
 * prefix covers names at a fixed depth (`./.env.*` lists the working
 * directory alone, not node_modules below it, whose pnpm files all have
 * several names). The walk stops after WALK_LIMIT
 * entries: past it, whether a file is a denied one cannot be known (the
 * caller asks, or hides the file).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PathMatcher } from './path-rules.js';
import type { PermissionRule } from './types.js';

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

export type HardLinkVerdict =
  /** The file is also `other`, which `rule` denies. */
  | { rule: PermissionRule; other: string }
  /** The walk was cut short: the file may be a denied one. */
  | { unknown: true };

/** Whether `abs` is a regular file with other names, and its identity. */
function linkedFile(abs: string): fs.Stats | undefined {
  try {
    const st = fs.statSync(abs);
    return st.isFile() && st.nlink > 1 ? st : undefined;
  } catch {
    return undefined;
  }
}

type Found = { rule: PermissionRule; other: string };

/** The denied files with several links, by `dev:ino`; undefined when the walk was cut short. */
function deniedLinkedFiles(rules: readonly DenyRuleEntry[]): Map<string, Found> | undefined {
  const out = new Map<string, Found>();
  const covering = (p: string): PermissionRule | undefined => rules.find((r) => r.matches(p))?.rule;
  // A directory may hold a covered file when some rule says so (a rule that cannot tell: every directory).
  const enter = (dir: string): boolean => rules.some((r) => r.enters?.(dir) ?? true);
  const note = (p: string, rule: PermissionRule): void => {
    const st = linkedFile(p);
    if (st) out.set(`${st.dev}:${st.ino}`, { rule, other: p });
  };
  // Each prefix once, and none below another one walked (`.env` and `./secrets/**` both start in the working directory).
  const prefixes = [...new Set(rules.map((r) => r.prefix))].sort((a, b) => a.length - b.length);
  const roots = prefixes.filter((p, i) => !prefixes.slice(0, i).some((q) => q === '/' || p.startsWith(`${q}/`)));
  let budget = WALK_LIMIT;
  for (const root of roots) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(root);
    } catch {
      continue;
    }
    if (!st.isDirectory()) {
      const rule = covering(root);
      if (rule) note(root, rule);
      continue;
    }
    // Breadth first, symlinks not followed: a file reached through one is also where it really lies.
    const queue = [root];
    for (let at = 0; at < queue.length; at++) {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(queue[at]!, { withFileTypes: true });
      } catch {
        continue;
      }
      budget -= entries.length;
      if (budget < 0) return undefined;
      for (const e of entries) {
        const p = path.join(queue[at]!, e.name);
        if (e.isDirectory()) {
          if (enter(p)) queue.push(p);
        }
        else if (e.isFile()) {
          const rule = covering(p);
          if (rule) note(p, rule);
        }
      }
    }
  }
  return out;
}

/**
 * A check of real paths against these deny rules by identity: the denied
 * file a path is another name of, `unknown` when that could not be settled,
 * undefined when it is none (or has a single name). The denied files are
 * looked for once, on the first path with several names (or the first
 * `anyLinked()`, which says whether any denied file has several names, or
 * whether that could not be settled: when none has, no other file needs a stat).
 */
export type HardLinkCheck = ((abs: string) => HardLinkVerdict | undefined) & { anyLinked(): boolean };

export function hardLinkChecker(rules: readonly DenyRuleEntry[]): HardLinkCheck {
  let ids: Map<string, Found> | undefined | null = null;
  const found = (): Map<string, Found> | undefined => (ids === null ? (ids = deniedLinkedFiles(rules)) : ids);
  const check = (abs: string): HardLinkVerdict | undefined => {
    if (rules.length === 0) return undefined;
    const st = linkedFile(abs);
    if (!st) return undefined;
    const known = found();
    if (known === undefined) return { unknown: true };
    const hit = known.get(`${st.dev}:${st.ino}`);
    return hit && hit.other !== abs ? hit : undefined;
  };
  return Object.assign(check, { anyLinked: () => rules.length > 0 && (found()?.size ?? 1) > 0 });
}
