/**
 * What a git command does beyond the files it names, for the Bash check
 * (bash-rules.ts): whether it prints tracked contents, which Read deny rules
 * cannot be checked against, and whether it would obey a repository the
 * agent could have laid out itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseGitGlobals, type GitGlobals } from '../bash/git-globals.js';
import { isLongOption, longOptionName } from '../bash/long-option.js';
import { commandName, gitOperands } from '../bash/paths.js';
import { withoutGitGlobals } from '../bash/rule-match.js';
import type { SimpleCommand, Word } from '../bash/types.js';
import { unwrapStages } from '../bash/wrappers.js';
import { realpathLoose } from '../workspace.js';
import { memoFs, memoised } from '../util/decision-memo.js';
import { readSmallFile, readSmallText } from '../util/read-small-file.js';

/** git verbs that print file contents from the repository whatever their options. */
const GIT_CONTENT_VERBS: ReadonlySet<string> = new Set([
  'show', 'cat-file', 'grep', 'diff', 'diff-tree', 'diff-index', 'diff-files', 'diff-pairs', 'blame', 'annotate', 'archive', 'format-patch',
  'difftool', 'range-diff', 'bundle',
  // A stream of every blob, conflicted contents, a blob written out to a file, a request with its patch.
  'fast-export', 'merge-tree', 'unpack-file', 'request-pull',
  // A stream's `cat-blob` and `ls` print stored blobs; its `feature import-marks=F` reads a file.
  'fast-import',
  // A pack of the objects named on its input, on standard output (each blob zlib-compressed, which any inflater reverses).
  'pack-objects',
]);
/** git verbs that print contents with a patch option. */
const GIT_PATCH_VERBS: ReadonlySet<string> = new Set(['log', 'whatchanged', 'reflog', 'stash', 'shortlog']);
// -L takes its range and file attached too (`git log -L1,9:.env` prints those lines of .env as each commit had them).
const GIT_PATCH_OPTION = /^(-[A-Za-z]*[puc]|-[A-Za-z]*L.*|--patch|--patch-with-stat|--patch-with-raw|--cc|--word-diff.*|--color-words.*|-U\d*|--unified.*|--full-diff|--binary|--raw)$/;

/** `git diff` options that print names and counts instead of the patch. */
const DIFF_SUMMARY = /^(--stat(=[\d,]+)?|--numstat|--shortstat|--dirstat(=[\w,.]+)?|--compact-summary|--summary|--name-only|--name-status|--quiet|--exit-code|--raw)$/;
/** Other `git diff` options that add no contents to such a summary (which revisions or files, rename detection, colour). */
const DIFF_HARMLESS = /^(--cached|--staged|--merge-base|--no-color|--color(=\w+)?|--relative(=[\w./-]+)?|--no-relative|-[MCBR]\d*%?|--find-renames(=\d+%?)?|--find-copies(=\d+%?)?|--no-renames|--diff-filter=[ACDMRTUXBacdmrtuxb*]+|-z|--abbrev(=\d+)?|--no-abbrev|--full-index|--ignore-submodules(=\w+)?|--no-ext-diff|--no-textconv|-[wb]|--ignore-all-space|--ignore-space-change|--ignore-blank-lines|--ignore-cr-at-eol|--minimal|--patience|--histogram|--ita-invisible-in-index|--ita-visible-in-index|-[123]|--base|--ours|--theirs)$/;

/**
 * Whether a `git diff` prints only names and counts (`git diff --stat HEAD~1`, `--name-only`):
 * a summary option, and every other option known to add no contents (not -p, -U, --word-diff,
 * --ext-diff, --output, nor the pickaxe -S/-G, whose answer tells what files hold).
 */
function diffPrintsNamesOnly(args: readonly Word[]): boolean {
  let summary = false;
  for (const w of args) {
    if (!w.literal) return false;
    if (w.value === '--') break;
    if (!w.value.startsWith('-')) continue;
    if (DIFF_SUMMARY.test(w.value)) summary = true;
    else if (!DIFF_HARMLESS.test(w.value)) return false;
  }
  return summary;
}

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
  if (verb === 'diff' && diffPrintsNamesOnly(rest.slice(rest.indexOf(verbWord) + 1))) return undefined;
  if (GIT_CONTENT_VERBS.has(verb)) return verb;
  if (verb === 'stash' && stashPushes(rest.slice(rest.indexOf(verbWord) + 1))) {
    // `git stash [push|save]` prints no contents but with -p (its hunks, interactively); its -u is --include-untracked.
    if (rest.some((w) => !w.literal || (!w.value.startsWith('--') && /^-[A-Za-z]*p/.test(w.value)) || longOption(w, '--patch'))) return 'stash with a patch';
    return undefined;
  }
  if (GIT_PATCH_VERBS.has(verb) && rest.some((w) => !w.literal || GIT_PATCH_OPTION.test(w.value))) return `${verb} with a patch`;
  return undefined;
}

/** Whether the words after `stash` are a push (`push`, `save`, or no subcommand): not `show`, `list` (which take diff and log options) nor another. */
function stashPushes(args: readonly Word[]): boolean {
  const sub = gitSubcommand(args);
  return sub === undefined || (sub.literal && (sub.value === 'push' || sub.value === 'save'));
}

/**
 * The word naming a git verb's subcommand among the words after the verb: the first that is not an
 * option, as git's parse-options finds it past options (`git stash -q list` lists); undefined when
 * there is none (for `stash`, a push). The one reading of it for the checks of a stash (what it
 * prints, the untracked files it stores, the tracked changes it stages, the tree it rewrites), each
 * with its own terms, and of worktree, submodule, bisect and sparse-checkout.
 */
export function gitSubcommand(rest: readonly Word[]): Word | undefined {
  return rest.find((w) => !(w.literal && w.value.startsWith('-')));
}

/** The verb of a git argv (global options skipped) and the words after it; undefined when there is no literal one. */
export function gitVerb(argv: readonly Word[]): { verb: string; rest: readonly Word[] } | undefined {
  if (commandName(argv) !== 'git') return undefined;
  const words = withoutGitGlobals(argv)?.[0] ?? argv;
  const at = words.findIndex((w, k) => k > 0 && !(w.literal && w.value.startsWith('-')));
  if (at === -1 || !words[at]!.literal) return undefined;
  return { verb: words[at]!.value, rest: words.slice(at + 1) };
}

/**
 * Whether a word is the long option `name` as git's parse-options takes it, `=value` attached or
 * not: also any prefix of two letters or more (`--ex='cat .env'` is `--exec` for rebase; an
 * ambiguous one git refuses), unless `exact`.
 */
function longOption(w: Word, name: string, exact = false): boolean {
  if (!w.literal) return false;
  return exact ? longOptionName(w.value) === name : isLongOption(w.value, [name]);
}

/** Long options by git verb whose value is a command git runs (a shell command line, or a program on the other side run here for a local URL). */
const GIT_COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  rebase: ['--exec'],
  fetch: ['--upload-pack'],
  pull: ['--upload-pack'],
  clone: ['--upload-pack'],
  'ls-remote': ['--upload-pack'],
  push: ['--receive-pack', '--exec'],
  'send-pack': ['--receive-pack', '--exec'],
  'fetch-pack': ['--upload-pack', '--exec'],
  archive: ['--exec'],
  difftool: ['--extcmd'],
  'send-email': ['--to-cmd', '--cc-cmd', '--header-cmd', '--sendmail-cmd', '--smtp-server'],
};
/** Short options by git verb (alone or last of a cluster) whose value is such a command. */
const GIT_COMMAND_SHORT: Readonly<Record<string, string>> = { rebase: 'x', clone: 'u', 'ls-remote': 'u', difftool: 'x' };

/**
 * What in a git argv makes git run a command given on the command line: `git rebase -x 'cat .env'`
 * (after each commit), `git bisect run CMD`, `git submodule foreach CMD`, `git filter-branch`'s
 * filters, `--upload-pack`/`--receive-pack` (run here for a local URL), `difftool -x`, send-email's
 * `--*-cmd`. Bash(git:*) cannot vouch for what that command does (`git rebase --exec 'cat .env'
 * HEAD~1` printed .env with Read(./.env) denied), as for a `-c` key that runs a program.
 */
export function gitRunsGivenCommand(argv: readonly Word[]): string | undefined {
  const v = gitVerb(argv);
  if (!v) return undefined;
  const { verb, rest } = v;
  if (verb === 'filter-branch') return 'git filter-branch runs the filters it is given as shell commands';
  if (verb === 'instaweb') return 'git instaweb runs the web server and browser it is given';
  if (verb === 'bisect' && rest[0]?.literal && rest[0].value === 'run') return 'git bisect run runs the command it is given';
  if (verb === 'submodule' && rest.some((w) => w.literal && w.value === 'foreach')) return 'git submodule foreach runs the command it is given in every submodule';
  const longs = GIT_COMMAND_OPTIONS[verb] ?? [];
  const short = GIT_COMMAND_SHORT[verb];
  for (const w of rest) {
    if (w.literal && w.value === '--') break;
    if (!w.literal) continue;
    // send-email has options these are prefixes of (`--to`, `--cc`): its names are matched whole.
    const hit = longs.find((o) => longOption(w, o, verb === 'send-email'));
    if (hit) return `git ${verb} ${hit} runs the command it is given`;
    if (short && !w.value.startsWith('--') && new RegExp(`^-[A-Za-z]*${short}`).test(w.value)) return `git ${verb} -${short} runs the command it is given`;
  }
  return undefined;
}

/**
 * What in a git argv puts contents git stores under names of its choosing, or stores files git does
 * not track: `update-index --cacheinfo MODE,BLOB,notes.txt` (or `--index-info`), `read-tree
 * --prefix=x/`, `mktree`, `replace`, then `checkout-index` writes them out (`--temp`, `--prefix`
 * as well), and `stash -u`/`-a` stores untracked (and ignored) files such as .env. With Read(./.env)
 * denied, `git stash -a`, `git rev-parse 'stash@{0}^3:.env'`, `git update-index --add --cacheinfo
 * 100644,SHA,notes.txt`, `git checkout-index --prefix=x/ notes.txt` and `cat x/notes.txt` printed it:
 * no path any rule could match was named. Judged only while Read deny rules exist.
 */
export function gitMovesStoredContent(argv: readonly Word[]): string | undefined {
  const v = gitVerb(argv);
  if (!v) return undefined;
  const { verb, rest } = v;
  const has = (...names: string[]): boolean => rest.some((w) => !w.literal || names.some((n) => longOption(w, n)));
  if (verb === 'mktree' || verb === 'replace') return `git ${verb} stores objects under names of its choosing`;
  if (verb === 'update-index' && has('--cacheinfo', '--index-info')) return 'git update-index --cacheinfo/--index-info puts a stored blob under a name of its choosing';
  if (verb === 'read-tree' && has('--prefix')) return 'git read-tree --prefix puts stored files under another directory';
  if (verb === 'checkout-index' && has('--temp', '--prefix')) return 'git checkout-index --temp/--prefix writes stored files under other names';
  if (gitStashesUntracked(argv)) return 'git stash -u/-a stores untracked files (a Read-denied one among them) where other git commands can put them under other names';
  if (gitForceAdds(argv)) return 'git add -f stores ignored files (a Read-denied one among them) where other git commands can put them under other names';
  return undefined;
}

/** `git add` options that neither take a value nor read a list of paths. */
const GIT_ADD_PLAIN = /^--(force|all|no-ignore-removal|verbose|dry-run|ignore-errors|ignore-missing|intent-to-add|update|no-all|ignore-removal|renormalize|sparse|chmod=[+-]x)$/;

/**
 * A `git add -f` (`--force`, `-Af`), which stages ignored files too (`git add -f .` puts an ignored
 * .env in the object store, as `git stash -a` does): its operands, and whether they are all plain
 * names (literal, no pattern, no pathspec magic, after options known to take no value) that may each
 * be one file. Undefined for any other argv.
 */
export function gitForceAdds(argv: readonly Word[]): { operands: Word[]; plain: boolean } | undefined {
  const v = gitVerb(argv);
  // `git stage` is git's other name for add.
  if (v?.verb !== 'add' && v?.verb !== 'stage') return undefined;
  const a = gitAddWords(v.rest);
  // An expansion may be -f.
  if (!a.force && !a.expansion) return undefined;
  const plain =
    !a.expansion &&
    a.longs.every((x) => isLongOption(x, ['--force']) || GIT_ADD_PLAIN.test(x)) &&
    a.shorts.every((x) => /^-[nvfipeuAN]+$/.test(x)) &&
    a.operands.every((w) => !w.glob && !w.value.startsWith(':') && !/[*?[\\]/.test(w.value));
  return { operands: a.operands, plain: plain && a.operands.length > 0 };
}

/** The words after `git add` (or `git stage`), sorted as git's parse-options sorts them. */
export interface GitAddWords {
  /** Literal long options (`--all`, `--chmod=+x`) and short clusters (`-Av`) before any `--`, as written. */
  longs: string[];
  shorts: string[];
  /** The pathspecs: every word after `--`, a lone `-`, any other not written with a leading `-` (an expansion too). */
  operands: Word[];
  /** Whether a word is an expansion, which may be any option (-f, -n) or pathspec. */
  expansion: boolean;
  /** `-f` (alone or in a cluster) or `--force`, written out. */
  force: boolean;
}

/** The one reading of `git add`'s words, for what it stages (git-staging.ts) and what -f stores (gitForceAdds). */
export function gitAddWords(rest: readonly Word[]): GitAddWords {
  const a: GitAddWords = { longs: [], shorts: [], operands: [], expansion: false, force: false };
  let done = false;
  for (const w of rest) {
    if (!w.literal) {
      a.expansion = true;
      if (done || !w.raw.startsWith('-')) a.operands.push(w);
    } else if (done || w.value === '-' || !w.value.startsWith('-')) {
      a.operands.push(w);
    } else if (w.value === '--') {
      done = true;
    } else if (w.value.startsWith('--')) {
      a.longs.push(w.value);
      if (isLongOption(w.value, ['--force'])) a.force = true;
    } else {
      a.shorts.push(w.value);
      if (w.value.includes('f')) a.force = true;
    }
  }
  return a;
}

/** Whether a git argv is a `git stash` (push, save) that stores untracked files: `-u`, `-a`, `--include-untracked`, `--all`, or a word that is an expansion. */
export function gitStashesUntracked(argv: readonly Word[]): boolean {
  const v = gitVerb(argv);
  if (v?.verb !== 'stash') return false;
  const { rest } = v;
  const untracked = rest.some((w) => !w.literal || (!w.value.startsWith('--') && /^-[A-Za-z]*[ua]/.test(w.value)) || longOption(w, '--include-untracked') || longOption(w, '--all'));
  // Not `stash list/show/pop/apply/drop/branch/clear`, whose -a/-u mean nothing of the kind or do not exist.
  // An expansion is taken for an option here (it counts as -u already): the literal word after it names the subcommand.
  const sub = gitSubcommand(rest.filter((w) => w.literal))?.value;
  return untracked && (sub === undefined || sub === 'push' || sub === 'save' || !['list', 'show', 'pop', 'apply', 'drop', 'branch', 'clear', 'create', 'store'].includes(sub));
}

/**
 * The top of the work tree git finds from `start`: the nearest directory at or above it (as it
 * really lies) holding a `.git`, when that is surely git's work tree; undefined when none does, or
 * when git may take another directory for it. git takes its work tree from `core.worktree` in the
 * repository's config (or config.worktree) when set, and the config is an ordinary file wherever
 * `.git` is a file naming another git directory (`git init --separate-git-dir=gd`, then gd/config
 * says `worktree = ..`): sub's listing would be judged while git stores the workspace's. So the top
 * is taken only where `.git` is a directory laid out as a repository (a HEAD naming a ref or an
 * object, objects and refs git may enter: git
 * passes over one that is not, to a directory further up), with no commondir (whose config git
 * reads instead) and a config that names no work tree (no `worktree` key, nor extensions'
 * worktreeConfig) and includes no other file.
 */
export function gitTopLevel(start: string): string | undefined {
  for (let d = realpathLoose(start); ; d = path.dirname(d)) {
    const dotGit = path.join(d, '.git');
    if (memoFs.exists(dotGit)) return gitDirIsPlain(dotGit) ? d : undefined;
    if (path.dirname(d) === d) return undefined;
  }
}

/** Whether a `.git` (of any kind) lies at or above `start`, as it really lies. */
export function gitDirAbove(start: string): boolean {
  for (let d = realpathLoose(start); ; d = path.dirname(d)) {
    if (memoFs.exists(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

/** Whether a `.git` is a directory git takes as the repository of the directory holding it, with that directory as its work tree (see gitTopLevel). */
function gitDirIsPlain(dotGit: string): boolean {
  if (memoFs.lstat(dotGit)?.isDirectory() !== true) return false;
  if (!['objects', 'refs'].every((n) => memoFs.lstat(path.join(dotGit, n))?.isDirectory() === true && enterable(path.join(dotGit, n)))) return false;
  if (memoFs.lstat(path.join(dotGit, 'HEAD'))?.isFile() !== true || !headIsValid(path.join(dotGit, 'HEAD')) || memoFs.exists(path.join(dotGit, 'commondir'))) return false;
  if (memoFs.exists(path.join(dotGit, 'config.worktree'))) return false;
  let config: string;
  try {
    config = gitConfigText(dotGit);
  } catch {
    return false;
  }
  // Keys and section names are case-insensitive; a quoted or continued line may hide one: any mention asks.
  return !/worktree|include/i.test(config);
}

/**
 * The text of a git directory's `config` (at most 4 MiB, else EFBIG; throws as readSmallText), read
 * once in a decision: gitDirIsPlain looks for a work tree or include in it, then the staging check
 * for the index's object format (git-staging.ts), in the same `.git`.
 */
export function gitConfigText(gitDir: string): string {
  return memoised('git-config-text', path.join(gitDir, 'config'), (file) => readSmallText(file, 4 << 20, true));
}

/** Whether git may enter a directory (is_git_directory's access(X_OK) of objects and refs). */
function enterable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether git takes a HEAD file as a repository's (validate_headref): `ref:`, white space, then
 * `refs/`, or an object name in hex (SHA-1's 40 digits or SHA-256's 64). A `.git` whose HEAD is
 * neither is passed over, and git goes on to the `.git` above (`echo x > sub/.git/HEAD` made git in
 * sub store the workspace's files while sub's were listed).
 */
function headIsValid(head: string): boolean {
  let text: string;
  try {
    // Non-blocking and regular files only: HEAD may have become a FIFO since its lstat.
    text = readSmallFile(head, 255).toString('latin1');
  } catch {
    return false;
  }
  return /^ref:[ \t\n\v\f\r]*refs\//.test(text) || /^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40}(?![0-9a-fA-F]))/.test(text);
}

/**
 * Whether a `.git` is a file (`gitdir: X`) naming a git directory that lies in no `.git` directory:
 * `git init --separate-git-dir=gd sub` makes sub/.git name gd, whose config is an ordinary file
 * (a line's `printf … >> gd/config` writes it) that git in sub obeys (core.fsmonitor runs a program
 * on `git status`). A linked worktree's (.git/worktrees/NAME) and a submodule's (.git/modules/NAME)
 * lie in one. A `.git` file that cannot be read or says no gitdir counts as one.
 */
function gitFileLeadsOutsideGitDir(dotGit: string): boolean {
  if (memoFs.lstat(dotGit)?.isDirectory() === true) return false;
  let text: string;
  try {
    text = readSmallText(dotGit, 64 << 10, true);
  } catch {
    return true;
  }
  const m = /^gitdir: ?(.+?)\r?\n?$/.exec(text.split('\n')[0] ?? '');
  if (!m) return true;
  const real = realpathLoose(path.resolve(path.dirname(dotGit), m[1]!));
  return !real.split('/').includes('.git');
}

/**
 * Whether git would run in a directory laid out as a repository that is not
 * a `.git` (HEAD, objects and refs beside each other, between where it runs
 * and the workspace root): its `config` is an ordinary file there, and git
 * obeys it (core.fsmonitor runs a program on `git status`). git looks from
 * the real directory up its real parents (`-C link` where link leads into
 * src/p finds src/p), and so does this. So would one whose `.git` is a file naming a git
 * directory outside any `.git` (gitFileLeadsOutsideGitDir).
 */
export function gitInPlantedRepository(argv: readonly Word[], dirs: readonly string[], root: string): boolean {
  if (commandName(argv) !== 'git') return false;
  const realRoot = realpathLoose(root);
  for (const start of dirs) {
    for (let d = realpathLoose(start); ; d = path.dirname(d)) {
      const dotGit = path.join(d, '.git');
      if (memoFs.exists(dotGit)) {
        if (gitFileLeadsOutsideGitDir(dotGit)) return true;
        break;
      }
      if (['HEAD', 'objects', 'refs'].every((n) => memoFs.exists(path.join(d, n)))) return true;
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
function dirValue(w: Word | undefined, home?: string): string | undefined {
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

const GIT_TREE_REWRITERS: ReadonlySet<string> = new Set([
  'checkout', 'switch', 'pull', 'merge', 'rebase', 'cherry-pick', 'revert', 'am', 'mergetool', 'filter-branch', 'reset', 'stash', 'apply',
  'clean', 'read-tree', 'checkout-index', 'worktree', 'submodule', 'bisect', 'sparse-checkout',
]);

/**
 * git's own commands that leave the work tree as it is, or write only paths they name (judged by bash/paths.ts):
 * any other verb is one of GIT_TREE_REWRITERS, or an alias or another program (`git co other` with alias.co =
 * checkout in ~/.gitconfig, `git svn rebase`), which may rewrite it.
 */
const GIT_TREE_KEEPERS: ReadonlySet<string> = new Set(
  ('add add--interactive annotate archive backfill blame branch bugreport bundle cat-file check-attr check-ignore check-mailmap ' +
    'check-ref-format cherry clone column commit commit-graph commit-tree config count-objects credential credential-cache ' +
    'credential-cache--daemon credential-store daemon describe diagnose diff diff-files diff-index diff-pairs diff-tree difftool ' +
    'difftool--helper env--helper fast-export fast-import fetch fetch-pack fmt-merge-msg for-each-ref for-each-repo format-patch fsck ' +
    'fsck-objects fsmonitor--daemon gc get-tar-commit-id grep hash-object help hook http-backend http-fetch http-push imap-send ' +
    'index-pack init init-db instaweb interpret-trailers last-modified log ls-files ls-remote ls-tree mailinfo mailsplit maintenance ' +
    'merge-base merge-file merge-tree mktag mktree multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id ' +
    'pickaxe prune prune-packed push range-diff receive-pack reflog refs remote remote-ext remote-fd remote-ftp remote-ftps ' +
    'remote-http remote-https repack replace replay repo request-pull rerere restore rev-list rev-parse rm send-pack ' +
    'sh-i18n--envsubst shell shortlog show show-branch show-index show-ref stage status stripspace symbolic-ref tag unpack-file ' +
    'unpack-objects update-index update-ref update-server-info upload-archive upload-archive--writer upload-pack var verify-commit ' +
    'verify-pack verify-tag version web--browse whatchanged write-tree').split(' '),
);

/**
 * What a git command does to its work tree beyond the paths it names: `git checkout other`, `git
 * switch`, `git pull`, `git merge`, `git reset --hard`, `git stash pop` and the like put any
 * content a commit holds in any file of the tree (or remove it), where no word names the file.
 * With `Edit(./src/**)` denied, `git checkout other` replaced src/ in every mode. `whole`: the
 * work tree git runs in; `paths`: only what these words name (and what lies below them), as `git
 * clean -f build` or `git worktree add ../x`. Undefined for a command that leaves the tree, or
 * only writes paths it names (`git checkout other -- a.ts`, `git restore a.ts`: judged as writes of
 * them by bash/paths.ts).
 */
export function gitRewritesWorkTree(argv: readonly Word[]): { verb: string; paths?: Word[] } | undefined {
  const v = gitVerb(argv);
  if (!v) return undefined;
  const { verb, rest } = v;
  const options = rest.filter((w) => !w.literal || (w.value.startsWith('-') && w.value.length > 1));
  const has = (...names: string[]): boolean => options.some((w) => w.literal && names.some((n) => (n.startsWith('--') ? isLongOption(w.value, [n]) : !w.value.startsWith('--') && w.value.slice(1).includes(n.slice(1)))));
  const hasExact = (...values: string[]): boolean => options.some((w) => w.literal && values.includes(w.value));
  /** Words that are no option, past the values of the options named (`-b NAME`). */
  const operands = (withValue: readonly string[]): Word[] => gitOperands(rest, (w, i) => (withValue.includes(w.value) ? i + 1 : i))!.operands;
  const whole = { verb };
  // An expansion may be any option or operand (`git reset $how`): every verb but checkout (whose paths are writes already) rewrites the tree
  // then. Past this, every word of the verbs below but checkout is literal.
  if (GIT_TREE_REWRITERS.has(verb) && verb !== 'checkout' && rest.some((w) => !w.literal)) return whole;
  switch (verb) {
    case 'checkout': {
      // After `--`, or a tree-ish and paths: the paths are writes already (bash/paths.ts gitRestores).
      if (rest.some((w) => w.literal && w.value === '--')) return undefined;
      const creates = options.some((w) => w.literal && (/^-[A-Za-z]*[bB]/.test(w.value) || isLongOption(w.value, ['--orphan'])));
      const ops = operands(['-b', '-B', '--orphan']);
      if (creates) return ops.length > 0 ? whole : undefined;
      if (ops.length === 0) return has('-f', '--force') ? whole : undefined;
      // One operand is a branch switched to even where a file of that name lies: git takes the revision first
      // (`git checkout build` with a build/ directory and a branch build switches to the branch). As a path it is a
      // write of it too (bash-paths.ts).
      return ops.length > 1 ? undefined : whole;
    }
    case 'switch': {
      if (has('--orphan')) return whole;
      const ops = operands(['-c', '-C', '--create', '--force-create', '--orphan']);
      return ops.length > 0 ? whole : undefined;
    }
    case 'pull':
    case 'merge':
    case 'rebase':
    case 'cherry-pick':
    case 'revert':
    case 'am':
    case 'mergetool':
    case 'filter-branch':
      // Forgetting a sequence, or showing where it stopped, leaves the tree.
      return hasExact('--quit', '--show-current-patch', '--edit-todo') ? undefined : whole;
    case 'reset':
      return has('--hard', '--merge', '--keep') ? whole : undefined;
    case 'stash': {
      // A push puts the tree back to HEAD; pop, apply and branch put a stash's contents in it.
      const sub = gitSubcommand(rest);
      if (sub === undefined) return whole;
      return ['push', 'save', 'pop', 'apply', 'branch'].includes(sub.value) ? whole : undefined;
    }
    case 'apply': {
      // Which files a patch writes is in the patch (or on standard input): asked, not read.
      if (has('--check', '--stat', '--numstat', '--summary') && !has('--apply')) return undefined;
      if (has('--cached') && !has('--index')) return undefined;
      return whole;
    }
    case 'clean': {
      if (has('-n', '--dry-run')) return undefined;
      const ops = operands(['-e', '--exclude']);
      // Plain names: what lies below them; a pathspec git matches itself, or none, the whole tree.
      return ops.length > 0 && ops.every((w) => !w.glob && !w.value.startsWith(':')) ? { verb, paths: ops } : whole;
    }
    case 'read-tree':
      return has('-u') ? whole : undefined;
    case 'checkout-index': {
      if (has('-a', '--all', '--stdin', '--prefix')) return whole;
      const ops = operands([]);
      return ops.length > 0 && ops.every((w) => !w.glob) ? { verb, paths: ops } : whole;
    }
    case 'worktree': {
      const sub = gitSubcommand(rest);
      if (sub && ['list', 'prune', 'lock', 'unlock', 'repair'].includes(sub.value)) return undefined;
      if (!sub || !['add', 'move', 'remove'].includes(sub.value)) return whole;
      const after = rest.slice(rest.indexOf(sub) + 1);
      const ops: Word[] = [];
      for (let i = 0; i < after.length; i++) {
        const w = after[i]!;
        if (w.literal && ['-b', '-B', '--reason'].includes(w.value)) i++;
        else if (!(w.literal && w.value.startsWith('-') && w.value.length > 1)) ops.push(w);
      }
      // add's path (its commit-ish is not a path), move's two, remove's one.
      const paths = sub.value === 'add' ? ops.slice(0, 1) : ops;
      return paths.length > 0 && paths.every((w) => !w.glob) ? { verb, paths } : whole;
    }
    case 'submodule': {
      const sub = gitSubcommand(rest);
      if (sub === undefined) return undefined;
      return ['update', 'add', 'deinit', 'absorbgitdirs'].includes(sub.value) ? whole : undefined;
    }
    case 'bisect':
    case 'sparse-checkout': {
      const sub = gitSubcommand(rest);
      if (sub === undefined) return undefined;
      return !['log', 'visualize', 'view', 'terms', 'help', 'list', 'check-rules'].includes(sub.value) ? whole : undefined;
    }
    default:
      // git's merge strategies and helpers (merge-recursive, merge-one-file, quiltimport, subtree), an alias or another program.
      return GIT_TREE_KEEPERS.has(verb) ? undefined : whole;
  }
}

/**
 * What git itself can list of the files a work-tree rewrite changes, for the forms where the list is
 * bounded by two commits: `switch`, the files that differ between HEAD and `rev` (`git checkout
 * BRANCH`, `git switch BRANCH`: local changes elsewhere are carried over); `hard`, those and every
 * file of the index or of HEAD that differs from it (`git reset --hard|--merge|--keep REV`, `git
 * checkout -f`: local changes anywhere are thrown away); `stash`, what the stash `rev` holds (`git
 * stash pop|apply`); `merge`, a merge of `rev` that fast-forwards (`git merge BRANCH` where HEAD is
 * an ancestor of it: the files that differ, as for switch) or has nothing to do. `rev` as git is given it (its default filled in: HEAD, `stash@{0}`). Undefined
 * for any other form: an option not listed here (`-m`, `--recurse-submodules`, `-b`, an
 * abbreviation), `--`, an expansion, a pattern, a global option but -C, two operands, or any other
 * verb (pull, rebase, cherry-pick, an alias): those ask as before (bash-rules.ts, step 4c).
 */
export function gitRewriteTarget(argv: readonly Word[]): { kind: 'switch' | 'hard' | 'stash' | 'merge'; verb: string; rev: string } | undefined {
  const v = gitVerb(argv);
  if (!v) return undefined;
  const g = parseGitGlobals(argv);
  if (g.expansions.length > 0 || g.options.some((o) => o.name !== '-C')) return undefined;
  const { verb, rest } = v;
  if (rest.some((w) => !w.literal || w.glob || w.tilde || w.value === '--' || w.value === '')) return undefined;
  const split = (words: readonly Word[], allowed: readonly string[]): { opts: string[]; ops: string[] } | undefined => {
    const opts = words.filter((w) => w.value.startsWith('-') && w.value !== '-').map((w) => w.value);
    // `-` alone is `@{-1}` for checkout and switch, an operand.
    const ops = words.filter((w) => !w.value.startsWith('-') || w.value === '-').map((w) => w.value);
    return opts.every((o) => allowed.includes(o)) ? { opts, ops } : undefined;
  };
  const force = (opts: readonly string[]): boolean => opts.some((o) => ['-f', '--force', '--discard-changes'].includes(o));
  const branch = (op: string): string => (op === '-' ? '@{-1}' : op);
  switch (verb) {
    case 'checkout': {
      const s = split(rest, ['-q', '--quiet', '--detach', '--progress', '--no-progress', '-f', '--force']);
      if (!s || s.ops.length !== 1) return undefined;
      return { kind: force(s.opts) ? 'hard' : 'switch', verb, rev: branch(s.ops[0]!) };
    }
    case 'switch': {
      const s = split(rest, ['-q', '--quiet', '-d', '--detach', '--progress', '--no-progress', '-f', '--force', '--discard-changes']);
      if (!s || s.ops.length !== 1) return undefined;
      return { kind: force(s.opts) ? 'hard' : 'switch', verb, rev: branch(s.ops[0]!) };
    }
    case 'reset': {
      const s = split(rest, ['-q', '--quiet', '--hard', '--merge', '--keep']);
      if (!s || s.ops.length > 1 || s.ops[0] === '-' || !s.opts.some((o) => ['--hard', '--merge', '--keep'].includes(o))) return undefined;
      return { kind: 'hard', verb, rev: s.ops[0] ?? 'HEAD' };
    }
    case 'merge': {
      const s = split(rest, ['-q', '--quiet', '--ff', '--ff-only', '--no-edit']);
      if (!s || s.ops.length !== 1 || s.ops[0] === '-') return undefined;
      return { kind: 'merge', verb, rev: s.ops[0]! };
    }
    case 'stash': {
      const sub = rest[0];
      if (!sub || (sub.value !== 'pop' && sub.value !== 'apply')) return undefined;
      const s = split(rest.slice(1), ['-q', '--quiet', '--index']);
      if (!s || s.ops.length > 1 || s.ops[0] === '-') return undefined;
      const op = s.ops[0];
      // git stash takes a number for stash@{N}.
      return { kind: 'stash', verb: `stash ${sub.value}`, rev: op === undefined ? 'stash@{0}' : /^\d+$/.test(op) ? `stash@{${op}}` : op };
    }
    default:
      return undefined;
  }
}

/** `git apply` options that change neither which files a patch names nor where they lie. */
const APPLY_PLAIN = /^(-p\d+|-C\d+|-[vqR3]|--index|--3way|--verbose|--quiet|--reverse|--reject|--recount|--allow-empty|--unidiff-zero|--ignore-space-change|--ignore-whitespace|--inaccurate-eof|--whitespace=\w+)$/;

/**
 * The patch files `git apply` reads and the leading components it strips from their names (-pN, 1
 * by default), when the argv says so plainly: undefined for standard input, an expansion, an
 * option that moves or filters the names (--directory, --include) or any other.
 */
export function gitApplyPatches(argv: readonly Word[]): { files: Word[]; strip: number } | undefined {
  const v = gitVerb(argv);
  if (v?.verb !== 'apply') return undefined;
  const files: Word[] = [];
  let strip = 1;
  let dashes = false;
  for (const w of v.rest) {
    if (!w.literal || w.glob || w.tilde) return undefined;
    if (!dashes && w.value === '--') dashes = true;
    else if (!dashes && w.value.startsWith('-')) {
      if (w.value === '-' || !APPLY_PLAIN.test(w.value)) return undefined;
      if (/^-p\d+$/.test(w.value)) strip = Number(w.value.slice(2));
    } else files.push(w);
  }
  return files.length > 0 ? { files, strip } : undefined;
}

/**
 * The names a patch gives the files it writes, as `git apply` reads them: `diff --git A B`,
 * `--- A` / `+++ B` (up to a tab), less `strip` leading components; `rename`/`copy` `from`/`to`
 * as they are. Every such line counts, a hunk's removed line `-- x` too (more names, never fewer).
 * Undefined where git's reading is not this one: a quoted name (C escapes), a `diff --git` line
 * whose two names cannot be told apart.
 */
export function patchNames(text: string, strip: number): string[] | undefined {
  const out = new Set<string>();
  const stripped = (name: string): string | undefined => {
    const parts = name.split('/');
    if (parts.length <= strip) return undefined;
    return parts.slice(strip).join('/');
  };
  for (const line of text.split('\n')) {
    let names: string[] = [];
    let strips = true;
    if (line.startsWith('diff --git ')) {
      const words = line.slice(11).replace(/\r$/, '').split(' ');
      if (words.length !== 2) return undefined;
      names = words;
    } else if (line.startsWith('--- ') || line.startsWith('+++ ')) {
      names = [line.slice(4).split('\t')[0]!.replace(/\r$/, '')];
    } else {
      const m = /^(rename|copy) (from|to) (.*)$/.exec(line.replace(/\r$/, ''));
      if (!m) continue;
      names = [m[3]!];
      strips = false;
    }
    for (const n of names) {
      if (n.startsWith('"')) return undefined;
      if (n === '/dev/null' || n.trim() === '') continue;
      const name = strips ? stripped(n.trim()) : n.trim();
      if (name === undefined) return undefined;
      out.add(name);
    }
  }
  return [...out];
}

/**
 * The names every patch file of a `git apply` gives the files it writes (patchNames), the files read
 * where git runs; undefined when one cannot be read (missing, not a regular file, over 4 MiB) or
 * names no file, or is not read as git reads it: the command then counts as rewriting the tree.
 */
export function patchFileNames(patches: { files: readonly Word[]; strip: number }, run: string): string[] | undefined {
  const names: string[] = [];
  for (const f of patches.files) {
    let text: string;
    try {
      text = readSmallText(path.resolve(run, f.value), 4 * 1024 * 1024, true);
    } catch {
      return undefined;
    }
    const these = patchNames(text, patches.strip);
    if (these === undefined || these.length === 0) return undefined;
    names.push(...these);
  }
  return names.length > 0 ? names : undefined;
}
