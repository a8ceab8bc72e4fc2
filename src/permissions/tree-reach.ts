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
 * walked too, once); a file is stat'ed only when a denied file has several
 * names. Past TREE_LIMIT entries, what the tree reaches cannot be known.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HardLinkCheck } from './hard-links.js';

export const TREE_LIMIT = 50_000;

export interface TreeDeps {
  /** Where a path really leads. */
  canonical(p: string): string;
  /** A Read deny rule (or toolexec's own files) covers this path. */
  readDenied(abs: string): boolean;
  /** The Read deny rule that may cover something at or below this directory. */
  deniedBelow(dir: string): string | undefined;
  links: HardLinkCheck;
}

export type TreeEscape = { path: string; why: string } | { unknown: true };

export function treeEscape(dir: string, deps: TreeDeps): TreeEscape | undefined {
  try {
    if (!fs.statSync(dir).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const statFiles = deps.links.anyLinked();
  const seen = new Set<string>([deps.canonical(dir)]);
  const queue = [dir];
  let budget = TREE_LIMIT;
  for (let at = 0; at < queue.length; at++) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(queue[at]!, { withFileTypes: true });
    } catch {
      continue;
    }
    budget -= entries.length;
    if (budget < 0) return { unknown: true };
    for (const e of entries) {
      const p = path.join(queue[at]!, e.name);
      if (e.isDirectory()) {
        queue.push(p);
        continue;
      }
      let file = p;
      if (e.isSymbolicLink()) {
        const target = deps.canonical(p);
        if (deps.readDenied(target)) return { path: p, why: `a symbolic link to ${target}, which a Read deny rule covers` };
        let st: fs.Stats;
        try {
          st = fs.statSync(target);
        } catch {
          continue;
        }
        if (st.isDirectory()) {
          const rule = deps.deniedBelow(target);
          if (rule) return { path: p, why: `a symbolic link to ${target}, where the rule ${rule} denies files` };
          if (!seen.has(target)) {
            seen.add(target);
            queue.push(target);
          }
          continue;
        }
        if (!st.isFile()) continue;
        file = target;
      } else if (!e.isFile()) continue;
      if (!statFiles) continue;
      const link = deps.links(file);
      if (link && 'unknown' in link) return { unknown: true };
      if (link) return { path: p, why: `a hard link to ${link.other}, which ${link.rule.raw} denies` };
    }
  }
  return undefined;
}
