/**
 * Which files a search visits, decided as ripgrep 13 decides it with the
 * flags the rg engine passes (rg-engine.ts), so that the JavaScript walker
 * visits exactly the same files:
 *
 *   --hidden --no-ignore-global --no-ignore-exclude --no-config
 *   --glob !.git --glob !.svn --glob !.hg --glob !.bzr --glob !.jj --glob !.sl
 *   --glob !.toolexec  [--glob <user glob>…]  [--type-add sel:<glob>… --type sel]
 *
 * For an entry below the search root (the root itself is never filtered):
 *   1. Override globs (the `--glob`s above, gitignore syntax inverted: a plain
 *      glob includes, `!glob` excludes; last match wins). A match decides. If
 *      there are include globs, a file (not a directory) matching none is out.
 *   2. Ignore files: `.rgignore`, then `.ignore`, then `.gitignore`, each kind
 *      taking the match of the nearest directory first, from the entry's
 *      directory up to the file-system root (rg reads the search root's parents
 *      too). `.gitignore` files count only inside a git repository (a directory
 *      with `.git` on the way up), and not above the nearest repository root.
 *      An ignored directory is not entered, so nothing under it comes back.
 *   3. The `type`: a file whose name matches none of the type's globs is out.
 *
 * Hidden files are searched (`--hidden`, as Claude Code does); the global git
 * excludes file and `.git/info/exclude` are not read (so results do not depend
 * on the service's environment); symbolic links are not followed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { compileGlob, globSubject, IgnoreMatcher, parseIgnoreLine, type IgnoreGlob, type MatchResult } from './glob.js';
import { FILE_TYPES } from './file-types.js';
import { readRegularFile } from './file-scan.mjs';

/** Directories never searched (version-control data, and toolexec's own). */
export const EXCLUDED_DIRS: readonly string[] = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl', '.toolexec'];

/** Ignore files, highest precedence first. */
const IGNORE_FILES = ['.rgignore', '.ignore', '.gitignore'] as const;

/** The user's `glob` parameter as Claude Code splits it: on whitespace, and on commas outside braces. */
export function splitGlobParam(glob: string | undefined): string[] {
  if (!glob) return [];
  const out: string[] = [];
  for (const raw of glob.split(/\s+/)) {
    if (raw.length === 0) continue;
    if (raw.includes('{') && raw.includes('}')) out.push(raw);
    else out.push(...raw.split(',').filter((s) => s.length > 0));
  }
  return out;
}

/** The override globs of a search: the exclusions, then the user's globs. */
export function overrideGlobs(userGlobs: readonly string[]): string[] {
  return [...EXCLUDED_DIRS.map((d) => `!${d}`), ...userGlobs];
}

export class Overrides {
  private readonly globs: IgnoreGlob[];
  private readonly includes: number;

  /** Throws GlobError for a glob that does not parse. */
  constructor(globs: readonly string[]) {
    this.globs = [];
    for (const g of globs) {
      const parsed = parseIgnoreLine(g);
      if (parsed) this.globs.push(parsed);
    }
    // In gitignore terms a plain glob "ignores"; as an override it includes.
    this.includes = this.globs.filter((g) => !g.whitelist).length;
  }

  match(rel: string, isDir: boolean): MatchResult {
    for (let i = this.globs.length - 1; i >= 0; i--) {
      const g = this.globs[i]!;
      if (g.onlyDir && !isDir) continue;
      if (g.re.test(rel)) return g.whitelist ? 'ignore' : 'whitelist';
    }
    if (this.includes > 0 && !isDir) return 'ignore';
    return undefined;
  }
}

/** A selected file type: its globs, matched against the file's name. */
export class TypeFilter {
  private readonly res: RegExp[];
  constructor(readonly globs: readonly string[]) {
    this.res = globs.map((g) => compileGlob(g, { literalSeparator: false }));
  }
  matchesName(name: string): boolean {
    const s = globSubject(name);
    return this.res.some((r) => r.test(s));
  }
}

export function typeGlobs(type: string): readonly string[] | undefined {
  return Object.hasOwn(FILE_TYPES, type) ? FILE_TYPES[type] : undefined;
}

/** One directory's ignore files and whether it is a repository root. */
export interface DirRules {
  readonly dir: string;
  readonly parent: DirRules | undefined;
  readonly matchers: ReadonlyArray<IgnoreMatcher | undefined>;
  readonly hasGit: boolean;
  /** Some directory from here up has `.git`: .gitignore files apply. */
  readonly anyGit: boolean;
}

/** Ignore files larger than this are not read (nobody writes one; /dev/zero behind a symlink never ends). */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

function readIgnore(dir: string, name: string): IgnoreMatcher | undefined {
  // Read on the main thread: a FIFO or a device in its place (a symlink in a cloned repository) must neither block nor run on.
  const buf = readRegularFile(path.join(dir, name), MAX_IGNORE_FILE_BYTES);
  if (buf === undefined) return undefined;
  const text = buf.toString('utf8');
  const m = IgnoreMatcher.fromText(dir, text);
  return m.empty ? undefined : m;
}

/**
 * The rules of a directory. `names` (its entries, when already listed) avoids
 * probing for ignore files that are not there.
 */
export function dirRules(dir: string, parent: DirRules | undefined, names?: ReadonlySet<string>): DirRules {
  const matchers = IGNORE_FILES.map((f) => (names && !names.has(f) ? undefined : readIgnore(dir, f)));
  const hasGit = names ? names.has('.git') : fs.existsSync(path.join(dir, '.git'));
  return { dir, parent, matchers, hasGit, anyGit: hasGit || (parent?.anyGit ?? false) };
}

/** The rules of a search root's ancestors, from the file-system root down. */
export function ancestorRules(root: string): DirRules | undefined {
  const chain: string[] = [];
  for (let d = path.dirname(root); ; d = path.dirname(d)) {
    chain.push(d);
    if (path.dirname(d) === d) break;
  }
  let rules: DirRules | undefined;
  for (const d of chain.reverse()) rules = dirRules(d, rules);
  return rules;
}

function relTo(dir: string, abs: string): string {
  if (dir === '/') return abs.slice(1);
  return abs.slice(dir.length + 1);
}

/**
 * What the ignore files say about `abs` (an entry of `rules.dir`). `anyGit`
 * is judged from the entry's own directory up, as rg does.
 */
export function ignoreMatch(rules: DirRules, abs: string, isDir: boolean): MatchResult {
  const found: MatchResult[] = [undefined, undefined, undefined];
  const anyGit = rules.anyGit;
  let sawGit = false;
  for (let r: DirRules | undefined = rules; r; r = r.parent) {
    let rel: string | undefined;
    for (let k = 0; k < 3; k++) {
      if (found[k] !== undefined) continue;
      if (k === 2 && (!anyGit || sawGit)) continue;
      const m = r.matchers[k];
      if (!m) continue;
      rel ??= globSubject(relTo(r.dir, abs));
      found[k] = m.match(rel, isDir);
    }
    sawGit ||= r.hasGit;
  }
  return found[0] ?? found[1] ?? found[2];
}

export interface EntryFilter {
  overrides: Overrides;
  type: TypeFilter | undefined;
}

/** Whether the walk keeps an entry of `rules.dir` (see the module comment). */
export function keepEntry(f: EntryFilter, rules: DirRules, root: string, abs: string, name: string, isDir: boolean): boolean {
  const o = f.overrides.match(globSubject(relTo(root, abs)), isDir);
  if (o === 'whitelist') return true;
  if (o === 'ignore') return false;
  if (ignoreMatch(rules, abs, isDir) === 'ignore') return false;
  if (f.type && !isDir && !f.type.matchesName(name)) return false;
  return true;
}
