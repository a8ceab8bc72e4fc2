/**
 * What a git command does beyond the files it names, for the Bash check
 * (bash-rules.ts): whether it prints tracked contents, which Read deny rules
 * cannot be checked against, and whether it would obey a repository the
 * agent could have laid out itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseGitGlobals, type GitGlobals } from '../bash/git-globals.js';
import { commandName } from '../bash/paths.js';
import { withoutGitGlobals } from '../bash/rule-match.js';
import type { SimpleCommand, Word } from '../bash/types.js';
import { unwrapStages } from '../bash/wrappers.js';
import { realpathLoose } from '../workspace.js';

/** git verbs that print file contents from the repository whatever their options. */
const GIT_CONTENT_VERBS: ReadonlySet<string> = new Set([
  'show', 'cat-file', 'grep', 'diff', 'diff-tree', 'diff-index', 'diff-files', 'diff-pairs', 'blame', 'annotate', 'archive', 'format-patch',
  'difftool', 'range-diff', 'bundle',
  // A stream of every blob, conflicted contents, a blob written out to a file, a request with its patch.
  'fast-export', 'merge-tree', 'unpack-file', 'request-pull',
  // A stream's `cat-blob` and `ls` print stored blobs; its `feature import-marks=F` reads a file.
  'fast-import',
]);
/** git verbs that print contents with a patch option. */
const GIT_PATCH_VERBS: ReadonlySet<string> = new Set(['log', 'whatchanged', 'reflog', 'stash', 'shortlog']);
const GIT_PATCH_OPTION = /^(-[A-Za-z]*[puLc]|--patch|--patch-with-stat|--patch-with-raw|--cc|--word-diff.*|--color-words.*|-U\d*|--unified.*|--full-diff|--binary|--raw)$/;

/** The git verb that prints tracked contents in this argv (git's global options skipped), if it does. */
export function gitPrintsContent(argv: readonly Word[]): string | undefined {
  if (commandName(argv) !== 'git') return undefined;
  const words = withoutGitGlobals(argv)?.[0] ?? argv;
  const rest = words.slice(1);
  const verbWord = rest.find((w) => !(w.literal && w.value.startsWith('-')));
  if (!verbWord) return undefined;
  // A verb that is an expansion could be any of them.
  if (!verbWord.literal) return '(a verb that is an expansion)';
  const verb = verbWord.value;
  if (GIT_CONTENT_VERBS.has(verb)) return verb;
  if (GIT_PATCH_VERBS.has(verb) && rest.some((w) => !w.literal || GIT_PATCH_OPTION.test(w.value))) return `${verb} with a patch`;
  return undefined;
}

/**
 * Whether git would run in a directory laid out as a repository that is not
 * a `.git` (HEAD, objects and refs beside each other, between where it runs
 * and the workspace root): its `config` is an ordinary file there, and git
 * obeys it (core.fsmonitor runs a program on `git status`). git looks from
 * the real directory up its real parents (`-C link` where link leads into
 * src/p finds src/p), and so does this.
 */
export function gitInPlantedRepository(argv: readonly Word[], dirs: readonly string[], root: string): boolean {
  if (commandName(argv) !== 'git') return false;
  const realRoot = realpathLoose(root);
  for (const start of dirs) {
    for (let d = realpathLoose(start); ; d = path.dirname(d)) {
      if (fs.existsSync(path.join(d, '.git'))) break;
      if (['HEAD', 'objects', 'refs'].every((n) => fs.existsSync(path.join(d, n)))) return true;
      if (d === realRoot || path.dirname(d) === d || !d.startsWith(realRoot)) break;
    }
  }
  return false;
}

/**
 * Configuration keys a `git -c KEY=VALUE` may set without asking: ones that
 * neither name a program git runs nor a file it reads. Every other key may
 * (`core.fsmonitor`, `core.sshCommand`, `alias.*` with `!`, `diff.*.textconv`,
 * `filter.*.clean`, `credential.helper`, `include.path`, `commit.template`,
 * `blame.ignoreRevsFile`, `protocol.ext.allow`, …), and git runs it at once.
 */
const GIT_SAFE_CONFIG_KEY =
  /^(user\.(name|email|signingkey|usecon(fig)?only)|(author|committer)\.(name|email)|color\..+|advice\.[\w-]+|init\.defaultbranch|column\.[\w-]+|i18n\.[\w-]+|status\.[\w-]+|log\.[\w-]+|pull\.(rebase|ff|twohead)|push\.(default|autosetupremote|followtags)|fetch\.(prune|prunetags|parallel|showforcedupdates)|merge\.(conflictstyle|ff|log|renames|stat)|core\.(quotepath|abbrev|autocrlf|safecrlf|ignorecase|filemode|eol|whitespace|precomposeunicode|compression|bigfilethreshold|commentchar|commentstring|checkstat|trustctime|untrackedcache|splitindex|preloadindex)|diff\.(noprefix|mnemonicprefix|renames|renamelimit|algorithm|colormoved|colormovedws|indentheuristic|relative|context|interhunkcontext|suppressblankempty|statgraphwidth|statnamewidth|dirstat|ignoresubmodules|submodule|wserrorhighlight)|protocol\.version|gc\.auto(packlimit|detach)?|maintenance\.auto|safe\.directory|commit\.(gpgsign|verbose|cleanup|status)|tag\.(gpgsign|sort)|rebase\.(autosquash|autostash|abbreviatecommands|missingcommitscheck|updaterefs|stat)|branch\.sort|versionsort\.suffix|credential\.interactive|http\.(sslverify|postbuffer|lowspeedlimit|lowspeedtime|version)|pack\.threads|index\.[\w-]+|feature\.[\w-]+)$/i;

/**
 * Values of otherwise risky keys that run nothing and read nothing: hooks turned off
 * (`core.hooksPath=/dev/null`, the usual way to skip them for one command) and a pager that is a
 * plain reader of git's own output (`core.pager=cat`, as `--no-pager`).
 */
function harmlessValue(key: string, value: string): boolean {
  const k = key.toLowerCase();
  if (k === 'core.hookspath') return value === '/dev/null';
  if (k === 'core.pager' || /^pager\.[\w-]+$/.test(k)) return ['', 'cat', 'less', 'less -R', 'less -FRX', 'more', 'false', 'true'].includes(value);
  return false;
}

/**
 * The first configuration key a git argv sets with a global `-c KEY=VALUE` or
 * `--config-env=KEY=ENVVAR` that is not known to be harmless (or
 * `--exec-path`, given a directory), if any: git
 * obeys it for this very command (`git -c core.fsmonitor='cat .env' status`
 * runs the program, `git -c alias.x='!sh' x` a shell), so an allow rule such
 * as Bash(git:*) or a Read deny rule cannot vouch for it.
 */
export function gitRiskyConfigKey(argv: readonly Word[]): string | undefined {
  if (commandName(argv) !== 'git') return undefined;
  for (const o of parseGitGlobals(argv).options) {
    // `--exec-path=DIR`: git runs its non-builtin commands and remote helpers from DIR (`git --exec-path=bin foo` runs bin/git-foo).
    if (o.name === '--exec-path') return '--exec-path';
    if (o.name !== '-c' && o.name !== '--config-env') continue;
    const setting = o.value;
    if (!setting) return '(a -c without a value)';
    if (!setting.literal) return '(a -c setting that is an expansion)';
    const eq = setting.value.indexOf('=');
    const key = eq === -1 ? setting.value : setting.value.slice(0, eq);
    // A --config-env's value is the name of an environment variable, not the value itself.
    const fromValue = o.name === '-c' && eq !== -1 && harmlessValue(key, setting.value.slice(eq + 1));
    if (!GIT_SAFE_CONFIG_KEY.test(key) && !fromValue) return key;
  }
  return undefined;
}

/**
 * Where a git argv's global options lead, seen from `base`: every directory
 * its `-C` options lead to in turn (`base` first, where git runs last), and
 * the git directory and work tree `--git-dir` (or `--bare`, the directory
 * it stands in) and `--work-tree` name. git sets those as written and
 * resolves them after every `-C` (`git --git-dir=.git -C sub` reads
 * sub/.git). A value that is an expansion (or missing) is left out, and
 * `unknown` says so.
 */
export interface GitWhere {
  dirs: string[];
  run: string;
  gitDir: string | undefined;
  workTree: string | undefined;
  unknown: boolean;
}

export function gitWhere(g: GitGlobals, base: string, home?: string): GitWhere {
  let run = base;
  const dirs = [base];
  let unknown = g.expansions.length > 0;
  // What GIT_DIR holds: --git-dir's value as written (resolved at the end), or the directory --bare stood in.
  let gitDir: { written: string } | { abs: string } | undefined;
  let workTree: string | undefined;
  for (const o of g.options) {
    if (o.name === '--bare') {
      // git sets GIT_DIR to where it is unless it is set already.
      gitDir ??= { abs: run };
      continue;
    }
    if (o.name !== '-C' && o.name !== '--git-dir' && o.name !== '--work-tree') continue;
    const value = dirValue(o.value, home);
    if (value === undefined) {
      unknown = true;
      continue;
    }
    if (o.name === '-C') {
      run = chdirTo(run, value);
      dirs.push(run);
    } else if (o.name === '--git-dir') gitDir = { written: value };
    else workTree = value;
  }
  return {
    dirs,
    run,
    // git makes them absolute by their real path: `..` after a link goes up from its target, as for -C.
    gitDir: gitDir === undefined ? undefined : 'abs' in gitDir ? gitDir.abs : chdirTo(run, gitDir.written),
    workTree: workTree === undefined ? undefined : chdirTo(run, workTree),
    unknown,
  };
}

/**
 * The directory a word names as bash passes it on, a leading tilde expanded
 * with `home`; undefined when bash makes something the text does not fix of
 * it: an expansion, a glob (`-C su*` is `-C sub`), `~user`, a tilde without
 * `home` (or a missing value).
 */
export function dirValue(w: Word | undefined, home?: string): string | undefined {
  if (!w?.literal || w.glob) return undefined;
  if (!w.tilde) return w.value;
  if (home === undefined) return undefined;
  if (w.value === '~') return home;
  return w.value.startsWith('~/') ? path.join(home, w.value.slice(2)) : undefined;
}

/**
 * Where chdir(rel) from `dir` leads, as git's -C does it: `..` goes up from
 * where the path really is (`-C link/..` is the parent of the link's target,
 * not the directory holding the link, as bash's `cd link/..` would have it),
 * and `''` stays. Names are kept as spelled where no link is gone through.
 */
export function chdirTo(dir: string, rel: string): string {
  let cur = path.isAbsolute(rel) ? '/' : dir;
  for (const part of rel.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') cur = path.join(cur, part);
    else cur = path.dirname(realpathLoose(cur));
  }
  return cur;
}

/**
 * The directories a command starts in, seen from the line's working
 * directories: through its wrappers' `env -C DIR`, `sudo -D DIR` (as chdir
 * goes). Undefined when it starts where no word says (chroot, a login
 * shell's home, a directory that is an expansion, find -execdir).
 */
export function startDirs(cmd: SimpleCommand, dirs: readonly string[], home?: string): string[] | undefined {
  const { chdirs } = unwrapStages(cmd.argv, false);
  const values = chdirs?.map((w) => dirValue(w, home));
  if (cmd.elsewhere || values === undefined || values.some((v) => v === undefined)) return undefined;
  return [...new Set(dirs.map((d) => values.reduce((cur: string, v) => chdirTo(cur, v!), d)))];
}

/**
 * The repository directory a git argv names that git would obey the
 * configuration of while it is no `.git` (so no protected path): `--git-dir
 * DIR`, or `-C DIR` into a directory laid out as a repository. Its `config` is
 * an ordinary file the Write tool may have written (acceptEdits), and git
 * runs its `core.fsmonitor` on `git --git-dir=src/p --work-tree=. status`,
 * its aliases, its hooks. Undefined when there is none.
 */
export function gitForeignRepository(argv: readonly Word[], cwd: string, root: string, home?: string): string | undefined {
  if (commandName(argv) !== 'git') return undefined;
  const g = parseGitGlobals(argv);
  if (g.expansions.some((w) => w.raw.startsWith('--git-dir'))) return '(a --git-dir that is an expansion)';
  for (const o of g.options) {
    if (o.name === '-C' && dirValue(o.value, home) === undefined) return '(a -C directory that is an expansion or a pattern)';
    if (o.name === '--git-dir' && dirValue(o.value, home) === undefined) return '(a --git-dir that is an expansion or a pattern)';
  }
  const where = gitWhere(g, cwd, home);
  const git = [{ ...argv[0]!, raw: 'git', value: 'git' }];
  for (const d of where.dirs.slice(1)) if (gitInPlantedRepository(git, [d], root)) return d;
  if (where.gitDir !== undefined && path.basename(where.gitDir) !== '.git') return where.gitDir;
  return undefined;
}

/**
 * Whether a git argv points git at another directory than the one it runs in (`-C DIR` other
 * than `.`, `--git-dir`, `--work-tree`, `--bare`): git then obeys what it finds there.
 */
export function gitNamesDirectory(argv: readonly Word[]): boolean {
  if (commandName(argv) !== 'git') return false;
  const g = parseGitGlobals(argv);
  if (g.expansions.length > 0) return true;
  if (g.chdirs.some((w) => !w?.literal || (w.value !== '.' && w.value !== './'))) return true;
  return g.options.some((o) => o.name === '--git-dir' || o.name === '--work-tree' || o.name === '--bare');
}
