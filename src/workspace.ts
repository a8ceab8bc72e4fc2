/**
 * The directories tools may touch: the workspace root and the additional
 * directories. Paths are compared after canonicalising: `..` and repeated
 * slashes resolved, symlinks followed (for the longest existing prefix, so a
 * file about to be created is judged by its real parent), Unicode folded to
 * NFC, and case folded where the file system folds it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** realpath of the longest existing prefix, with the rest appended. */
export function realpathLoose(p: string): string {
  const abs = path.resolve(p);
  let head = abs;
  const tail: string[] = [];
  for (let i = 0; i < 4096; i++) {
    try {
      const real = fs.realpathSync.native(head);
      return tail.length === 0 ? real : path.join(real, ...tail.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return abs;
      tail.push(path.basename(head));
      head = parent;
    }
  }
  return abs;
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

export class Workspace {
  readonly root: string;
  readonly roots: readonly string[];
  readonly caseInsensitive: boolean;
  readonly home: string;

  constructor(root: string, additional: readonly string[] = []) {
    this.root = realpathLoose(root);
    const extra = additional.map((d) => realpathLoose(path.resolve(this.root, expandHome(d))));
    this.roots = [this.root, ...extra.filter((d) => d !== this.root)];
    this.caseInsensitive = probeCaseInsensitive(this.root);
    this.home = os.homedir();
  }

  /** Absolute path of `p` seen from `cwd` (not canonical). */
  resolve(p: string, cwd: string = this.root): string {
    return path.resolve(cwd, expandHome(p));
  }

  /** The canonical form used for every comparison. */
  canonical(p: string, cwd: string = this.root): string {
    const real = realpathLoose(this.resolve(p, cwd)).normalize('NFC');
    return this.caseInsensitive ? real.toLowerCase() : real;
  }

  /** Whether `p` (after canonicalising) lies in one of the roots. */
  contains(p: string, cwd: string = this.root): boolean {
    const c = this.canonical(p, cwd);
    for (const r of this.roots) {
      const rc = this.caseInsensitive ? r.normalize('NFC').toLowerCase() : r.normalize('NFC');
      if (c === rc || c.startsWith(rc.endsWith(path.sep) ? rc : rc + path.sep)) return true;
    }
    return false;
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
