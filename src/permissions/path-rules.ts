/**
 * Read and Edit rule specifiers in gitignore style, with Claude Code's anchors:
 *   `//p`  absolute path p
 *   `~/p`  relative to the home directory
 *   `/p`   relative to the settings file's root (the workspace root for
 *          configured rules)
 *   `./p`  the same as `p` (Claude Code drops the `./`)
 *   `p`    relative to the working directory; a pattern without an inner `/`
 *          matches at any depth below it, as in .gitignore (`.env`,
 *          `./.env`, `*.pem`); one with an inner `/` is anchored there
 *          (`config/.env`, `./config/.env`)
 * A pattern that names a directory covers everything below it, and a
 * trailing `/**` also covers the directory itself. Paths are matched in their
 * canonical form (.., repeated slashes, symlinks, Unicode NFC, case where the
 * file system folds it) and in their spelling as given; a rule whose fixed
 * prefix runs through a symlink (a symlinked home, macOS's /tmp) is also
 * matched with that prefix resolved.
 */
import path from 'node:path';
import picomatch from 'picomatch';
import { realpathLoose } from '../workspace.js';

export interface PathBase {
  /** Root for `/p` rules. */
  root: string;
  /** Working directory for `./p` and bare rules. */
  cwd: string;
  home: string;
  caseInsensitive: boolean;
}

export type PathMatcher = (absPath: string) => boolean;

/**
 * A literal path as a glob. `|` and `"` count too: picomatch reads `|` as an alternation and a `"` as a
 * quote even outside parentheses, so under a workspace at `/srv/a|b` every rule came out matching nothing.
 */
export function escapeGlob(p: string): string {
  return p.replace(/[*?[\]{}()!+@\\|"]/g, '\\$&');
}

/** The absolute glob a specifier stands for. */
export function specifierToGlob(spec: string, base: PathBase): string {
  let s = spec.normalize('NFC');
  let prefix: string;
  let rel: string;
  if (s.startsWith('//')) {
    prefix = '';
    rel = s.slice(1);
  } else if (s === '~' || s.startsWith('~/')) {
    prefix = escapeGlob(base.home);
    rel = s.slice(1);
  } else if (s.startsWith('/')) {
    prefix = escapeGlob(base.root);
    rel = s;
  } else if (s === '.' || s === './') {
    prefix = escapeGlob(base.cwd);
    rel = '/';
  } else {
    // Claude Code drops a leading `./` and matches the rest as a bare pattern
    // (filesystem.ts patternWithRoot), so `./.env` is `.env`, at any depth,
    // and `./config/.env` is anchored by its inner `/`.
    if (s.startsWith('./')) s = s.slice(2);
    prefix = escapeGlob(base.cwd);
    const body = s.endsWith('/') ? s.slice(0, -1) : s;
    rel = body.includes('/') ? `/${s}` : `/**/${s}`;
  }
  let glob = prefix + rel;
  const dirOnly = glob.endsWith('/');
  // `..` and `.` segments and repeated slashes are resolved, as they are in the paths matched.
  glob = path.posix.normalize(glob);
  if (glob.length > 1 && glob.endsWith('/')) glob = glob.slice(0, -1);
  if (dirOnly || glob === '/') glob = glob === '/' ? '/**' : `${glob}/**`;
  return glob;
}

/** The glob with its fixed (wildcard-free) directory prefix resolved through symlinks, if that changes it. */
function realPrefixVariant(glob: string): string | undefined {
  const scan = picomatch.scan(glob);
  const fixed = scan.base;
  if (!fixed || fixed === '/' || !path.isAbsolute(fixed)) return undefined;
  // picomatch's base keeps escapes; only unescaped prefixes are resolved.
  if (fixed.includes('\\')) return undefined;
  const real = realpathLoose(fixed).normalize('NFC');
  if (real === fixed) return undefined;
  return escapeGlob(real) + glob.slice(fixed.length);
}

/**
 * `asWritten`: the rule is not also matched with its fixed prefix resolved through symlinks. That
 * variant is read from the file system when the rule is compiled, which may be long after the rule was
 * written (another rule remembered, a restart): a symlink put in its path by then carries the rule to
 * wherever it leads.
 */
export function compilePathRule(spec: string, base: PathBase, asWritten = false): PathMatcher {
  const glob = specifierToGlob(spec, base);
  const opts = { dot: true, nocase: base.caseInsensitive };
  const globs: string[] = [];
  for (const g of [glob, asWritten ? undefined : realPrefixVariant(glob)]) {
    if (g === undefined) continue;
    globs.push(g);
    // A rule naming a directory covers what lies below it; `dir/**` covers the directory too.
    globs.push(g.endsWith('/**') ? g.slice(0, -3) || '/' : `${g}/**`);
  }
  const m = picomatch(globs, opts);
  return (p) => m(path.normalize(p).normalize('NFC'));
}

/**
 * Whether a specifier names one absolute path and nothing else (`//p` without a wildcard): a rule an
 * approver's `remember` keeps for one file (approval-broker.ts suggestRule).
 */
export function isLiteralAbsolute(spec: string): boolean {
  return spec.startsWith('//') && !picomatch.scan(specifierToGlob(spec, { root: '/', cwd: '/', home: '/', caseInsensitive: false })).isGlob;
}

/**
 * A specifier's glob split at its fixed (wildcard-free) directory prefix, unescaped (`/` when there is
 * none), and the pattern below it (empty when the whole glob is fixed).
 */
export function fixedPrefix(spec: string, base: PathBase): { prefix: string; rest: string } {
  const scan = picomatch.scan(specifierToGlob(spec, base));
  return { prefix: scan.base.replace(/\\(.)/g, '$1') || '/', rest: scan.glob };
}

/**
 * Whether something a specifier covers may lie at or below a directory (an
 * absolute path): a walk looking for the files a rule covers need not enter a
 * directory for which this is false. True when the rule's fixed prefix lies
 * at or below the directory; false for a directory neither above nor below
 * the prefix; below the prefix, the rest of the pattern is compared segment
 * by segment: `/.env.*` (the root, then `.env.*`) covers
 * nothing below `node_modules`, while a directory whose components match
 * every segment is covered whole (a rule naming a directory covers what lies
 * below it). A `**` segment ends the comparison: any directory past it may
 * hold a match. A pattern with braces, parentheses (which may span segments)
 * or `!` is not compared: every directory below the prefix may hold a match.
 * Paths are compared as the matcher compares them (NFC, case folded where
 * the file system folds it).
 */
export function compileDirFilter(spec: string, base: PathBase): PathMatcher {
  const fold = (p: string): string => (base.caseInsensitive ? p.normalize('NFC').toLowerCase() : p.normalize('NFC'));
  const fixed = fixedPrefix(spec, base);
  const prefix = fold(fixed.prefix);
  const rest = fixed.rest;
  const opts = { dot: true, nocase: base.caseInsensitive };
  const whole = rest === '' || /[{}()!]/.test(rest);
  const segments = whole ? [] : rest.split('/').map((seg) => (seg.includes('**') ? undefined : picomatch(seg, opts)));
  // Nothing to compare below the prefix (`**` right below it, or a pattern not compared).
  const any = whole || segments[0] === undefined;
  return (dir) => {
    const d = fold(path.normalize(dir));
    if (d === prefix || prefix === '/') {
      if (d === prefix || any) return true;
    } else if (prefix.startsWith(d === '/' ? '/' : `${d}/`)) return true;
    else if (!d.startsWith(`${prefix}/`)) return false;
    if (any) return true;
    const parts = d.slice(prefix === '/' ? 1 : prefix.length + 1).split('/');
    for (let i = 0; i < parts.length; i++) {
      if (i >= segments.length) return true;
      const m = segments[i];
      if (m === undefined) return true;
      if (!m(parts[i]!)) return false;
    }
    return true;
  };
}
