/**
 * Read and Edit rule specifiers in gitignore style, with Claude Code's anchors:
 *   `//p`  absolute path p
 *   `~/p`  relative to the home directory
 *   `/p`   relative to the settings file's root (the workspace root for
 *          configured rules)
 *   `./p`, `p`  relative to the working directory; a pattern without a `/`
 *          matches at any depth, as in .gitignore
 * A pattern that names a directory covers everything below it, and a
 * trailing `/**` also covers the directory itself. Paths are matched in their
 * canonical form (.., repeated slashes, symlinks, Unicode NFC, case where the
 * file system folds it) and in their spelling as given.
 */
import path from 'node:path';
import picomatch from 'picomatch';

export interface PathBase {
  /** Root for `/p` rules. */
  root: string;
  /** Working directory for `./p` and bare rules. */
  cwd: string;
  home: string;
  caseInsensitive: boolean;
}

export type PathMatcher = (absPath: string) => boolean;

function escapeGlob(p: string): string {
  return p.replace(/[*?[\]{}()!+@\\]/g, '\\$&');
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
  } else {
    if (s.startsWith('./')) s = s.slice(2);
    prefix = escapeGlob(base.cwd);
    const body = s.endsWith('/') ? s.slice(0, -1) : s;
    rel = body.includes('/') ? `/${s}` : `/**/${s}`;
  }
  let glob = prefix + rel;
  glob = glob.replace(/\/{2,}/g, '/');
  if (glob.endsWith('/')) glob += '**';
  return glob;
}

export function compilePathRule(spec: string, base: PathBase): PathMatcher {
  const glob = specifierToGlob(spec, base);
  const opts = { dot: true, nocase: base.caseInsensitive };
  const globs = [glob];
  // A rule naming a directory covers what lies below it; `dir/**` covers the directory too.
  if (glob.endsWith('/**')) globs.push(glob.slice(0, -3));
  else globs.push(`${glob}/**`);
  const m = picomatch(globs, opts);
  return (p) => m(path.normalize(p).normalize('NFC'));
}
