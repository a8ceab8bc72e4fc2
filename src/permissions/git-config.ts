/**
 * The git configuration files a git command reads or writes.
 *
 * Reads: the files whose values a git command prints: `git config
 * --list` / `--get` (all of them, or the scope it names), `git var -l` and
 * `git remote -v` / `get-url` (remote URLs, where a token often sits). A Read
 * deny rule on one (`Read(./.git/config)`, which CI checkouts fill with an
 * `http.extraHeader` holding a token; `Read(~/.gitconfig)`) holds against
 * these commands too. They are judged by the deny check only: every git
 * command reads its own configuration, outside the working directories too,
 * and that is not an access to ask about. Files pulled in by `include.path`
 * are not followed.
 *
 * Writes: `git config NAME VALUE` (and --add, --unset, --edit, `git config
 * set`, …) writes the repository's `.git/config` (or ~/.gitconfig, or the
 * --file): a protected path, where `core.hooksPath`, `core.fsmonitor`,
 * `core.pager` or an alias runs a program on a later git command. It asks
 * like an edit of that file does, even in bypassPermissions, except for a
 * key that can do none of that (`user.email`, `init.defaultBranch`: INERT_KEYS).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseGitGlobals } from '../bash/git-globals.js';
import { isLongOption } from '../bash/long-option.js';
import type { Word } from '../bash/types.js';
import { realpathLoose } from '../workspace.js';
import { memoFs, memoised } from '../util/decision-memo.js';
import { chdirTo, gitVerb, gitWhere } from './bash-git.js';
import { KeptReads } from './kept-reads.js';

/**
 * The repository's git directory seen from `dir` (a `.git` directory, or the one a `.git` file names), if any:
 * git looks from the real directory up its real parents (`-C link` where link leads into sub finds sub/.git).
 */
function gitDirFrom(dir: string): string | undefined {
  return repositoryFrom(dir)?.gitDir;
}

/**
 * The repository seen from `dir`: its git directory (as gitDirFrom) and its work tree's top, the
 * directory that holds the `.git` (where git runs hooks and resolves a relative `core.hooksPath`).
 */
export function repositoryFrom(dir: string): Repository | undefined {
  return repositoryAt(realpathLoose(dir));
}

type Repository = { top: string; gitDir: string };

/** path.join of a normalised absolute directory and a name, without path.join's normalising (the walks ask it at every level). */
export function under(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

/** repositoryFrom for a real directory: once per directory in a decision, so the walks from a file's directory and from the root it is in meet. */
function repositoryAt(d: string): Repository | undefined {
  return memoised('gitRepositoryAt', d, repositoryAtNow);
}

function repositoryAtNow(d: string): Repository | undefined {
  const dotGit = under(d, '.git');
  try {
    const st = memoFs.stat(dotGit);
    if (st?.isDirectory()) return { top: d, gitDir: dotGit };
    if (st?.isFile()) {
      const named = gitdirLine(dotGit);
      return named === undefined ? undefined : { top: d, gitDir: path.resolve(d, named) };
    }
  } catch {
    /* not here: the parent */
  }
  const parent = path.dirname(d);
  return parent === d ? undefined : repositoryAt(parent);
}

/** `.git` files' `gitdir:` lines and `commondir` files, kept between decisions by the file's identity (kept-reads.ts). */
const gitdirLines = new KeptReads((text) => /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1], 4096);
const commonDirs = new KeptReads((text) => text.trim(), 4096);

/** The directory a `.git` file names in its `gitdir:` line, as written; throws when the file cannot be read. */
function gitdirLine(file: string): string | undefined {
  const line = gitdirLines.get(file);
  if (line === undefined) throw Object.assign(new Error(`cannot read ${file}`), { code: 'ENOENT' });
  return line.value;
}

/**
 * The git directory `--git-dir` leads to: a file (a `.git` file of a linked worktree or a
 * submodule) names it in its `gitdir:` line, relative to the file's directory, as git's
 * read_gitfile takes it (`git --git-dir=wt/.git config -l` prints sub/.git/config when wt was
 * made by `git -C sub worktree add ../wt`).
 */
function throughGitFile(gitDir: string): string[] {
  try {
    if (!memoFs.stat(gitDir)?.isFile()) return [gitDir];
    const named = gitdirLine(gitDir);
    if (named === undefined) return [gitDir];
    // From the directory the path names (git joins the two as text); from the file's own when it is reached through a link.
    return [...new Set([chdirTo(path.dirname(gitDir), named), chdirTo(path.dirname(realpathLoose(gitDir)), named)])];
  } catch {
    return [gitDir];
  }
}

/** The common git directory a linked worktree's git directory names (its `commondir` file), if any. */
export function commonDir(gitDir: string): string | undefined {
  // Mostly there is none: a stat finds that, where a read would cost an exception.
  const v = commonDirs.get(under(gitDir, 'commondir'))?.value;
  return v !== undefined && v.length > 0 ? path.resolve(gitDir, v) : undefined;
}

/**
 * The configuration files (absolute) a git argv prints values from, seen from
 * `cwd`; empty for other commands. `-C dir` and `--git-dir=dir` are followed.
 */
export function gitConfigReads(argv: readonly Word[], cwd: string, home: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const v = gitVerb(argv);
  if (!v || !['config', 'var', 'remote', 'ls-remote'].includes(v.verb)) return [];
  const verb = v.verb;
  const args = v.rest.map((w) => w.value);
  const where = gitWhere(parseGitGlobals(argv), cwd, home);
  // `git remote -vv` is -v too; `git ls-remote --get-url` prints the URL as configured (a token in it), and ls-remote names it in errors.
  if (verb === 'remote' && !(args.some((a) => /^-v+$/.test(a) || isLongOption(a, ['--verbose']) || a === 'get-url' || a === 'show'))) return [];
  // With a -C or --git-dir that is an expansion (or an expansion among the options), any of the directories passed may be the one.
  const gitDirs = where.gitDir !== undefined ? throughGitFile(where.gitDir) : where.unknown ? where.dirs.map(gitDirFrom) : [gitDirFrom(where.run)];
  const local: string[] = [];
  for (const gitDir of new Set(gitDirs)) {
    if (gitDir === undefined) continue;
    local.push(path.join(gitDir, 'config'), path.join(gitDir, 'config.worktree'));
    // A linked worktree's git directory (.git/worktrees/NAME) names the repository's own in `commondir`, whose config git reads.
    const common = commonDir(gitDir);
    if (common) local.push(path.join(common, 'config'));
  }
  // As git takes them from the environment the command runs with: $XDG_CONFIG_HOME/git/config, and the files
  // $GIT_CONFIG_GLOBAL and $GIT_CONFIG_SYSTEM name in place of the usual ones (those are judged all the same).
  const global = [path.join(home, '.gitconfig'), path.join(home, '.config', 'git', 'config')];
  if (env.XDG_CONFIG_HOME) global.push(path.resolve(cwd, env.XDG_CONFIG_HOME, 'git', 'config'));
  if (env.GIT_CONFIG_GLOBAL) global.push(path.resolve(cwd, env.GIT_CONFIG_GLOBAL));
  const system = ['/etc/gitconfig'];
  if (env.GIT_CONFIG_SYSTEM) system.push(path.resolve(cwd, env.GIT_CONFIG_SYSTEM));
  if (verb === 'config') {
    const scopes = [
      { given: args.some((a) => isLongOption(a, ['--global'])), files: global },
      { given: args.some((a) => isLongOption(a, ['--system'])), files: system },
      { given: args.some((a) => isLongOption(a, ['--local', '--worktree'])), files: local },
    ];
    if (scopes.some((x) => x.given)) return scopes.flatMap((x) => (x.given ? x.files : []));
  }
  return [...system, ...global, ...local];
}

const CONFIG_WRITE_OPTIONS = ['--add', '--unset', '--unset-all', '--replace-all', '--rename-section', '--remove-section', '--edit'];
const CONFIG_READ_OPTIONS = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '--get-color', '--get-colorbool'];
/** git config's options that take a value in the next word. */
const CONFIG_VALUE_OPTIONS = ['--file', '--blob', '--type', '--default', '--comment', '--value'];

/**
 * Keys whose value never makes git run a program, load another file, or send
 * data anywhere else (lower case: git compares section and variable names so):
 * setting one (`git config user.email a@b.c`, `git config --global
 * init.defaultBranch main`, which agents do before committing) changes
 * nothing a later command could be made to run. git writes the value quoted,
 * so no value adds a line of its own.
 */
const INERT_KEYS: ReadonlySet<string> = new Set([
  'user.name', 'user.email', 'init.defaultbranch', 'pull.rebase', 'pull.ff', 'push.default', 'push.autosetupremote',
  'fetch.prune', 'rebase.autostash', 'core.autocrlf', 'core.eol', 'core.filemode', 'color.ui', 'advice.detachedhead',
]);

/**
 * The configuration file (absolute) a `git config` argv writes, seen from
 * `cwd`; undefined when it only reads (or is not git config), or when it
 * sets or unsets one key of INERT_KEYS in the usual files (no --file or
 * --blob, no section renamed or removed, no editor).
 */
export function gitConfigWrite(argv: readonly Word[], cwd: string, home: string): string | undefined {
  const v = gitVerb(argv);
  if (v?.verb !== 'config') return undefined;
  const args = v.rest.map((w) => w.value);
  const { run: start, gitDir } = gitWhere(parseGitGlobals(argv), cwd, home);
  let file: string | undefined;
  const positionals: string[] = [];
  let writes = false;
  let reads = false;
  /** A form that may change more than the named key, or another file (`--file`, `--edit`, sections). */
  let broad = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq === -1 ? a : a.slice(0, eq);
      const value = eq === -1 && CONFIG_VALUE_OPTIONS.some((o) => isLongOption(name, [o])) ? args[++i] : eq === -1 ? undefined : a.slice(eq + 1);
      if (isLongOption(name, ['--file']) && value !== undefined) file = path.resolve(start, value);
      if (isLongOption(name, ['--file', '--blob', '--rename-section', '--remove-section', '--edit'])) broad = true;
      if (isLongOption(name, CONFIG_WRITE_OPTIONS)) writes = true;
      else if (isLongOption(name, CONFIG_READ_OPTIONS)) reads = true;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      // Short options other than the scope's are not sorted out here: any makes the write a broad one.
      broad = true;
      if (/e/.test(a.slice(1))) writes = true;
      if (/l/.test(a.slice(1))) reads = true;
      if (/f/.test(a.slice(1))) {
        const v = a.endsWith('f') ? args[++i] : a.slice(a.indexOf('f') + 1);
        if (v !== undefined) file = path.resolve(start, v);
      }
      continue;
    }
    positionals.push(a);
  }
  // git 2.46's subcommands; before them, NAME alone reads and NAME VALUE writes.
  const sub = positionals[0];
  if (sub === 'get' || sub === 'list') return undefined;
  if (sub !== undefined && ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(sub)) writes = true;
  else if (!reads && positionals.length >= 2) writes = true;
  if (!writes) return undefined;
  const subcommand = sub !== undefined && ['set', 'unset'].includes(sub);
  const key = subcommand ? positionals[1] : positionals[0];
  // Every word fixed by the text (an expansion may split into options such as `--file`), but a last one quoted whole (`"$EMAIL"`).
  const given = v.rest;
  const quotedWhole = (raw: string): boolean => raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') && !raw.slice(1, -1).includes('"');
  const fixed = given.every((w, i) => (w.literal && !w.glob) || (i === given.length - 1 && quotedWhole(w.raw)));
  const sections = sub !== undefined && ['rename-section', 'remove-section', 'edit'].includes(sub);
  const inert = fixed && !broad && !sections && key !== undefined && INERT_KEYS.has(key.toLowerCase());
  const target = file ?? configFile(args, start, gitDir, home);
  // git writes through a symlink: `.git/config` → a script toolexec runs would get the line, whatever the key.
  return inert && !isSymlink(target) ? undefined : target;
}

function configFile(args: readonly string[], start: string, gitDir: string | undefined, home: string): string {
  if (args.some((a) => isLongOption(a, ['--global']))) return path.join(home, '.gitconfig');
  if (args.some((a) => isLongOption(a, ['--system']))) return '/etc/gitconfig';
  const dir = gitDir ?? gitDirFrom(start) ?? path.join(start, '.git');
  return path.join(dir, args.some((a) => isLongOption(a, ['--worktree'])) ? 'config.worktree' : 'config');
}

function isSymlink(p: string): boolean {
  try {
    return memoFs.lstat(p)?.isSymbolicLink() ?? false;
  } catch {
    return false;
  }
}
