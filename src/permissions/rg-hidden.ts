/**
 * ripgrep's hidden files: `rg PATTERN [DIR]` skips every file and directory
 * whose name starts with `.` below the trees it walks (`.env`, `config/.env`),
 * unless told otherwise. With `Read(./.env)` denied, `rg TODO` at the
 * project root, where .env lies, asked as a read of a tree holding a denied
 * file, though rg does not open it. The tree listing (tree-reach.ts) skips
 * such names for an rg that skips them.
 *
 * What makes rg read a hidden name, each of which keeps every name counted:
 * `--hidden`, `-.`, `-uu`; a glob or type that whitelists (`-g '.env'`,
 * `-t`, `--type-add`, which take precedence over hiddenness; a glob that
 * excludes, `-g '!node_modules'`, does not); an extra
 * `--ignore-file`; a configuration file (RIPGREP_CONFIG_PATH, in the
 * service's environment or anywhere on the line); an ignore file with a `!`
 * line (a whitelist un-hides too: ripgrep's ignore crate applies hiddenness
 * only to a path no ignore rule matched), in the tree (.gitignore, .ignore,
 * .rgignore, a repository's info/exclude), in a directory above it (rg reads
 * those), or git's global excludes file; another command of the line that is
 * not read-only, or a write of the line that may be an ignore file (`echo
 * '!.env' > .ignore && rg KEY`: it may write one first); a wrapper, an expansion, or an
 * option cluster holding `.`, `u`, `g` or `t`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readSmallText } from '../util/read-small-file.js';
import type { SimpleCommand } from '../bash/types.js';

export const IGNORE_FILES: ReadonlySet<string> = new Set(['.gitignore', '.ignore', '.rgignore']);
/** Longest ignore file read, here and by git-staging.ts; a longer one counts as whitelisting here, as ignoring nothing there. */
export const IGNORE_MAX_BYTES = 256 * 1024;

/** Whether rg, as the command runs it, skips hidden names (its options and environment allowing). */
export function rgSkipsHidden(cmd: SimpleCommand, raw: string, env: NodeJS.ProcessEnv): boolean {
  const argv = cmd.argv;
  if (argv[0]?.value !== 'rg' || !argv[0].literal || cmd.assignments.length > 0) return false;
  if (env.RIPGREP_CONFIG_PATH !== undefined || raw.includes('RIPGREP_CONFIG_PATH')) return false;
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (!w.literal) return false;
    if (w.value === '--') break;
    // A glob that excludes (`-g '!node_modules'`) whitelists nothing.
    const glob = /^(?:-g|--glob|--iglob)$/.test(w.value) ? argv[++i] : undefined;
    if (glob !== undefined) {
      if (!glob.literal || !glob.value.startsWith('!')) return false;
      continue;
    }
    const attached = /^(?:-g|--glob=|--iglob=)(.*)$/s.exec(w.value);
    if (attached) {
      if (!attached[1]!.startsWith('!')) return false;
      continue;
    }
    if (/^--(hidden|glob|iglob|type|type-add|ignore-file|unrestricted)(=|$)/.test(w.value)) return false;
    // An abbreviation rg might take for one of them.
    if (/^--(h|hi|hid|hidd|hidde|g|gl|glo|ig|igl|iglo|ty|typ|ign|igno|ignor|un|unr)(=|$)/.test(w.value)) return false;
    if (/^-[^-]/.test(w.value) && /[.ugt]/.test(w.value.slice(1))) return false;
  }
  return true;
}

/**
 * Whether a write of the line may be an ignore file rg reads (`echo '!.env' > .ignore && rg KEY`):
 * one of their names, a repository's or git's own files (info/exclude, the global `git/ignore`), or a
 * place not known. `rg TODO > todo.txt` is not.
 */
export function mayWriteIgnoreFile(abs: readonly string[], uncertain: boolean): boolean {
  if (uncertain || abs.length === 0) return true;
  for (const p of abs) {
    let real = p;
    try {
      real = fs.realpathSync(p);
    } catch {
      // Not there yet: the name as written.
    }
    for (const q of [p, real]) {
      const base = path.basename(q);
      if (IGNORE_FILES.has(base) || base === 'exclude' || base === 'ignore' || /\/\.?git(\/|$)/.test(q)) return true;
    }
  }
  return false;
}

/** Whether an ignore file may whitelist a name (a `!` line), or cannot be read to tell. */
export function ignoreFileWhitelists(file: string): boolean {
  let text: string;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (st.size > IGNORE_MAX_BYTES) return true;
    // Non-blocking and regular files only, to the cap: it may have become a FIFO since the stat.
    text = readSmallText(file, IGNORE_MAX_BYTES, true);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  return /^[ \t]*!/m.test(text);
}

/** A repository's exclude file where `.git` is a directory; a `.git` file (a worktree, a submodule) points elsewhere: unknown. */
export function gitExcludeWhitelists(dotGit: string): boolean {
  try {
    if (!fs.lstatSync(dotGit).isDirectory()) return true;
  } catch {
    return false;
  }
  return ignoreFileWhitelists(path.join(dotGit, 'info', 'exclude'));
}

/**
 * Whether something rg reads for a walk below `dir` but outside it may whitelist a name: the ignore
 * files of the directories above it (and their repositories' exclude files), and git's global
 * excludes file (`core.excludesFile`, which a user configuration may name: then not known).
 */
export function outerIgnoreWhitelists(dir: string, home: string, env: NodeJS.ProcessEnv): boolean {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    for (const f of IGNORE_FILES) if (ignoreFileWhitelists(path.join(d, f))) return true;
    if (gitExcludeWhitelists(path.join(d, '.git'))) return true;
    if (d === path.dirname(d)) break;
  }
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  for (const cfg of [path.join(home, '.gitconfig'), path.join(xdg, 'git', 'config')]) {
    try {
      // A FIFO or a link to /dev/zero in its place must not hold the event loop: unreadable is 'may'.
      if (/excludesfile|\[include/i.test(readSmallText(cfg, 4 << 20, true))) return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return true;
    }
  }
  return ignoreFileWhitelists(path.join(xdg, 'git', 'ignore'));
}
