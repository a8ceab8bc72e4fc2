/**
 * The Bash tool's permission check (Claude Code's bashPermissions), on the
 * analysis of src/bash: every simple command of a compound command is
 * judged, including those inside `$( )`, backticks, process substitutions,
 * subshells, groups, function bodies, `bash -c '…'` and what xargs or
 * `find -exec` run. Files are judged where the kernel will find them
 * (bash-paths.ts): `link/../x` lies next to the link's target.
 *
 *   1. deny rules, on every subcommand (all wrappers and `VAR=` stripped) and
 *      on the raw command → deny
 *   2. paths: a file read that a Read deny rule covers, or written (argument
 *      of rm/mv/cp/tee/…, output redirection) that an Edit deny rule covers
 *      → deny; a file read or written that is one of toolexec's own (its
 *      configuration, its database) → deny (safety)
 *   3. Bash ask rules, and Read or Edit ask rules on the files → ask (type
 *      rule: holds even in bypassPermissions)
 *   4. writes to protected paths, and where an Edit deny rule reaches below:
 *      writes of a tree holding what it denies, git commands rewriting a work
 *      tree (git checkout BRANCH, pull, reset --hard, …; a switch, reset or
 *      stash pop only where a file git lists it writes is denied) → ask (safety)
 *   5. a command that cannot be modelled → ask (type tool, never allow)
 *   6. a write whose target cannot be known before it runs → ask; a read
 *      whose target cannot be known while Read deny rules or toolexec's own
 *      files exist → ask (safety); a recursive read of a directory holding
 *      toolexec's own files, or where Read deny rules deny some → ask (safety)
 *   7. a network redirection (`> /dev/tcp/HOST/PORT`) → ask (type tool: not
 *      an edit, whatever the Edit allow rules or the mode); reads or writes
 *      outside the working directories → ask (working_dir),
 *      unless an Edit allow rule covers a redirection's target
 *   8. more than one `cd`, or `cd` with `git` → ask
 *   9. every file an output redirection writes allowed as an edit would be
 *      (an Edit allow rule, or acceptEdits), and every subcommand allowed —
 *      by an allow rule, as read-only (paths not Read-denied), or in
 *      acceptEdits as mkdir/touch/rm/rmdir/mv/cp/sed inside the working
 *      directories → allow
 *  10. otherwise passthrough (the engine asks; bypassPermissions allows)
 *
 * Safety asks come before the working-directory ask, which
 * bypassPermissions lets through.
 */
import path from 'node:path';
import { analyseBash, analyseBashSync } from '../bash/parser.js';
import { ACCEPT_EDITS_COMMANDS, commandName, grepOptions, pathArgs } from '../bash/paths.js';
import { isReadOnlyCommand } from '../bash/read-only.js';
import { allowCandidates, compileBashRule, denyCandidates, type CompiledBashRule } from '../bash/rule-match.js';
import type { BashAnalysis, SimpleCommand, Word } from '../bash/types.js';
import { SAFE_ENV_VARS, unwrapStages } from '../bash/wrappers.js';
import { runsNamedProgram } from '../bash/grammar.js';
import type { PermissionResult, ToolContext, ToolInput } from '../tool/types.js';
import { commandPaths, containerMounts, globMayBeOption, innermostOf, pathUses, plantsFiles, resolveWord, throughProcDir, unmodelledProgram, workingDirs, type PathUse } from './bash-paths.js';
import { gitConfigReads, gitConfigWrite } from './git-config.js';
import { gitForeignRepository, gitInPlantedRepository, gitMovesStoredContent, gitNamesDirectory, gitPrintsContent, gitRiskyConfigKey, gitRunsGivenCommand, gitForceAdds, gitStashesUntracked, gitApplyPatches, gitDirAbove, gitRewritesWorkTree, gitRewriteTarget, gitTopLevel, patchFileNames, gitVerb, gitWhere, startDirs } from './bash-git.js';
import { gitStages, mayStage, type Staging } from './git-staging.js';
import { gitHookPresent } from './git-hooks.js';
import { GitRewrites, type RewrittenPath } from './git-rewrites.js';
import { starMatch } from '../util/star-match.js';
import { parseGitGlobals } from '../bash/git-globals.js';
import { realpathLoose } from '../workspace.js';
import { treeEscape, type HiddenSkip, type TreeDeps, type TreeEscape } from './tree-reach.js';
import { withHomeExpanded } from './home-words.js';
import { gitExcludeWhitelists, ignoreFileWhitelists, mayWriteIgnoreFile, outerIgnoreWhitelists, rgSkipsHidden } from './rg-hidden.js';
import { hardLinkResult, protectedChangeReason, protectedPathReason, serviceFileMessage } from './filesystem.js';
import { messages } from './messages.js';
import { PATH_RULE_TOOLS } from './rule-index.js';
import { parseRule } from './rule-parser.js';
import type { PermissionRule, ReasonType } from './types.js';
import { oneLine } from '../util/text.js';
import { memoFs, withDecisionMemo } from '../util/decision-memo.js';

/** childEnv: the environment commands run with (RIPGREP_CONFIG_PATH, XDG_CONFIG_HOME); the service's own when not given. */
export type BashPermissionContext = Pick<ToolContext, 'permissions' | 'workspace' | 'session'> & { childEnv?: NodeJS.ProcessEnv };

const compiled = new WeakMap<PermissionRule, CompiledBashRule>();

/**
 * Programs that may make hard links to files they are not given by name: archive extractors, whose
 * members link to any path (`tar -xf a.tar` with a member `x` linked to `.env`, then a member `.env`
 * leaves the denied file under `x` alone), rsync's --link-dest and -H, and container clients' cp.
 */
const UNSEEN_LINKERS = new Set([
  ...['tar', 'gtar', 'bsdtar', 'cpio', 'bsdcpio', 'pax', 'rsync', 'ar', 'star', 'unsquashfs', '7z', '7za', '7zz'],
  // `docker cp c:/x/. .` unpacks the container's tar stream, hard links included, into the directory.
  ...['docker', 'podman', 'nerdctl', 'kubectl'],
]);

/**
 * Writers of a directory that leave what lies below it as it is: mkdir (an existing one stays), touch (its
 * times), rmdir (only an empty one goes).
 */
const KEEPS_BELOW: ReadonlySet<string> = new Set(['mkdir', 'touch', 'rmdir']);

/** The detail of step 4c's ask: what checkBashPermission asks git about before deciding again. */
const GIT_REWRITE_DETAIL = 'git rewrite of a work tree under an Edit deny rule: ';

/** GIT_* variables of the environment commands run with that name no repository, work tree, configuration or object store (and GIT_SSL_*, GIT_HTTP_*: transport). */
const INERT_GIT_VARS: ReadonlySet<string> = new Set([
  'GIT_TERMINAL_PROMPT', 'GIT_PAGER', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR', 'GIT_ASKPASS', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_MERGE_AUTOEDIT',
  'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_COMMITTER_DATE',
]);

function matcherOf(rule: PermissionRule): CompiledBashRule {
  let m = compiled.get(rule);
  if (!m) {
    m = compileBashRule(rule.content ?? '', rule.behavior);
    compiled.set(rule, m);
  }
  return m;
}

function short(s: string, max = 200): string {
  return oneLine(s, max);
}

/** The spellings of a path rules are matched against: where it really leads, and as resolved. Memoised per decision. */
function spellingsOf(ctx: BashPermissionContext): (abs: string) => string[] {
  const memo = new Map<string, string[]>();
  return (abs) => {
    let s = memo.get(abs);
    if (!s) {
      const canonical = ctx.workspace.canonical(abs);
      s = canonical === abs ? [abs] : [canonical, abs];
      memo.set(abs, s);
    }
    return s;
  };
}

function hasPathAskRules(ctx: BashPermissionContext): boolean {
  return [...PATH_RULE_TOOLS.read, ...PATH_RULE_TOOLS.edit].some((t) => ctx.permissions.contentRules(t, 'ask').length > 0);
}

function isReadDenyActive(ctx: BashPermissionContext): boolean {
  return ctx.permissions.contentRules('Read', 'deny').length > 0 || ctx.permissions.isReadDenied(ctx.workspace.root);
}

function isEditDenyActive(ctx: BashPermissionContext): boolean {
  return PATH_RULE_TOOLS.edit.some((t) => ctx.permissions.contentRules(t, 'deny').length > 0);
}

/**
 * Whether a read-only subcommand's reads can be shown not to touch
 * Read-denied files, nor places outside the working directories: never when
 * it reads files no argument names (an option not modelled, a list of names,
 * what xargs supplies).
 */
function readsProvablyAllowed(cmd: SimpleCommand, readDenyActive: boolean, dirs: readonly string[]): boolean {
  const p = commandPaths(cmd);
  if (p.opaque.length > 0) return false;
  if (globsMayBeOptions(cmd, dirs)) return false;
  if (!readDenyActive) return true;
  if (diffReadsDirectory(cmd, dirs)) return false;
  // A tree read got here only when its tree was listed and holds nothing denied, nor a link out (step 6b);
  // find, which that step passes over, would list the names of denied files, which Glob hides.
  if (p.recursive && commandName(innermostOf(cmd).argv) === 'find') return false;
  return p.reads.every((w) => w.literal && !w.glob);
}

/** Whether a glob among the command's arguments could expand to an option (before a `--`). */
function globsMayBeOptions(cmd: SimpleCommand, dirs: readonly string[]): boolean {
  for (const w of innermostOf(cmd).argv.slice(1)) {
    if (w.literal && w.value === '--') return false;
    if (globMayBeOption(w, dirs)) return true;
  }
  return false;
}

/** diff given a directory reads the files inside it (those of the same name on both sides, or all with -N). */
function diffReadsDirectory(cmd: SimpleCommand, dirs: readonly string[]): boolean {
  if (commandName(innermostOf(cmd).argv) !== 'diff') return false;
  for (const w of commandPaths(cmd).reads) {
    for (const d of dirs) {
      for (const abs of resolveWord(w, d) ?? []) {
        try {
          if (memoFs.stat(abs)?.isDirectory()) return true;
        } catch {
          /* not there: nothing read */
        }
      }
    }
  }
  return false;
}

function acceptEditsAllows(cmd: SimpleCommand, dirs: readonly string[]): boolean {
  if (globsMayBeOptions(cmd, dirs)) return false;
  if (!cmd.assignments.every((a) => SAFE_ENV_VARS.has(a.name))) return false;
  const { stages } = unwrapStages(cmd.argv, true);
  const argv = stages[stages.length - 1]!;
  const name = commandName(argv);
  // `./mkdir x` runs ./mkdir, whatever that file is.
  if (name === undefined || !ACCEPT_EDITS_COMMANDS.has(name) || !runsNamedProgram(argv[0]!)) return false;
  const p = pathArgs(argv);
  if (p.opaque.length > 0 || commandPaths(cmd).opaque.length > 0) return false;
  return [...p.reads, ...p.writes].every((w) => w.literal);
}

/** The Edit allow rule covering every place a known target leads to (matched where it really leads, as for the file tools). */
function editAllowRule(u: PathUse, ctx: BashPermissionContext): PermissionRule | undefined {
  if (u.uncertain || u.abs.length === 0) return undefined;
  let first: PermissionRule | undefined;
  for (const abs of u.abs) {
    const rule = ctx.permissions.pathRule('edit', 'allow', [ctx.workspace.canonical(abs)]);
    if (!rule) return undefined;
    first ??= rule;
  }
  return first;
}

/** Why a write is to a protected path: any place it may lead, or, when that is not known, the components it names. */
function protectedWrite(u: PathUse, spellings: (abs: string) => string[], ctx: BashPermissionContext): { abs: string; why: string } | undefined {
  for (const abs of u.abs) {
    // The directory a glob only starts in (`*.md` in the workspace root) is not moved or removed: the
    // scripts toolexec runs are judged among the glob's matches, not by the directory that holds them.
    const inside = u.globDirs?.includes(abs) ?? false;
    let why: string | undefined;
    for (const p of spellings(abs)) if ((why = protectedChangeReason(p, ctx.workspace, ctx.childEnv ?? process.env, inside)) !== undefined) break;
    if (why) return { abs, why };
  }
  if (u.uncertain) {
    const why = protectedPathReason(u.word.value);
    if (why) return { abs: u.word.raw, why };
  }
  return undefined;
}

/** Where a link through a process's /proc directory leads, as a tree walk is told: somewhere in the command's own process. */
const PROC_LINK_TARGET = "/proc/<the command's process>/… (its working directory, root or files)";

/** What bash opens as a socket instead of a file, in a redirection (it compares the expanded word, so only this spelling). */
const NETWORK_REDIRECT = /^\/dev\/(tcp|udp)\/[^/]+\/[^/]+$/;

/** A base-name glob as fnmatch takes it without flags, in the forms modelled here: `*` and `?` (which match a leading dot too) and plain characters. */
const SIMPLE_GLOB = /^[\w.*?+@%,:-]+$/;
const GREP_NAMES = new Set(['grep', 'egrep', 'fgrep']);

/**
 * The files of a tree `grep -r` reads, by base name, when its `--include`/`--exclude` options say
 * (GNU grep: the last pattern that matches decides; a name none matches is read unless the first
 * of them is an --include). Undefined, every file read, when it has none, or one not modelled here
 * (an expansion, an option grep's table does not know, a pattern with brackets, braces or a
 * backslash, --exclude-from, one past the first operand where POSIXLY_CORRECT may be set).
 */
function grepNameFilter(argv: readonly Word[], a: BashAnalysis): ((base: string) => boolean) | undefined {
  if (!GREP_NAMES.has(commandName(argv) ?? '')) return undefined;
  // As grep's getopt reads the line: a word that spells --exclude=.env as the value of -e or
  // --exclude-dir (or after --) excludes nothing.
  const options = grepOptions(argv);
  if (options === undefined) return undefined;
  const rules: Array<{ include: boolean; glob: string }> = [];
  for (const o of options) {
    if (o.name === '--exclude-from') return undefined;
    if (o.name !== '--include' && o.name !== '--exclude') continue;
    // `POSIXLY_CORRECT=1 grep -r SECRET . --exclude=.env` reads .env (and a file named --exclude=.env).
    if (o.afterOperand && mayBePosix(a)) return undefined;
    const word = o.value;
    const glob = word?.value;
    if (glob === undefined || !word?.literal || !SIMPLE_GLOB.test(glob)) return undefined;
    // Unquoted, the shell may expand the pattern to a file's name (`--exclude=*.env` to a planted
    // `--exclude=x.env`), which excludes less than the pattern would; an --include so expanded includes less.
    if (word.glob && o.name === '--exclude') return undefined;
    rules.push({ include: o.name === '--include', glob });
  }
  if (rules.length === 0) return undefined;
  return (base) => {
    for (let k = rules.length - 1; k >= 0; k--) if (starMatch(rules[k]!.glob, base, true)) return rules[k]!.include;
    return !rules[0]!.include;
  };
}

/** Commands that give a shell variable a value (exported under `set -a`) or the environment one, or run a file that may. */
const SETTERS = new Set(['export', 'declare', 'typeset', 'local', 'readonly', 'env', 'set', 'read', 'mapfile', 'readarray', 'printf', 'getopts', 'let', 'eval', 'exec', 'source', '.']);

/**
 * Whether grep may run with POSIXLY_CORRECT in its environment, where getopt takes no option past the
 * first operand: the service's environment has it, a word of the line spells it, or a command that
 * sets variables is given a name no word spells (an expansion) or runs a file (`source x.sh`).
 */
function mayBePosix(a: BashAnalysis): boolean {
  if (process.env.POSIXLY_CORRECT !== undefined) return true;
  return a.commands.some((c) => {
    if (c.assignments.some((x) => /POSIXLY|^(BASH_)?ENV$/.test(x.name))) return true;
    if (c.argv.some((w) => w.raw.includes('POSIXLY') || w.value.includes('POSIXLY'))) return true;
    const name = commandName(c.argv);
    return name !== undefined && SETTERS.has(name) && (name === 'source' || name === '.' || c.argv.some((w) => !w.literal));
  });
}

/**
 * The directories below its operands `grep -r` does not enter, by base name, from its `--exclude-dir`
 * options: GNU grep strips a pattern's trailing slashes and matches it (fnmatch, no flags: `*`
 * matches a leading dot, case counts) against the base name of each directory met below an operand,
 * so `--exclude-dir=node_modules` skips node_modules at any depth and `--exclude-dir=a/node_modules`
 * or `./node_modules` none. Only patterns modelled as --include's are applied (every other one is left
 * out: the reader is taken to enter what it names), none when grep's options are not known, nor one
 * that may be a file name instead (past the first operand where POSIXLY_CORRECT may be set, or
 * unquoted where the shell may expand it). A command-line operand is always listed, though grep may
 * skip one that matches. A name that is not all ASCII is never left out. Undefined when none applies.
 */
function grepExcludedDirs(argv: readonly Word[], a: BashAnalysis): ((base: string) => boolean) | undefined {
  if (!GREP_NAMES.has(commandName(argv) ?? '')) return undefined;
  const options = grepOptions(argv);
  if (options === undefined) return undefined;
  const globs: string[] = [];
  for (const o of options) {
    if (o.name !== '--exclude-dir') continue;
    if (o.afterOperand && mayBePosix(a)) continue;
    const word = o.value;
    if (!word?.literal || word.glob) continue;
    const glob = word.value.replace(/\/+$/, '');
    if (!SIMPLE_GLOB.test(glob)) continue;
    globs.push(glob);
  }
  // fnmatch's `?` is a character of grep's locale (a byte in C) and the name bytes, the listing's
  // names UTF-16: only an ASCII name, where the three agree, is left out (`a??` matches `a😀` here only).
  return globs.length === 0 ? undefined : (base) => /^[\x00-\x7f]*$/.test(base) && globs.some((g) => starMatch(g, base, true));
}

/** The tree's listing for a reader whose base-name filter (grep's --include) or skipping of hidden names (rg) is applied; listed again with every name when an ignore file may un-hide one. */
function listTree(d: string, argv: readonly Word[], a: BashAnalysis, deps: TreeDeps, hidden: HiddenSkip | undefined): TreeEscape | undefined {
  const names = grepNameFilter(argv, a) ?? true;
  const excluded = grepExcludedDirs(argv, a);
  const listed = treeEscape(d, deps, names, hidden, excluded);
  return hidden?.whitelist === undefined ? listed : treeEscape(d, deps, names, undefined, excluded);
}

/** git verbs that change neither the work tree nor what git ignores there: a staging in the same line is judged on the tree as it is. */
const GIT_KEEPS_WORK_TREE: ReadonlySet<string> = new Set(['add', 'stage', 'commit', 'push', 'status', 'fetch', 'tag', 'log']);

function gitKeepsWorkTree(argv: readonly Word[]): boolean {
  const v = gitVerb(argv);
  return v !== undefined && GIT_KEEPS_WORK_TREE.has(v.verb);
}

/** What a path is now, following links. */
function fileKind(p: string): 'directory' | 'file' | 'missing' {
  try {
    const st = memoFs.stat(p);
    return st === undefined ? 'missing' : st.isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * The decision for an analysed command. `j`: the analysis its files are judged by, where `$HOME/x`
 * is the home directory's (home-words.ts); rules and the read-only allowance see the command as
 * written (`echo $HOME` is not read-only, as in Claude Code).
 */
export function decideBashPermission(command: string, a: BashAnalysis, ctx: BashPermissionContext, j: BashAnalysis = a, git?: GitRewrites): PermissionResult {
  // Each path's realpath, stat and the like once per decision (util/decision-memo.ts), none kept for the next.
  return withDecisionMemo(() => decideNow(command, a, ctx, j, git));
}

/**
 * `git`: what git said a work-tree rewrite changes (git-rewrites.ts); without it, or without an
 * answer to the question met, such a command asks wherever an Edit deny rule reaches its tree.
 */
function decideNow(command: string, a: BashAnalysis, ctx: BashPermissionContext, j: BashAnalysis, git: GitRewrites | undefined): PermissionResult {
  const q = ctx.permissions;
  const denyRules = q.contentRules('Bash', 'deny');
  const askRules = q.contentRules('Bash', 'ask');
  const allowRules = q.contentRules('Bash', 'allow');
  const perCommand = a.commands.map((c) => ({ cmd: c, deny: denyCandidates(c) }));

  // 1. Deny rules: the raw text, then every subcommand in every spelling.
  const raw = command.trim();
  for (const r of denyRules) {
    const m = matcherOf(r);
    const hit = m.test(raw) ? raw : perCommand.find((p) => p.deny.some((c) => m.test(c)))?.cmd.text;
    if (hit !== undefined) {
      return { behavior: 'deny', message: `Permission to use Bash with command ${short(hit)} has been denied.`, type: 'rule', detail: r.raw };
    }
  }

  // 2. Files read or written that Read or Edit deny rules cover, in any spelling.
  const cwds = workingDirs(j, ctx.session.cwd, ctx.workspace.home);
  // Where each command starts (`env -C DIR`), asked by four steps: once per command.
  const startsMemo = new Map<SimpleCommand, string[] | undefined>();
  const startsOf = (cmd: SimpleCommand): string[] | undefined => {
    if (!startsMemo.has(cmd)) startsMemo.set(cmd, startDirs(cmd, cwds.dirs, ctx.workspace.home));
    return startsMemo.get(cmd);
  };
  const uses = pathUses(j, cwds);
  const spellings = spellingsOf(ctx);
  const serviceFiles = ctx.workspace.hasServiceFiles;
  let linkUnknown: PermissionResult | undefined;
  const readLinks = q.hardLinkChecker('read');
  const editLinks = q.hardLinkChecker('edit');
  // A command that may give a denied file another name unseen (an archive's hard link member, then one
  // replacing the denied name): its denied files are met by identity now, before it runs.
  if (j.commands.some((c) => UNSEEN_LINKERS.has(commandName(innermostOf(c).argv) ?? ''))) {
    readLinks.meet();
    editLinks.meet();
  }
  for (const u of uses) {
    for (const abs of u.abs) {
      const all = spellings(abs);
      if (u.kind === 'read') {
        const rule = q.pathRule('read', 'deny', all);
        const own = !rule && serviceFiles ? all.map((p) => ctx.workspace.serviceFileReason(p)).find((x) => x !== undefined) : undefined;
        if (own) return { behavior: 'deny', message: serviceFileMessage('Bash', own), type: 'safety', detail: own };
        if (rule || q.isReadDenied(abs)) {
          return { behavior: 'deny', message: `Permission to read ${abs} has been denied.`, type: 'rule', detail: rule?.raw ?? 'Read' };
        }
      } else {
        const rule = q.pathRule('edit', 'deny', all);
        if (rule) return { behavior: 'deny', message: `Permission to write ${abs} has been denied.`, type: 'rule', detail: rule.raw };
        const own = serviceFiles ? all.map((p) => ctx.workspace.serviceFileReason(p)).find((x) => x !== undefined) : undefined;
        if (own) return { behavior: 'deny', message: serviceFileMessage('Bash', own), type: 'safety', detail: own };
      }
      // The same file under another name: a write through a hard link (`>> x`, `tee -a x`) changes it in place.
      const link = (u.kind === 'read' ? readLinks : editLinks)(all[0]!);
      if (link && !('unknown' in link)) return hardLinkResult('Bash', abs, link);
      if (link) linkUnknown ??= hardLinkResult('Bash', abs, link);
    }
  }

  // 2b. Configuration files git prints values from (`git config -l`, `git remote -v`).
  if (isReadDenyActive(ctx)) {
    for (const cmd of j.commands) {
      for (const dir of startsOf(cmd) ?? []) {
        for (const file of gitConfigReads(innermostOf(cmd).argv, dir, ctx.workspace.home, ctx.childEnv ?? process.env)) {
          const rule = q.pathRule('read', 'deny', spellings(file));
          if (rule) return { behavior: 'deny', message: `Permission to read ${file} has been denied.`, type: 'rule', detail: rule.raw };
        }
      }
    }
  }

  // 3. Ask rules: Bash ones on the commands, Read and Edit ones on the files.
  const askHit = askRules.find((r) => {
    const m = matcherOf(r);
    return m.test(raw) || perCommand.some((p) => p.deny.some((c) => m.test(c)));
  });
  if (askHit) {
    return { behavior: 'ask', message: `${messages.notGranted('Bash')} (the rule ${askHit.raw} asks for approval)`, type: 'rule', detail: askHit.raw };
  }
  for (const u of hasPathAskRules(ctx) ? uses : []) {
    for (const abs of u.abs) {
      const rule = q.pathRule(u.kind === 'read' ? 'read' : 'edit', 'ask', spellings(abs));
      if (rule) {
        return { behavior: 'ask', message: `${messages.notGranted('Bash')} (the rule ${rule.raw} asks for approval of ${abs})`, type: 'rule', detail: rule.raw };
      }
    }
  }

  // 4. A file with several names, one of which may be a denied file (bypass-immune); writes to protected files.
  if (linkUnknown) return linkUnknown;
  for (const cmd of j.commands) {
    // git obeys a `-c KEY=VALUE` at once: a key that runs a program or reads a file is code or a read no rule sees.
    const runs = gitRunsGivenCommand(innermostOf(cmd).argv);
    if (runs !== undefined) {
      return { behavior: 'ask', message: `Bash wants to run git with a command given on its command line: ${runs}; it needs approval.`, type: 'safety', detail: runs };
    }
    const key = gitRiskyConfigKey(innermostOf(cmd).argv);
    if (key !== undefined) {
      const why =
        key === '--exec-path'
          ? 'git --exec-path=DIR runs its commands and remote helpers from DIR'
          : `git -c ${short(key, 80)} sets a configuration key that can make git run a program or read a file`;
      return { behavior: 'ask', message: `Bash wants to run git with a configuration given on its command line: ${why}; it needs approval.`, type: 'safety', detail: why };
    }
    // A directory another command of the line fills (an archive, a clone, a checkout) may be laid out as a repository by then.
    // So may one a cd of the line leads to: git finds the repository from its working directory.
    // `env -C DIR git …` as much as `git -C DIR …`.
    const starts = startsOf(cmd);
    const elsewhere = cwds.cdCount > 0 || starts === undefined || starts.some((d) => !cwds.dirs.includes(d));
    const pointed = gitNamesDirectory(innermostOf(cmd).argv) || (elsewhere && commandName(innermostOf(cmd).argv) === 'git');
    if (pointed && j.commands.some((c) => c !== cmd && plantsFiles(innermostOf(c).argv))) {
      const why = 'git would obey the configuration of a directory another command of the line writes files into (its config, hooks and aliases can run a program)';
      return { behavior: 'ask', message: `Bash wants to run git on another repository directory: ${why}; it needs approval.`, type: 'safety', detail: why };
    }
    // `env -C DIR git …`: git finds its repository from where the wrapper starts it; from where no word says, any.
    if (starts === undefined && commandName(innermostOf(cmd).argv) === 'git') {
      const why = 'git runs where no word of the line says (a wrapper\'s root or login shell\'s home, a directory that is an expansion or a pattern, find -execdir), so which repository and configuration it obeys is not known';
      return { behavior: 'ask', message: `Bash wants to run git in a directory no check can see: ${why}; it needs approval.`, type: 'safety', detail: why };
    }
    // `cd src/p && git fetch`, or plain `git x` in a workspace with no .git: git finds a repository laid out in ordinary
    // files (which the Write tool writes) from where it runs.
    if (gitInPlantedRepository(innermostOf(cmd).argv, starts ?? [], ctx.workspace.root)) {
      const why = 'git would obey the configuration of a repository directory that is not a .git, where it runs (its config, hooks and aliases can run a program)';
      return { behavior: 'ask', message: `Bash wants to run git on another repository directory: ${why}; it needs approval.`, type: 'safety', detail: why };
    }
    for (const dir of starts ?? []) {
      const repo = gitForeignRepository(innermostOf(cmd).argv, dir, ctx.workspace.root, ctx.workspace.home);
      if (repo !== undefined) {
        const why = `git would obey the configuration of ${short(repo, 120)}, a repository directory that is not a .git (its config, hooks and aliases can run a program)`;
        return { behavior: 'ask', message: `Bash wants to run git on another repository directory: ${why}; it needs approval.`, type: 'safety', detail: why };
      }
    }
  }
  for (const cmd of j.commands) {
    for (const dir of startsOf(cmd) ?? cwds.dirs) {
      const file = gitConfigWrite(innermostOf(cmd).argv, dir, ctx.workspace.home);
      let why = file === undefined ? undefined : spellings(file).map((p) => protectedChangeReason(p, ctx.workspace, ctx.childEnv ?? process.env)).find((x) => x !== undefined);
      // The system-wide file (`git config --system`, where the service runs as root) is read by every git command too.
      if (file === '/etc/gitconfig') why ??= '/etc/gitconfig is the configuration every git command reads';
      if (why) {
        return { behavior: 'ask', message: `Bash wants to change git's configuration in ${file}: ${why}, which always needs a person's approval.`, type: 'safety', detail: why };
      }
    }
  }

  const modelled = uses.filter((u) => !u.fallback);
  for (const u of modelled) {
    if (u.kind !== 'write') continue;
    const hit = protectedWrite(u, spellings, ctx);
    if (hit) {
      return { behavior: 'ask', message: `Bash wants to modify ${hit.abs}: ${hit.why}, which always needs a person's approval.`, type: 'safety', detail: hit.why };
    }
  }

  // 4b. A write to a directory changes what lies below it: `rm -r` and `mv` take every file there, `chmod -R` changes
  // each, a copy or an archive extracted into it overwrites or adds any. An Edit deny rule on a file below held
  // against `rm src/deep/x` but not `rm -rf src` (nor `rm -rf` of the workspace, `mv src y`, `tar xf a.tar`), in
  // acceptEdits and bypassPermissions. Where a rule may match below, a tree holding a file it covers (or a link to
  // one, or more than can be listed) asks; one that a program puts files no check can list in asks whatever is there.
  if (isEditDenyActive(ctx)) {
    const editDeps: TreeDeps = {
      canonical: (p) => ctx.workspace.canonical(p),
      fold: (p) => ctx.workspace.fold(p),
      readDenied: (abs, canonical) => q.pathRule('edit', 'deny', canonical === undefined ? spellings(abs) : [canonical, abs]) !== undefined,
      deniedBelow: (dir) => q.pathRuleBelow('edit', 'deny', [dir])?.raw,
      links: editLinks,
      rules: 'an Edit deny rule',
    };
    for (const u of modelled) {
      if (u.kind !== 'write' || u.redirect || u.program === undefined || KEEPS_BELOW.has(u.program)) continue;
      for (const abs of u.abs) {
        if (u.globDirs?.includes(abs) || fileKind(abs) !== 'directory') continue;
        const rule = q.pathRuleBelow('edit', 'deny', spellings(abs));
        if (!rule) continue;
        const found: TreeEscape | undefined = u.fills ? { path: abs, why: `${u.program} may put files no check can list there` } : treeEscape(abs, editDeps, true);
        if (!found) continue;
        const what = 'unknown' in found ? 'more than toolexec lists' : `${found.path}, ${found.why}`;
        return {
          behavior: 'ask',
          message: `This Bash command (${u.program}) changes what lies under ${abs}, where the rule ${rule.raw} denies edits: ${what}; it needs approval.`,
          type: 'safety',
          detail: `write of a tree under an Edit deny rule: ${rule.raw}`,
        };
      }
    }
  }

  /**
   * Whether git's own list of what a command rewrites holds for the command as it will run: git where
   * it starts (no wrapper, no assignment, nothing on the line naming a GIT_* variable, which may point
   * it at another repository: `GIT_DIR=x git checkout y`), with no such variable in the environment
   * commands run with but those that name no repository, no hook to run (a program that writes what
   * it likes), and every other command of the line read-only (`git branch -f main evil && git checkout
   * main` moves the target before it is switched to).
   */
  const gitListsRewrite = (cmd: SimpleCommand, run: string): boolean =>
    cmd.assignments.length === 0 &&
    innermostOf(cmd).argv.length === cmd.argv.length &&
    !j.commands.some((c) => c.text.includes('GIT_')) &&
    !command.includes('GIT_') &&
    Object.keys(ctx.childEnv ?? process.env).every((k) => !k.startsWith('GIT_') || INERT_GIT_VARS.has(k) || /^GIT_(SSL|HTTP)_/.test(k)) &&
    j.commands.every((c) => c === cmd || isReadOnlyCommand(c)) &&
    gitHookPresent(run, ctx.childEnv ?? process.env) === undefined;
  /** The first path git would write that an Edit deny rule covers, judged as a write of it (through links, every spelling), with each directory it creates or may remove on the way, and below a submodule or a directory it replaces. */
  const rewrittenDenied = (changed: readonly RewrittenPath[], top: string): { abs: string; rule: PermissionRule } | undefined => {
    const seen = new Set<string>();
    for (const p of changed) {
      const abs = path.join(top, p.rel);
      const below = p.gitlink || memoFs.lstat(abs)?.isDirectory() === true;
      const rule = q.pathRule('edit', 'deny', spellings(abs)) ?? (below ? q.pathRuleBelow('edit', 'deny', spellings(abs)) : undefined);
      if (rule) return { abs, rule };
      for (let d = path.dirname(abs); d.length > top.length && !seen.has(d); d = path.dirname(d)) {
        seen.add(d);
        const r = q.pathRule('edit', 'deny', spellings(d));
        if (r) return { abs: d, rule: r };
      }
    }
    return undefined;
  };

  // 4c. git commands that rewrite the work tree wholesale (`git checkout other`, `git pull`, `git reset --hard`,
  // `git stash pop`): any file of the tree may change, and no word names it. With Edit(./src/**) denied, `git
  // checkout other` replaced src/ in every mode (bypassPermissions ran it). Where an Edit deny rule reaches into
  // the tree (or the paths the command names, `git clean -f build`), it asks; without one, as before. Where git can
  // list what it writes (a branch switch, reset --hard, stash pop: gitRewriteTarget), only a listed path a rule
  // covers asks: under Edit(.env), every branch switch asked, with no .env in either commit.
  if (isEditDenyActive(ctx)) {
    for (const cmd of j.commands) {
      const argv = innermostOf(cmd).argv;
      if (commandName(argv) !== 'git') continue;
      const r = gitRewritesWorkTree(argv);
      if (!r) continue;
      const globals = parseGitGlobals(argv);
      for (const dir of startsOf(cmd) ?? cwds.dirs) {
        const where = gitWhere(globals, dir, ctx.workspace.home);
        const top = where.workTree ?? gitTopLevel(where.run);
        let regions = r.paths ? r.paths.map((w) => (w.tilde ? undefined : path.resolve(where.run, w.value))) : [top];
        // `git apply fix.patch`: the files its patches name, from the top of the work tree or where git runs (as the
        // patch's kind has it): a patch that names no file a rule covers is as before. Not with another command on the
        // line, which may write the patch before git reads it (`printf … > p.patch && git apply p.patch`).
        const patches = r.verb === 'apply' && top !== undefined && j.commands.length === 1 ? gitApplyPatches(argv) : undefined;
        const names = patches && patchFileNames(patches, where.run);
        if (names) regions = names.flatMap((n) => [path.resolve(top!, n), path.resolve(where.run, n)]);
        // A work tree no check can place (an expansion for -C, no .git, one git may pass over or whose config names a work tree): any rule may be reached.
        const unknown = where.unknown || regions.includes(undefined);
        const rule = unknown ? undefined : regions.map((abs) => q.pathRule('edit', 'deny', spellings(abs!)) ?? q.pathRuleBelow('edit', 'deny', spellings(abs!))).find((x) => x !== undefined);
        if (!rule && !unknown) continue;
        // What git can list of the files it changes (git-rewrites.ts): only those are judged, as writes of them.
        // The target first: a pure parse, where gitListsRewrite reads the environment and the hooks directory.
        const t = rule && !r.paths && top !== undefined && where.gitDir === undefined && where.workTree === undefined ? gitRewriteTarget(argv) : undefined;
        if (t && top !== undefined && gitListsRewrite(cmd, where.run)) {
          const changed = git?.answer({ top, kind: t.kind, rev: t.rev, branchFirst: t.verb !== 'reset' });
          if (changed) {
            const hit = rewrittenDenied(changed, top);
            if (!hit) continue;
            return {
              behavior: 'ask',
              message: `This Bash command (git ${t.verb}) changes ${hit.abs}, where the rule ${hit.rule.raw} denies edits; it needs approval.`,
              type: 'safety',
              detail: `${GIT_REWRITE_DETAIL}${hit.rule.raw}`,
            };
          }
        }
        const at = r.paths ? regions.join(', ') : (top ?? 'a work tree no check can place');
        const by = rule ? `where the rule ${rule.raw} denies edits` : 'which an Edit deny rule may reach';
        return {
          behavior: 'ask',
          message: `This Bash command (git ${r.verb}) may change any file under ${at}, ${by}; it needs approval.`,
          type: 'safety',
          detail: `${GIT_REWRITE_DETAIL}${rule?.raw ?? 'unknown work tree'}`,
        };
      }
    }
  }

  // 5. A command that cannot be modelled is never allowed by its content. When
  // Bash deny or ask rules exist, or Read or Edit deny rules (a command that
  // cannot be read cannot be shown not to read or write what they deny), it is
  // not allowed by a whole-tool allow rule, a hook's allow or bypassPermissions
  // either (what an expansion hides could be what they forbid), so the ask is a
  // safety one; without such rules, as in Claude Code, those may allow it.
  const unverifiable: ReasonType = denyRules.length > 0 || askRules.length > 0 || isReadDenyActive(ctx) || isEditDenyActive(ctx) ? 'safety' : 'tool';
  if (a.tooComplex !== undefined) {
    return {
      behavior: 'ask',
      message: `This Bash command cannot be checked safely (${a.tooComplex}); it needs approval.`,
      type: unverifiable,
      detail: `too complex: ${a.tooComplex}`,
    };
  }

  // 6. Files whose location is not known: what an Edit or Read deny rule
  // forbids could be what they are.
  const unknownWrite = modelled.find((u) => u.kind === 'write' && u.uncertain);
  if (unknownWrite) {
    const shown = short(unknownWrite.word.raw, 80);
    return {
      behavior: 'ask',
      message: `This Bash command writes to ${shown}, whose location cannot be known before it runs; it needs approval.`,
      type: unverifiable === 'safety' || isEditDenyActive(ctx) ? 'safety' : 'tool',
      detail: `unknown write target: ${shown}`,
    };
  }
  const unknownRead = modelled.find((u) => u.kind === 'read' && u.uncertain);
  if (unknownRead && (serviceFiles || isReadDenyActive(ctx))) {
    const shown = short(unknownRead.word.raw, 80);
    return {
      behavior: 'ask',
      message: `This Bash command reads ${shown}, whose location cannot be known before it runs, while Read deny rules or toolexec's own files (its configuration, its database) exist; it needs approval.`,
      type: 'safety',
      detail: `unknown read target: ${shown}`,
    };
  }

  // 6b. A reader of whole trees (`grep -r`, `rg`, `cp -r`) given a directory reads every
  // file below it: one a Read deny rule covers may be among them.
  const readDenyActive = isReadDenyActive(ctx);
  const treeDeps: TreeDeps = {
    // A link inside the tree through /proc/self (or a pid) leads, for the command, into its own
    // process (its working directory: `src/p` -> /proc/self/cwd), not into toolexec's: not known here.
    canonical: (p) => (throughProcDir(p) ? PROC_LINK_TARGET : ctx.workspace.canonical(p)),
    fold: (p) => ctx.workspace.fold(p),
    readDenied: (abs, canonical) => abs === PROC_LINK_TARGET || q.isReadDenied(abs, canonical),
    deniedBelow: (dir) => q.pathRuleBelow('read', 'deny', [dir])?.raw,
    links: readLinks,
  };
  const env = ctx.childEnv ?? process.env;
  /**
   * Where the work tree below `dir`, listed with every name (ignored ones too) and `.git` left out,
   * holds a denied file or a link or hard link to one that git would store (`takes`, all by default):
   * the look of both checks below.
   */
  const gitStoresDenied = (dir: string, takes?: (p: string, isDir: boolean) => boolean): TreeEscape | undefined =>
    treeEscape(dir, treeDeps, true, undefined, (base) => base === '.git', takes);
  /**
   * `git stash -u` (or -a) stores every untracked file of the work tree, `git add -f` every file below
   * its operands, ignored ones too: none a Read deny rule covers when the work tree holds none
   * (gitStoresDenied, taking every file), or, for `git add -f`, when every operand is a plain name of
   * a file, judged as a read already. Only for git where it starts (no -C, --git-dir, --work-tree,
   * nor GIT_DIR/GIT_WORK_TREE in the environment), in a line whose other commands are read-only (none
   * moves a file in before it runs).
   */
  const storesNothingDenied = (cmd: SimpleCommand): boolean => {
    const argv = innermostOf(cmd).argv;
    const forced = gitForceAdds(argv);
    if (!(gitStashesUntracked(argv) || forced) || gitNamesDirectory(argv) || env.GIT_DIR !== undefined || env.GIT_WORK_TREE !== undefined) return false;
    if (!j.commands.every((c) => c === cmd || isReadOnlyCommand(c))) return false;
    const starts = startsOf(cmd);
    if (starts === undefined) return false;
    if (forced?.plain && starts.every((s) => forced.operands.every((w) => fileKind(path.resolve(s, w.value)) === 'file'))) return true;
    return starts.every((s) => {
      const top = gitTopLevel(s);
      return top !== undefined && gitStoresDenied(top) === undefined;
    });
  };
  /**
   * `git add -A` (`.`, a directory, `:/`), `git add -u`, `git commit -a`, `git stash` (git-staging.ts):
   * the work tree they cover holds no denied file nor link to one that git would stage (gitStoresDenied
   * taking one not surely ignored, or that may be tracked; for -u, commit -a and stash only the latter).
   * Only for git where it starts or where its `-C` options lead (not --git-dir, --work-tree, --bare,
   * nor GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE in the environment), in a line whose other commands
   * are read-only or git verbs that change neither the work tree nor what it ignores (add, commit,
   * push, …), and which writes no file that may be an ignore file (`echo > .gitignore && git add -A`).
   */
  const stagesDenied = (cmd: SimpleCommand, staging: Staging): TreeEscape | undefined => {
    const unknown: TreeEscape = { unknown: true };
    const argv = innermostOf(cmd).argv;
    if (env.GIT_DIR !== undefined || env.GIT_WORK_TREE !== undefined || env.GIT_INDEX_FILE !== undefined) return unknown;
    const g = parseGitGlobals(argv);
    if (g.expansions.length > 0 || g.options.some((o) => o.name === '--git-dir' || o.name === '--work-tree' || o.name === '--bare')) return unknown;
    if (!j.commands.every((c) => c === cmd || isReadOnlyCommand(c) || gitKeepsWorkTree(innermostOf(c).argv))) return unknown;
    if (uses.some((u) => u.kind === 'write' && mayWriteIgnoreFile(u.abs, u.uncertain))) return unknown;
    const starts = startsOf(cmd);
    if (starts === undefined) return unknown;
    for (const s of starts) {
      const where = gitWhere(g, s, ctx.workspace.home);
      if (where.unknown) return unknown;
      const top = gitTopLevel(where.run);
      // No .git there nor above: git finds no repository (one laid out in ordinary files asks at step 4) and stages nothing.
      if (top === undefined && !gitDirAbove(where.run)) continue;
      if (top === undefined) return unknown;
      // git takes a pathspec's `..` from where it really runs (`git -C link add ..` is the parent of link's target).
      const named = staging.names?.map((w) => path.resolve(realpathLoose(where.run), w.value));
      // A name that is a file was judged as a read; one not there stages nothing but its removal (a plain name with no
      // global option but -C is matched as written: no pattern, magic, nor --icase-pathspecs or -c core.ignoreCase).
      const trees = named === undefined ? [top] : named.filter((p) => fileKind(p) === 'directory').map(realpathLoose);
      for (const t of trees) {
        const found = gitStoresDenied(t, (p, isDir) => mayStage(staging.scope, top, p, isDir));
        if (found) return found;
      }
    }
    return undefined;
  };
  // 6a. git printing what it stores (`git show HEAD:.env`, `git log -p`, `git grep`):
  // tracked files' contents, whose paths no Read deny rule can be checked against.
  if (readDenyActive) {
    for (const cmd of j.commands) {
      const moves = gitMovesStoredContent(innermostOf(cmd).argv);
      if (moves && !storesNothingDenied(cmd)) {
        return { behavior: 'ask', message: `This Bash command (${moves}) moves contents git stores past Read deny rules; it needs approval.`, type: 'safety', detail: moves };
      }
      const staging = gitStages(innermostOf(cmd).argv);
      const staged = staging && stagesDenied(cmd, staging);
      if (staging && staged) {
        const what = 'unknown' in staged ? 'a work tree toolexec cannot look through (too large, or git may take another, or another command of the line may change what git ignores)' : `${staged.path}, ${staged.why}`;
        return {
          behavior: 'ask',
          message: `This Bash command (${staging.what}) would stage ${what}, for git to store and send wherever it is pushed; it needs approval.`,
          type: 'safety',
          detail: `${staging.what} stages what Read deny rules cover: ${'unknown' in staged ? 'unknown work tree' : staged.path}`,
        };
      }
      const shown = gitPrintsContent(innermostOf(cmd).argv);
      if (shown) {
        return {
          behavior: 'ask',
          message: `This Bash command (git ${shown}) prints the contents of files git tracks, which Read deny rules cannot be checked against; it needs approval.`,
          type: 'safety',
          detail: `git ${shown} prints tracked contents while Read deny rules exist`,
        };
      }
    }
  }
  // rg skips hidden names below its trees (rg-hidden.ts): so does their listing, where nothing can un-hide one.
  const rgHidden = (cmd: SimpleCommand): boolean =>
    rgSkipsHidden(cmd, raw, env) && !uses.some((u) => u.kind === 'write' && mayWriteIgnoreFile(u.abs, u.uncertain)) && j.commands.every((c) => c === cmd || isReadOnlyCommand(c));
  const hiddenSkip = (d: string): HiddenSkip | undefined =>
    outerIgnoreWhitelists(d, ctx.workspace.home, env) ? undefined : { whitelists: (f, git) => (git ? gitExcludeWhitelists(f) : ignoreFileWhitelists(f)) };
  if (readDenyActive || serviceFiles) {
    for (const cmd of j.commands) {
      const argv = innermostOf(cmd).argv;
      const p = commandPaths(cmd);
      // A directory mounted into a container (`docker run -v "$PWD":/w`): whatever runs there may read every file below it.
      const mounts = containerMounts(argv, a);
      // find lists names; it does not read contents.
      if ((!p.recursive || commandName(argv) === 'find') && mounts.length === 0) continue;
      // By spelling, not identity: the archivers (bash/archive-paths.ts) make new words for members under -C.
      const dirs =
        mounts.length > 0
          ? [...new Set(mounts.flatMap((m) => cwds.dirs.flatMap((c) => resolveWord(m, c) ?? [])))]
          : p.reads.length > 0
            ? uses.filter((u) => u.kind === 'read' && p.reads.some((w) => w.raw === u.word.raw && w.value === u.word.value)).flatMap((u) => u.abs)
            : cwds.dirs;
      for (const d of dirs) {
        const own = serviceFiles ? spellings(d).map((x) => ctx.workspace.serviceFileBelow(x)).find((x) => x !== undefined) : undefined;
        if (own) {
          return {
            behavior: 'ask',
            message: `This Bash command reads every file under ${d}, which holds ${own}, one of toolexec's own files (its configuration or database); it needs approval.`,
            type: 'safety',
            detail: `recursive read of toolexec's own files: ${own}`,
          };
        }
        if (!readDenyActive) continue;
        const rule = q.pathRuleBelow('read', 'deny', spellings(d));
        // A rule that may match below the directory by name: a directory there now is listed, and asks
        // only when something in it is denied (or it is too large to list). One that is not there yet,
        // or in a line where a program no table models runs too (`rename config src/cfg config && grep -r
        // DB src` moves config/.env in before grep reads), asks: the listing is of the tree before the line.
        const kind = rule ? (j.commands.some((c) => c !== cmd && unmodelledProgram(innermostOf(c).argv)) ? 'missing' : fileKind(d)) : undefined;
        // A file holds nothing below it; the file itself was judged as a read.
        if (kind === 'file') continue;
        const listed = kind === 'directory' ? listTree(d, argv, a, treeDeps, rgHidden(cmd) ? hiddenSkip(d) : undefined) : undefined;
        if (rule && (kind === 'missing' || (listed && ('unknown' in listed || listed.named)))) {
          return {
            behavior: 'ask',
            message: `This Bash command reads every file under ${d}, where the rule ${rule.raw} denies some; it needs approval.`,
            type: 'safety',
            detail: `recursive read under a Read deny rule: ${rule.raw}`,
          };
        }
        // No rule reaches the directory by name, or none matches what is in it; a link inside it may reach a denied file.
        const escape = rule ? listed : treeEscape(d, treeDeps, false, undefined, grepExcludedDirs(argv, a));
        if (escape) {
          const what = 'unknown' in escape ? 'more than toolexec looks through for links to Read-denied files' : `where ${escape.path} is ${escape.why}`;
          return {
            behavior: 'ask',
            message: `This Bash command reads every file under ${d}, ${what}; it needs approval.`,
            type: 'safety',
            detail: 'unknown' in escape ? 'recursive read of a tree too large to look through for links' : `recursive read through a link: ${escape.path}`,
          };
        }
      }
    }
  }

  // 7. bash's network redirections (`> /dev/tcp/HOST/PORT`, `< /dev/udp/…`) open a connection, not a
  // file: never an edit an Edit allow rule or acceptEdits grants. As for curl, bypassPermissions lets it through.
  const net = j.redirects.find((r) => r.target !== undefined && r.target.literal && NETWORK_REDIRECT.test(r.target.value));
  if (net) {
    const shown = short(net.target!.value, 80);
    return {
      behavior: 'ask',
      message: `This Bash command opens a network connection through ${shown} (bash's network redirection), which is not a file; it needs approval.`,
      type: 'tool',
      detail: `network redirection: ${shown}`,
    };
  }

  // 7b. Outside the working directories.
  for (const u of modelled) {
    if (u.redirect && u.kind === 'write' && editAllowRule(u, ctx)) continue;
    for (const abs of u.abs) {
      if (!ctx.workspace.contains(abs)) {
        return {
          behavior: 'ask',
          message: `Bash wants to ${u.kind === 'read' ? 'access' : 'modify'} ${abs}, which is outside the working directories (${ctx.workspace.roots.join(', ')}).`,
          type: 'working_dir',
          detail: abs,
        };
      }
    }
  }

  // 8. cd.
  if (cwds.cdCount > 1) {
    return { behavior: 'ask', message: 'This Bash command changes directory more than once; it needs approval.', type: 'tool', detail: 'more than one cd' };
  }
  if (cwds.cdCount === 1 && j.commands.some((c) => commandName(innermostOf(c).argv) === 'git')) {
    return { behavior: 'ask', message: 'This Bash command combines cd with git; it needs approval.', type: 'tool', detail: 'cd with git' };
  }

  // 9. Every file written by a redirection allowed as an edit of it would be,
  // then every subcommand allowed (judged without its redirections).
  if (a.commands.length === 0) return { behavior: 'passthrough' };
  const byRule: string[] = [];
  let byMode = false;
  for (const u of modelled) {
    if (!u.redirect || u.kind !== 'write') continue;
    const rule = editAllowRule(u, ctx);
    if (rule) {
      if (!byRule.includes(rule.raw)) byRule.push(rule.raw);
      continue;
    }
    // Inside the working directories (step 7), as for an Edit.
    if (q.mode === 'acceptEdits') {
      byMode = true;
      continue;
    }
    return {
      behavior: 'passthrough',
      message: `Bash wants to write ${u.abs[0] ?? short(u.word.raw, 80)}; writing a file through a redirection needs the permission an edit of it needs, which hasn't been granted yet.`,
    };
  }
  for (const { cmd } of perCommand) {
    // Words a runner may start a command with (`xvfb-run npm test`): searched by deny rules only.
    if (cmd.origin === 'fallback') continue;
    const cands = allowCandidates(cmd);
    const rule = allowRules.find((r) => {
      const m = matcherOf(r);
      return cands.canonical.some((c) => m.test(c)) || (m.kind === 'exact' && cands.exactOnly.some((c) => m.test(c)));
    });
    if (rule) {
      if (!byRule.includes(rule.raw)) byRule.push(rule.raw);
      continue;
    }
    if (isReadOnlyCommand(cmd) && readsProvablyAllowed(cmd, readDenyActive, cwds.dirs) && !gitInPlantedRepository(innermostOf(cmd).argv, startsOf(cmd) ?? cwds.dirs, ctx.workspace.root)) continue;
    if (q.mode === 'acceptEdits' && acceptEditsAllows(cmd, cwds.dirs)) {
      byMode = true;
      continue;
    }
    return { behavior: 'passthrough', message: messages.notGranted('Bash', `Bash with command ${short(cmd.text)}`) };
  }
  if (byRule.length > 0) return { behavior: 'allow', type: 'rule', detail: byRule.join(', ') };
  if (byMode) return { behavior: 'allow', type: 'mode', detail: 'acceptEdits: file commands inside the working directories' };
  return { behavior: 'allow', type: 'tool', detail: 'Read-only command is allowed' };
}

export async function checkBashPermission(command: string, ctx: BashPermissionContext): Promise<PermissionResult> {
  // `$HOME/x` as the home directory commands run with (home-words.ts).
  const a = await analyseBash(command);
  const j = withHomeExpanded(a, (ctx.childEnv ?? process.env).HOME);
  // A work-tree rewrite under an Edit deny rule: git is asked what it changes, then the command is decided again with that.
  const git = new GitRewrites();
  const first = decideBashPermission(command, a, ctx, j, git);
  if (git.wanted.size === 0 || first.behavior !== 'ask' || !first.detail?.startsWith(GIT_REWRITE_DETAIL)) return first;
  await git.fetch();
  return decideBashPermission(command, a, ctx, j, git);
}

/**
 * A hook's `if` condition (`Bash(git *)`) for a command: true when any
 * subcommand matches, and when the command cannot be analysed (the hook
 * runs rather than being skipped).
 */
export function bashIfMatches(ruleContent: string | undefined, command: string): boolean {
  if (ruleContent === undefined) return true;
  const a = analyseBashSync(command);
  if (!a || a.tooComplex !== undefined) return true;
  // Matched as a deny rule of that content (rule-match.ts): the hook runs for every command such a rule stops.
  const m = compileBashRule(ruleContent, 'deny');
  if (m.test(command.trim())) return true;
  return a.commands.some((c) => denyCandidates(c).some((x) => m.test(x)));
}

/**
 * An IfMatcher (hooks/runner.ts) that understands Bash rule contents only;
 * for other tools it compares the tool name and runs on any content. The
 * service uses if-matcher.ts, which matches every tool's rule contents.
 */
export function bashAwareIfMatcher(rule: string, toolName: string, input: ToolInput): boolean {
  const p = parseRule(rule);
  if ('error' in p) return true;
  if (p.toolName !== toolName) return false;
  if (toolName !== 'Bash') return true;
  const command = typeof input.command === 'string' ? input.command : undefined;
  return command === undefined ? true : bashIfMatches(p.content, command);
}
