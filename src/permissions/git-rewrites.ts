/**
 * The files a git work-tree rewrite changes, as git itself lists them, for the Bash check's step 4c
 * (bash-rules.ts). Without this list, `git checkout BRANCH` asked in every mode wherever an Edit deny
 * rule reached into the tree: under `Edit(.env)` (which reaches every tree) every branch switch, `git
 * stash pop` and `git reset --hard X` asked, with no .env in either commit. For the forms git can
 * bound by two commits (gitRewriteTarget in bash-git.ts) the check asks git which paths differ, and
 * asks a person only when a rule covers one of them.
 *
 * The decision itself is synchronous; git runs between two passes of it (checkBashPermission): the
 * first notes the questions it met (GitRewrites.answer), git answers them, the second decides with
 * the answers. Only a first pass that asked at step 4c pays for git, so only where an Edit deny rule
 * reaches the tree of a rewrite.
 *
 * git runs here against a repository the agent may have laid out: with no hooks, no fsmonitor, no
 * pager, no external diff or textconv (plumbing commands, raw output), no transport (a partial
 * clone's lazy fetch would run ssh or a remote helper), no system or global configuration, none of
 * the GIT_* variables of any environment, `--end-of-options` before every revision given, from a
 * fixed path (not PATH, which may lead into the workspace), within a time and output limit. Any
 * failure, any name that is not UTF-8, and too many paths are no answer: the command asks as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runChild } from '../util/child.js';

export interface GitRewriteQuery {
  /** The work tree's top, real (gitTopLevel: its `.git` a plain repository directory). */
  top: string;
  kind: 'switch' | 'hard' | 'stash' | 'merge';
  rev: string;
  /** Whether REV is a branch before anything else (checkout, switch), or a revision (reset). */
  branchFirst: boolean;
}

/** A path git would write (relative to the top, `/`-separated), and whether it is a submodule's in either commit. */
export interface RewrittenPath {
  rel: string;
  gitlink: boolean;
}

/** How long one decision may wait for git, each run. */
const GIT_TIMEOUT_MS = 3000;
/** Output kept of each run; more is no answer. */
const GIT_MAX_OUTPUT = 4 << 20;
/** Paths judged at most; more is no answer. */
const MAX_PATHS = 20_000;
/** Where git is looked for: never through PATH. */
const GIT_BINARIES = ['/usr/bin/git', '/usr/local/bin/git', '/bin/git'];

/**
 * The questions one check puts to git and their answers: `answer` gives the paths (null: git could
 * not tell) or, for a question not put yet, undefined, and notes it for `fetch`.
 */
export class GitRewrites {
  private readonly answers = new Map<string, RewrittenPath[] | null>();
  readonly wanted = new Map<string, GitRewriteQuery>();

  answer(q: GitRewriteQuery): RewrittenPath[] | null | undefined {
    const key = `${q.kind}\0${q.branchFirst}\0${q.top}\0${q.rev}`;
    if (this.answers.has(key)) return this.answers.get(key);
    this.wanted.set(key, q);
    return undefined;
  }

  /** Puts every question noted to git (at once), then forgets them. */
  async fetch(): Promise<void> {
    const asked = [...this.wanted];
    this.wanted.clear();
    const got = await Promise.all(asked.map(([, q]) => gitRewrittenPaths(q).catch(() => null)));
    asked.forEach(([key], i) => this.answers.set(key, got[i]!));
  }
}

let binary: string | undefined | null = null;
/** The first executable regular file of GIT_BINARIES, looked for once (null: not yet). */
function gitBinary(): string | undefined {
  if (binary === null) {
    binary = GIT_BINARIES.find((f) => {
      try {
        return fs.statSync(f).isFile() && (fs.accessSync(f, fs.constants.X_OK), true);
      } catch {
        return false;
      }
    });
  }
  return binary;
}

/**
 * One git run in the repository at `top`: its standard output, or undefined when it failed, timed
 * out, said too much or printed a name that is not UTF-8 (decoded, it is U+FFFD).
 */
async function git(top: string, args: readonly string[]): Promise<string | undefined> {
  const file = gitBinary();
  if (file === undefined) return undefined;
  const r = await runChild({
    file,
    args: [
      '--no-pager',
      '--no-replace-objects',
      '--literal-pathspecs',
      '-c', 'core.fsmonitor=false',
      '-c', 'core.hooksPath=/dev/null',
      '-c', 'core.untrackedCache=false',
      '-c', 'protocol.allow=never',
      '-c', 'core.sshCommand=false',
      '-c', 'gc.auto=0',
      '-c', 'maintenance.auto=false',
      ...args,
    ],
    cwd: top,
    env: {
      PATH: '/usr/bin:/bin',
      LC_ALL: 'C',
      HOME: '/nonexistent',
      GIT_DIR: path.join(top, '.git'),
      GIT_WORK_TREE: top,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_TERMINAL_PROMPT: '0',
      GIT_NO_LAZY_FETCH: '1',
      GIT_PAGER: 'cat',
    },
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes: GIT_MAX_OUTPUT,
    killGraceMs: 200,
    drainMs: 50,
  });
  if (r.timedOut || r.truncated || r.spawnError !== undefined || r.exitCode !== 0) return undefined;
  if (r.stdout.includes('\uFFFD')) return undefined;
  return r.stdout;
}

/** `git diff-tree -r -z --raw`'s records (`:MODE MODE OID OID STATUS\0PATH\0`, no renames), as paths. */
function rawPaths(out: string): RewrittenPath[] | undefined {
  const parts = out.split('\0');
  const paths: RewrittenPath[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:(\d{6}) (\d{6}) /.exec(parts[i]!);
    if (!m) return undefined;
    paths.push({ rel: parts[i + 1]!, gitlink: m[1] === '160000' || m[2] === '160000' });
  }
  return paths;
}

/** `git ls-files --stage -z` / `git ls-tree -r -z` records (`MODE …\tPATH\0`), as paths. */
function listedPaths(out: string): RewrittenPath[] | undefined {
  const paths: RewrittenPath[] = [];
  for (const rec of out.split('\0')) {
    if (rec === '') continue;
    const tab = rec.indexOf('\t');
    if (tab === -1) return undefined;
    paths.push({ rel: rec.slice(tab + 1), gitlink: rec.startsWith('160000 ') });
  }
  return paths;
}

async function diffTree(top: string, from: string, to: string): Promise<RewrittenPath[] | undefined> {
  const r = await git(top, ['diff-tree', '-r', '-z', '--raw', '--no-renames', '--no-ext-diff', '--no-textconv', '--end-of-options', from, to]);
  return r === undefined ? undefined : rawPaths(r);
}

/**
 * The commit of the branch refs/heads/REV, which `checkout REV` / `switch REV` take before a tag or
 * anything else of that name; null where there is none, undefined when git fails. Read exactly
 * (for-each-ref, no abbreviation rules), not through rev-parse, which takes refs/heads/refs/heads/REV
 * for refs/heads/REV where the latter is missing.
 */
async function branchOid(top: string, rev: string): Promise<string | null | undefined> {
  const ref = `refs/heads/${rev}`;
  const r = await git(top, ['for-each-ref', '--format=%(refname)%00%(objectname)', '--end-of-options', ref]);
  if (r === undefined) return undefined;
  for (const line of r.split('\n')) {
    const [name, oid] = line.split('\0');
    if (name === ref && oid !== undefined && /^[0-9a-f]{40,64}$/.test(oid)) return oid;
  }
  return null;
}

/** The commit a revision names (an object name too), or undefined. */
async function commitOf(top: string, rev: string): Promise<string | undefined> {
  const r = await git(top, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  const oid = r?.trim();
  return oid && /^[0-9a-f]{40,64}$/.test(oid) ? oid : undefined;
}

/** The union of several lists, or undefined when any is. */
function union(lists: ReadonlyArray<RewrittenPath[] | undefined>): RewrittenPath[] | undefined {
  const byRel = new Map<string, RewrittenPath>();
  for (const l of lists) {
    if (l === undefined) return undefined;
    for (const p of l) byRel.set(p.rel, { rel: p.rel, gitlink: p.gitlink || byRel.get(p.rel)?.gitlink === true });
  }
  return [...byRel.values()];
}

/**
 * The paths of the work tree a rewrite may change (relative to the top), or null when git cannot
 * tell: an unknown revision, an unborn HEAD, a stash whose base is not HEAD's tree, a failure.
 *
 *  - switch: the files that differ between HEAD and the target commit (a two-way merge: files that
 *    do not differ keep their local changes; an ignored file where the target has one is in the
 *    list).
 *  - hard: those, every file of the index (a local change to any is thrown away, a staged new file
 *    removed) and every file the index lacks or changes from HEAD (a staged deletion restored).
 *  - merge: a fast-forward's, as switch; none where REV is in HEAD's history already.
 *  - stash: the stash's changes from its base, of the work tree and of the index, and the files of
 *    its untracked parent (`stash^3`, from `stash -u`); only where the base's tree is HEAD's and the
 *    index HEAD's, since otherwise the merge's rename detection may put a change under a name no
 *    list holds (the base's a.txt changed in the stash, renamed .env in the index: the change lands
 *    in .env).
 */
export async function gitRewrittenPaths(q: GitRewriteQuery): Promise<RewrittenPath[] | null> {
  const { top } = q;
  // Every git run that does not wait for another's answer starts at once: a decision waits for two rounds of them.
  const staged = (): Promise<RewrittenPath[] | undefined> =>
    git(top, ['diff-index', '--cached', '-r', '-z', '--raw', '--no-renames', '--no-ext-diff', '--no-textconv', 'HEAD']).then((r) => (r === undefined ? undefined : rawPaths(r)));
  let paths: RewrittenPath[] | undefined;
  if (q.kind === 'switch' || q.kind === 'hard') {
    const lists: Array<Promise<RewrittenPath[] | undefined>> = [];
    if (q.kind === 'hard') lists.push(git(top, ['ls-files', '--stage', '-z']).then((r) => (r === undefined ? undefined : listedPaths(r))), staged());
    // The revision as rev-parse reads it (reset's, and checkout's where no branch has the name), one commit (not a
    // range, `a..b`); checkout and switch take a branch of that name first.
    const [branch, revision] = await Promise.all([q.branchFirst ? branchOid(top, q.rev) : null, commitOf(top, q.rev)]);
    const target = branch ?? revision;
    if (branch === undefined || target === undefined) return null;
    lists.push(diffTree(top, 'HEAD', target));
    paths = union(await Promise.all(lists));
  } else if (q.kind === 'merge') {
    // A fast-forward writes what a switch to REV does; a merge with nothing to do, nothing. Any other merges
    // three trees, and its rename detection may put a change under a name no list holds: no answer.
    const [head, target] = await Promise.all([commitOf(top, 'HEAD'), commitOf(top, q.rev)]);
    if (head === undefined || target === undefined) return null;
    const r = await git(top, ['merge-base', '--all', head, target]);
    const bases = r?.trim().split('\n');
    if (!bases || bases.length !== 1) return null;
    if (bases[0] === target) paths = [];
    else if (bases[0] === head) paths = await diffTree(top, head, target);
    else return null;
  } else {
    // The stash as git stash reads it (one commit: rev-parse --verify), and its parents.
    const [commit, r, index] = await Promise.all([
      commitOf(top, q.rev),
      git(top, ['rev-list', '--max-count=1', '--parents', '--end-of-options', `${q.rev}^{commit}`]),
      staged(),
    ]);
    const oids = r?.trim().split(' ');
    if (!oids || oids[0] !== commit || oids.length < 3 || oids.length > 4 || !oids.every((p) => /^[0-9a-f]{40,64}$/.test(p))) return null;
    const [stash, base, stagedInStash, untracked] = oids as [string, string, string, string | undefined];
    // The merge's own side is the index: one that differs from HEAD (a staged rename), or a HEAD that is not the
    // stash's base, may take a change elsewhere too.
    if (index === undefined || index.length > 0) return null;
    const lists: Array<Promise<RewrittenPath[] | undefined>> = [diffTree(top, base, stash), diffTree(top, base, stagedInStash)];
    if (untracked !== undefined) lists.push(git(top, ['ls-tree', '-r', '-z', '--full-tree', untracked]).then((x) => (x === undefined ? undefined : listedPaths(x))));
    const [fromHead, ...rest] = await Promise.all([diffTree(top, base, 'HEAD'), ...lists]);
    if (fromHead === undefined || fromHead.length > 0) return null;
    paths = union(rest);
  }
  if (paths === undefined || paths.length > MAX_PATHS || paths.some((p) => p.rel === '' || p.rel.split('/').some((c) => c === '' || c === '.' || c === '..'))) return null;
  return paths;
}
