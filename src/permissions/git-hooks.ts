/**
 * The hooks directory a repository's `core.hooksPath` names (husky sets
 * `.husky`; `.githooks`, `tools/hooks`): git runs `pre-commit`,
 * `commit-msg`, `post-checkout`… from there instead of `.git/hooks`, so a
 * file written there is a program the next `git commit` (allowed by
 * `Bash(git:*)`) runs, with the command's rights and unseen. It plays the
 * role `.git/hooks` plays, so writing it is a protected change, as writing
 * `.git/` is: it always asks a person, in acceptEdits and bypassPermissions
 * too (permissions/filesystem.ts, permissions/bash-rules.ts).
 *
 * Which repositories: the one the written path belongs to (git's own walk up
 * for a `.git` directory or file, from its directory) and each working
 * directory's. Which files: that repository's `config` (a linked worktree's
 * `config.worktree` and its common directory's `config`), the global ones
 * (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, `$GIT_CONFIG_GLOBAL`) and
 * the system one, as the environment the commands run with names them, and
 * the values that environment gives itself (GitEnv below), following
 * `include.path` and every `includeIf.*.path`
 * (whatever its condition: a directory it may name is protected). A
 * relative value is relative to the work tree's top, where git runs hooks;
 * `~/` is the home directory. Every value met counts, not only the last.
 *
 * husky 9 names `.husky/_`, whose hooks each run `.husky/<hook>` (with `sh
 * -e`, so it need not be executable): a hooks directory named `_` brings the
 * directory above it (or, when that is the top, the files there named as
 * git's hooks).
 *
 * Protected: the hooks directory itself, what is below it, and, where it is
 * below the top, the directories that hold it (`mv staged tools` makes
 * `tools/hooks`), except as the directory a glob only starts in.
 *
 * The files those configurations include are protected as well: git reads
 * one as it reads `.git/config`, so whoever writes it sets core.hooksPath (to
 * a directory written before it named one), core.fsmonitor or an alias. With
 * `include.path = ../tools/git.config` in .git/config, a Write of
 * tools/git.config with `[core] hooksPath = hk` (hk/pre-commit written
 * first, when nothing named hk) was allowed in acceptEdits, and the next `git
 * commit` ran the planted hook.
 *
 * A file's values are kept between decisions by its identity (device, inode,
 * size, times: kept-reads.ts), so an Edit reads no configuration file twice
 * while it does not change; every decision stats each one again (an edit, a
 * file created or deleted is seen by the next), and walks up for the `.git`
 * again (one appearing above is seen too).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import { memoFs, memoised } from '../util/decision-memo.js';
import { absolute, realpathLoose, type Workspace } from '../workspace.js';
import { commonDir, repositoryFrom, under } from './git-config.js';
import { KeptReads } from './kept-reads.js';

/** What one configuration file sets: its `core.hooksPath` values and the files it includes, both as written. */
interface FileValues {
  hooksPaths: string[];
  includes: string[];
}

/** How much of a configuration file is read (git's are a few KB; a larger one is read this far). */
const MAX_CONFIG_BYTES = 1 << 20;
/** git's own limit on nested includes. */
const MAX_INCLUDE_DEPTH = 10;
/** Each configuration file's values, kept by its identity (kept-reads.ts). */
const kept = new KeptReads(parseGitConfig, MAX_CONFIG_BYTES);

/** The values of one configuration file, or undefined when it is not there (or cannot be read). */
function fileValues(file: string): FileValues | undefined {
  // Unreadable to the service is most likely unreadable to the commands it runs: git would stop on it.
  return kept.get(file)?.value;
}

/**
 * git's configuration syntax, as far as the values read here go: `[section]`,
 * `[section "sub"]` and `[section.sub]` headers (a key may follow on the same
 * line), `name = value` or a bare `name`, comments after `#` or `;`, quotes,
 * the escapes `\"`, `\\`, `\n`, `\t`, `\b` and a backslash before the end of
 * a line continuing the value. Section and key names are case-insensitive.
 */
export function parseGitConfig(text: string): FileValues {
  const out: FileValues = { hooksPaths: [], includes: [] };
  let section = '';
  let i = 0;
  const n = text.length;
  const skipLine = (): void => {
    while (i < n && text[i] !== '\n') i++;
  };
  while (i < n) {
    const c = text[i]!;
    if (c === '\n' || c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF') {
      i++;
      continue;
    }
    if (c === '#' || c === ';') {
      skipLine();
      continue;
    }
    if (c === '[') {
      const end = headerEnd(text, i + 1);
      if (end === -1) {
        section = '\0';
        skipLine();
        continue;
      }
      section = headerName(text.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    const key = /^[A-Za-z][A-Za-z0-9-]*/.exec(text.slice(i, i + 256))?.[0];
    if (key === undefined) {
      skipLine();
      continue;
    }
    i += key.length;
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    let value: string | undefined;
    if (text[i] === '=') {
      const r = readValue(text, i + 1);
      value = r.value;
      i = r.end;
    } else {
      skipLine();
    }
    if (value === undefined) continue;
    // git uses a value as a C string: what follows a NUL is not part of it (`hk<NUL>zz` runs hooks from hk).
    value = value.split('\0')[0]!;
    const k = key.toLowerCase();
    if (section === 'core' && k === 'hookspath') out.hooksPaths.push(value);
    if ((section === 'include' || section.startsWith('includeif ')) && k === 'path') out.includes.push(value);
  }
  return out;
}

/** Where a header's `]` is (quotes and escapes inside a subsection skipped), or -1 when the line has none. */
function headerEnd(text: string, from: number): number {
  let quoted = false;
  for (let j = from; j < text.length; j++) {
    const c = text[j]!;
    if (c === '\n') return -1;
    if (quoted && c === '\\') j++;
    else if (c === '"') quoted = !quoted;
    else if (c === ']' && !quoted) return j;
  }
  return -1;
}

/** A header's section, lower case; with a subsection, `name sub` (`includeif gitdir:…`, `core sub`, `core.sub` alike). */
function headerName(inner: string): string {
  const m = /^\s*([A-Za-z0-9.-]+)\s*(?:"(.*)")?\s*$/s.exec(inner);
  if (!m) return '\0';
  const name = m[1]!.toLowerCase();
  if (m[2] !== undefined) return `${name} ${m[2]}`;
  const dot = name.indexOf('.');
  return dot === -1 ? name : `${name.slice(0, dot)} ${name.slice(dot + 1)}`;
}

/** A value from `from` (after the `=`) to the end of its line, and where parsing goes on. */
function readValue(text: string, from: number): { value: string; end: number } {
  let value = '';
  /** The value's length up to its last character that is not unquoted trailing space. */
  let kept = 0;
  let quoted = false;
  let j = from;
  while (j < text.length && (text[j] === ' ' || text[j] === '\t')) j++;
  for (; j < text.length; j++) {
    const c = text[j]!;
    if (c === '\n' && !quoted) break;
    if (c === '\\') {
      const e = text[j + 1];
      j++;
      if (e === '\n') continue;
      if (e === '\r' && text[j + 1] === '\n') {
        j++;
        continue;
      }
      value += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'b' ? '\b' : (e ?? '');
      kept = value.length;
      continue;
    }
    if (c === '"') {
      quoted = !quoted;
      kept = value.length;
      continue;
    }
    if (!quoted && (c === '#' || c === ';')) {
      while (j < text.length && text[j] !== '\n') j++;
      break;
    }
    if (c === '\r' && !quoted && text[j + 1] === '\n') continue;
    value += c;
    if (quoted || (c !== ' ' && c !== '\t')) kept = value.length;
  }
  return { value: value.slice(0, kept), end: j };
}

/** `~/…` (and `~`) as git's pathname values take it: the home directory. */
function expandTilde(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p;
}

/** Every `core.hooksPath` value in a file and the files it includes, as written; `included` gathers the files included (absolute). */
function hooksPathsIn(file: string, home: string, included: string[], depth = 0, seen: Set<string> = new Set()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const v = fileValues(file);
  if (v === undefined) return [];
  // Most files set neither: nothing to copy.
  if (v.includes.length === 0) return v.hooksPaths;
  const out = [...v.hooksPaths];
  if (depth < MAX_INCLUDE_DEPTH) {
    for (const inc of v.includes) {
      if (inc === '') continue;
      const p = path.resolve(path.dirname(file), expandTilde(inc, home));
      included.push(p);
      out.push(...hooksPathsIn(p, home, included, depth + 1, seen));
    }
  }
  return out;
}

/**
 * What the environment the commands run with says about the configuration git reads: the home
 * directory (`~/`, `~/.gitconfig`), the global and system files, and `core.hooksPath` values given in
 * the environment itself (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`,
 * `GIT_CONFIG_PARAMETERS`, which `git -c` passes on). It is the environment toolexec gives the
 * commands (server.redact, the secrets removed: util/env.ts), not the service's own: with
 * `XDG_CONFIG_HOME` redacted, git reads `~/.config/git/config`, which the service's own value hid.
 *
 * The usual files count whatever the variables say (`~/.gitconfig` and `~/.config/git/config` beside
 * `$GIT_CONFIG_GLOBAL` and `$XDG_CONFIG_HOME`, `/etc/gitconfig` beside `$GIT_CONFIG_SYSTEM` and despite
 * `GIT_CONFIG_NOSYSTEM`): a command that drops a variable (`env -u`) has git read them.
 */
interface GitEnv {
  home: string;
  /** The global and system files, as named (a relative one is relative to where git runs: the work tree's top is taken). */
  shared: readonly string[];
  /** core.hooksPath values the environment sets. */
  hooksPaths: readonly string[];
  /** `$LEFTHOOK_CONFIG`: the configuration lefthook's hook reads in place of its usual ones. */
  lefthookConfig: string | undefined;
  /** What it was made from: the key of what is kept by it. */
  from: string;
}

/** The last GitEnv made (the environment rarely changes: it is made again only when what it is made from does). */
let envKept: GitEnv | undefined;

function gitEnv(env: NodeJS.ProcessEnv): GitEnv {
  const count = Math.min(Number.parseInt(env.GIT_CONFIG_COUNT ?? '', 10) || 0, 1000);
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < count; i++) pairs.push([env[`GIT_CONFIG_KEY_${i}`] ?? '', env[`GIT_CONFIG_VALUE_${i}`] ?? '']);
  const h = env.HOME;
  const home = h !== undefined && h !== '' ? h : os.homedir();
  const from = [home, env.XDG_CONFIG_HOME, env.GIT_CONFIG_GLOBAL, env.GIT_CONFIG_SYSTEM, env.GIT_CONFIG_PARAMETERS, env.LEFTHOOK_CONFIG, ...pairs.flat()].join('\0');
  if (envKept?.from === from) return envKept;
  const shared = [path.join(home, '.gitconfig'), path.join(home, '.config', 'git', 'config'), '/etc/gitconfig'];
  if (env.XDG_CONFIG_HOME) shared.push(path.join(env.XDG_CONFIG_HOME, 'git', 'config'));
  if (env.GIT_CONFIG_GLOBAL) shared.push(env.GIT_CONFIG_GLOBAL);
  if (env.GIT_CONFIG_SYSTEM) shared.push(env.GIT_CONFIG_SYSTEM);
  // GIT_CONFIG_PARAMETERS: `'core.hooksPath'='hk'` (or the older `'core.hooksPath=hk'`), each single-quoted as the shell would.
  // (A quote inside a value, `'\''`, ends the match early: such a value is not a hooks path here.)
  for (const m of (env.GIT_CONFIG_PARAMETERS ?? '').matchAll(/'([^']*)'(?:=('[^']*'))?/g)) {
    if (m[2] !== undefined) pairs.push([m[1]!, m[2].slice(1, -1)]);
    else {
      const eq = m[1]!.indexOf('=');
      if (eq !== -1) pairs.push([m[1]!.slice(0, eq), m[1]!.slice(eq + 1)]);
    }
  }
  const hooksPaths = pairs.filter(([k]) => k.toLowerCase() === 'core.hookspath').map(([, v]) => v.split('\0')[0]!);
  envKept = { home, shared, hooksPaths, lefthookConfig: env.LEFTHOOK_CONFIG || undefined, from };
  return envKept;
}

/** How a repository's configuration is named in a message. */
function repoConfigName(top: string): string {
  return `the configuration of the repository at ${top}`;
}

/** The hooks git runs (githooks(5)): the names husky 9's `_` directory runs from the directory above it. */
const GIT_HOOKS = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg',
  'post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update', 'proc-receive', 'post-receive',
  'post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate',
  'fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist', 'p4-post-changelist', 'p4-pre-submit', 'post-index-change',
];
const GIT_HOOK_NAMES: ReadonlySet<string> = new Set(GIT_HOOKS);

interface HooksDir {
  /** Absolute, as configured (resolved against the top). */
  dir: string;
  /** Where it really leads. */
  real: string;
  /** The work tree's top, real. */
  top: string;
  value: string;
  /** A configuration file a repository's configuration includes (`dir` is that file), not a hooks directory. */
  config?: true;
  /** The configuration a hook framework's hook runs commands from (`dir` is that file; `value` the hook). */
  runner?: string;
  /** With `runner`: `dir` is a directory whose files it runs (lefthook's `.lefthook/`), what is below it counts. */
  tree?: true;
  /** With `runner`: `dir` is the top, and each path below it this takes (relative, `/`-separated) is a configuration. */
  match?: (rel: string) => boolean;
  /** With `match`: the paths below the top (relative) that hold such a configuration (`.config` of `.config/lefthook.yml`). */
  holds?: (rel: string) => boolean;
}

/**
 * The hook frameworks whose hook (the file git runs) reads the commands it runs from a file of the work
 * tree, each found by the text of the hook it installs, and the files it reads (relative to the work
 * tree's top, where the hooks run):
 *
 * - pre-commit (`pre-commit install`): the `--config` its hook names, `.pre-commit-config.yaml` by default.
 * - lefthook (`lefthook install`, a hook that calls `lefthook run`): `lefthook`, `.lefthook` and
 *   `.config/lefthook`, each also `-local`, as `.yml`, `.yaml`, `.json`, `.jsonc` or `.toml`; the file
 *   `$LEFTHOOK_CONFIG` names; the files their `extends` names; and the directories its `scripts` run
 *   from (`.lefthook/`, `.lefthook-local/`, or their `source_dir`, `source_dir_local`); the `rc` file
 *   its hook sources, when it was installed with one.
 * - husky 4 (and earlier: a hook marked `# husky`, that runs `node_modules/husky/run.js` or `husky.sh`
 *   beside it): `package.json`'s `husky` section, `.huskyrc*`, `husky.config.*`. husky 5 to 9 keep
 *   their hooks as files (core.hooksPath `.husky` or `.husky/_`: protected as a hooks directory).
 *
 * lint-staged, run by a hook or named by one of those configurations (`npx lint-staged` in
 * `.husky/pre-commit`, in a simple-git-hooks hook, in lefthook.yml), reads its commands from the
 * `--config` given it, else from the nearest `package.json` ("lint-staged" section, which comes first),
 * `package.yaml`, `.lintstagedrc*` or `lint-staged.config.*` of each staged file: those names anywhere
 * in the work tree (node_modules aside, which git ignores) count.
 *
 * Whoever writes one of these chooses the commands the next `git commit` runs (a `repo: local` hook's
 * `entry`, a lefthook `run:`, a lint-staged task), as writing the hook itself would. Without such a hook
 * they are files like any other: a package.json is protected only where lint-staged or husky 4 runs.
 * simple-git-hooks is not among them: `simple-git-hooks` copies its package.json section into the
 * hooks when it is run, and the hooks (protected) are what git runs; writing the section changes
 * nothing until a command (npx, an install script) runs it, which is a program the agent chose anyway.
 */
const LEFTHOOK_CONFIGS = ['lefthook', '.lefthook', '.config/lefthook', 'lefthook-local', '.lefthook-local', '.config/lefthook-local'].flatMap((n) =>
  ['.yml', '.yaml', '.json', '.jsonc', '.toml'].map((e) => n + e),
);
const HUSKY4_CONFIGS = ['package.json', '.huskyrc', '.huskyrc.json', '.huskyrc.yaml', '.huskyrc.yml', '.huskyrc.js', '.huskyrc.cjs', 'husky.config.js', 'husky.config.cjs'];

/**
 * A framework's usual names (relative to the top) as one matcher: one entry to judge a path by, and the
 * listings of their directories to tell which are there. An entry and a stat each (30 for lefthook) cost
 * a stat, a realpath and two folds a name every decision: the protected-change check of a file in a
 * lefthook repository took ~0.9 ms, against ~0.1 ms in one without hooks; ~0.2 ms this way. Lower case:
 * a folded path (a case-insensitive workspace) is compared as such.
 */
interface NameSet {
  match: (rel: string) => boolean;
  holds: (rel: string) => boolean;
  /** The directories (relative to the top, `''` the top) the names are in: their listings tell which are there. */
  parents: readonly string[];
}
function nameSet(names: readonly string[]): NameSet {
  const set = new Set(names.map((n) => n.toLowerCase()));
  const dirs = new Set([...set].flatMap((n) => n.split('/').slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join('/'))));
  return { match: (rel) => set.has(rel.toLowerCase()), holds: (rel) => dirs.has(rel.toLowerCase()), parents: [...new Set(names.map((n) => path.posix.dirname(n)).map((d) => (d === '.' ? '' : d)))] };
}
const LEFTHOOK_NAMES = nameSet(LEFTHOOK_CONFIGS);
const HUSKY4_NAMES = nameSet(HUSKY4_CONFIGS);
/** lint-staged's configuration files (lower case), by name. */
const LINT_STAGED_NAMES: ReadonlySet<string> = new Set([
  'package.json', 'package.yaml', '.lintstagedrc',
  ...['json', 'yaml', 'yml', 'mjs', 'js', 'cjs', 'ts', 'mts', 'cts'].map((e) => `.lintstagedrc.${e}`),
  ...['mjs', 'js', 'cjs', 'ts', 'mts', 'cts'].map((e) => `lint-staged.config.${e}`),
]);

interface HookRun {
  /** The frameworks the text runs, with the files (and directories: `trees`) they read, as written. */
  /** `configs`: files named; `names`: the usual names, there or not (lefthook's 30). */
  runners: Array<{ runner: string; configs: readonly string[]; names?: NameSet; trees?: readonly string[] }>;
  /** The text runs lint-staged (or names it); `config`: the `--config` it gives it. */
  lintStaged?: { config?: string };
}

/** lint-staged named in a text, with the `--config` (`-c`) it is given on that line, if any. */
function lintStagedIn(text: string): HookRun['lintStaged'] {
  if (!/\blint-staged\b/.test(text)) return undefined;
  const config = /\blint-staged\b[^\n]*?\s(?:--config|-c)(?:=|\s+)['"]?([^\s'"]+)/.exec(text)?.[1];
  return config === undefined ? {} : { config };
}

/** What a hook file runs (above), or undefined when it is none of those. */
function hookRunOf(text: string): HookRun | undefined {
  const runners: HookRun['runners'] = [];
  if (/File generated by pre-commit|pre_commit\b|\bpre-commit hook-impl\b|ARGS=\(hook-impl\b/.test(text)) {
    runners.push({ runner: 'pre-commit', configs: [/--config[= ]['"]?([^\s'")]+)/.exec(text)?.[1] ?? '.pre-commit-config.yaml'] });
  }
  // lefthook's hook: `call_lefthook run "pre-commit" "$@"` (1.x), `call_lefthook "run pre-commit $@"` (2.x), `lefthook run pre-commit`.
  if (/\bcall_lefthook\s+["']?run\b|\blefthook(?:\.exe|\.bat)?["']?\s+["']?run\b/.test(text)) {
    // Its `rc` setting, written into the hook at install: a file the hook sources (`[ -f .lefthookrc ] && . .lefthookrc`).
    const rc = /^\s*\[ -f (["']?)([^\s"']+)\1 \] && \. /m.exec(text)?.[2];
    runners.push({ runner: 'lefthook', configs: rc === undefined ? [] : [rc], names: LEFTHOOK_NAMES, trees: ['.lefthook', '.lefthook-local'] });
  }
  if (/^# husky\s*$/m.test(text) || /Hook created by Husky|node_modules\/husky\/run(?:\.js)?\b|\$\(dirname "\$0"\)\/husky\.sh/.test(text)) {
    runners.push({ runner: 'husky 4', configs: [], names: HUSKY4_NAMES });
  }
  const lintStaged = lintStagedIn(text);
  if (runners.length === 0 && lintStaged === undefined) return undefined;
  return lintStaged === undefined ? { runners } : { runners, lintStaged };
}
/** Each hook file's runners, kept by its identity (kept-reads.ts). */
const hookRuns = new KeptReads(hookRunOf, 64 * 1024);

/** What a framework's configuration names: lint-staged, lefthook's `extends` and `source_dir`s (as written; any format, read loosely). */
interface ConfigRefs {
  lintStaged?: { config?: string };
  extends: string[];
  sourceDirs: string[];
}

/** A scalar as YAML, JSON or TOML write it on one line: quotes and a trailing comment or comma taken off. */
function scalar(v: string): string {
  const t = v.trim();
  const q = /^(["'])(.*?)\1/.exec(t);
  if (q) return q[2]!;
  return t.replace(/\s+#.*$/, '').replace(/,$/, '').trim();
}

function configRefsOf(text: string): ConfigRefs {
  const out: ConfigRefs = { extends: [], sourceDirs: [] };
  const ls = lintStagedIn(text);
  if (ls !== undefined) out.lintStaged = ls;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // At a line's start (YAML, TOML, JSON spread over lines) or after `{` or `,` (JSON on one line).
    const m = /(?:^|[{,])\s*["']?(extends|source_dir|source_dir_local)["']?\s*[:=]\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    let rest = m[2]!.trim();
    if (m[1] !== 'extends') {
      if (rest !== '') out.sourceDirs.push(scalar(rest));
      continue;
    }
    if (rest.startsWith('[')) {
      // A flow list, maybe over several lines: `extends: [a.yml, b.yml]`, `"extends": ["a.json"]`, `extends = ["a.toml"]`.
      while (!rest.includes(']') && i + 1 < lines.length) rest += ` ${lines[++i]!.trim()}`;
      for (const item of rest.slice(1, rest.indexOf(']') === -1 ? undefined : rest.indexOf(']')).split(',')) if (scalar(item) !== '') out.extends.push(scalar(item));
    } else if (rest === '' || rest.startsWith('#')) {
      // A block list: `- a.yml` lines.
      while (i + 1 < lines.length) {
        const item = /^\s*-\s+(.*)$/.exec(lines[i + 1]!);
        if (!item) {
          if (lines[i + 1]!.trim() === '' || lines[i + 1]!.trim().startsWith('#')) {
            i++;
            continue;
          }
          break;
        }
        out.extends.push(scalar(item[1]!));
        i++;
      }
    } else out.extends.push(scalar(rest));
  }
  return out;
}
/** Each framework configuration's references, kept by its identity. */
const configRefs = new KeptReads(configRefsOf, MAX_CONFIG_BYTES);

const NO_NAMES: ReadonlySet<string> = new Set();
/**
 * The names in a directory at or below the top, once a decision; none when it cannot be listed, or when
 * the listing of the directory above has not its name (`.config`, mostly not there: a failed readdir
 * costs an exception).
 */
function namesIn(dir: string, top: string): ReadonlySet<string> {
  if (dir !== top && dir.startsWith(`${top}/`) && !namesIn(path.dirname(dir), top).has(path.basename(dir))) return NO_NAMES;
  return memoised('gitHookNames', dir, listNames);
}
function listNames(dir: string): ReadonlySet<string> {
  try {
    return new Set(fs.readdirSync(dir));
  } catch {
    return NO_NAMES;
  }
}

/** The hooks (and their runs) in a hooks directory: the files named as git's hooks. */
function hookRunners(dir: string): Array<{ hook: string; run: HookRun }> {
  const out: Array<{ hook: string; run: HookRun }> = [];
  // The directory's listing once a decision (listNames, as namesIn), in its order; its first 1,000 names.
  let k = 0;
  for (const name of memoised('gitHookNames', dir, listNames)) {
    if (k++ >= 1000) break;
    if (!GIT_HOOK_NAMES.has(name)) continue;
    const file = path.join(dir, name);
    // A hook that is not a regular file, or cannot be read, runs nothing this can tell.
    const run = hookRuns.get(file)?.value;
    if (run) out.push({ hook: file, run });
  }
  return out;
}

/** Whether a path below the top (relative) is one of lint-staged's configuration files: by its name, anywhere but in node_modules. */
function lintStagedConfig(rel: string): boolean {
  const parts = rel.split('/');
  return LINT_STAGED_NAMES.has(parts[parts.length - 1]!.toLowerCase()) && !parts.includes('node_modules');
}

/** A glob (lefthook's `extends` takes them) as a matcher of paths relative to the top; undefined for a plain name. */
function globMatcher(rel: string): ((p: string) => boolean) | undefined {
  if (!/[*?[{]/.test(rel)) return undefined;
  const m = picomatch(rel, { dot: true });
  return (p) => m(p);
}

/** The hooks directories the repository seen from `dir` may use (none outside a repository), for commands run with `env`. */
function hooksDirsFrom(dir: string, env: NodeJS.ProcessEnv): HooksDir[] {
  const repo = repositoryFrom(dir);
  if (repo === undefined) return [];
  const g = gitEnv(env);
  const home = g.home;
  // Once per repository in a decision: the file's directory and the root it is in mostly find the same one.
  return memoised('gitHooksDirs', `${repo.top}\0${repo.gitDir}\0${g.from}`, () => {
    const files = [under(repo.gitDir, 'config'), under(repo.gitDir, 'config.worktree')];
    const common = commonDir(repo.gitDir);
    if (common !== undefined) files.push(path.join(common, 'config'));
    for (const f of g.shared) files.push(path.resolve(repo.top, f));
    const out: HooksDir[] = [];
    const seen = new Set<string>();
    const included: string[] = [];
    const values: string[] = [];
    for (const f of files) values.push(...hooksPathsIn(f, home, included));
    values.push(...g.hooksPaths);
    for (const value of values) {
      if (value === '' || value === '/dev/null') continue;
      const abs = path.resolve(repo.top, expandTilde(value, home));
      if (seen.has(abs)) continue;
      seen.add(abs);
      out.push({ dir: abs, real: realpathLoose(abs), top: repo.top, value });
      // husky 9 names `.husky/_`, whose hooks run `.husky/<hook>` (with `sh -e`, executable or not).
      if (path.basename(abs) === '_') {
        const parent = path.dirname(abs);
        const real = realpathLoose(parent);
        const runs = real === repo.top ? GIT_HOOKS.map((h) => path.join(parent, h)) : [parent];
        for (const d of runs) {
          if (seen.has(d)) continue;
          seen.add(d);
          out.push({ dir: d, real: d === parent ? real : realpathLoose(d), top: repo.top, value });
        }
      }
    }
    // An included file is read as the configuration that names it: whoever writes it sets core.hooksPath, core.fsmonitor, aliases.
    for (const inc of included) {
      if (seen.has(inc)) continue;
      seen.add(inc);
      out.push({ dir: inc, real: realpathLoose(inc), top: repo.top, value: inc, config: true });
    }
    // The hooks git runs now: from core.hooksPath's directories, else the repository's own hooks directory.
    const hookDirs = out.filter((h) => !h.config).map((h) => h.dir);
    if (hookDirs.length === 0) hookDirs.push(path.join(common ?? repo.gitDir, 'hooks'));
    const top = repo.top;
    /** A file or directory a framework reads, once. */
    const add = (p: string, hook: string, runner: string, tree?: true): void => {
      const abs = path.resolve(top, expandTilde(p, home));
      if (seen.has(abs)) return;
      seen.add(abs);
      out.push({ dir: abs, real: realpathLoose(abs), top, value: hook, runner, ...(tree ? { tree } : {}) });
    };
    let lintStaged: { hook: string; config?: string } | undefined;
    const noteLintStaged = (hook: string, ls: HookRun['lintStaged']): void => {
      if (ls === undefined) return;
      if (ls.config !== undefined) add(ls.config, hook, 'lint-staged');
      lintStaged ??= { hook };
    };
    for (const d of hookDirs) {
      for (const { hook, run } of hookRunners(d)) {
        noteLintStaged(hook, run.lintStaged);
        for (const r of run.runners) {
          const configs = [...r.configs];
          if (r.runner === 'lefthook' && g.lefthookConfig) configs.push(g.lefthookConfig);
          const trees = [...(r.trees ?? [])];
          // The usual names, there or not yet: one entry. Those there (their directories' listings tell: a stat
          // each of 30 names cost more) are read, and entered each as well, by where they lead (a link).
          const names = r.names;
          if (names !== undefined) {
            out.push({ dir: top, real: top, top, value: hook, runner: r.runner, match: names.match, holds: names.holds });
            for (const p of names.parents) {
              for (const n of namesIn(p === '' ? top : path.join(top, p), top)) if (names.match(p === '' ? n : `${p}/${n}`)) configs.push(p === '' ? n : `${p}/${n}`);
            }
          }
          // Each configuration (and what lefthook's `extends` names, in turn) may run lint-staged or name more.
          for (let i = 0; i < configs.length && i < 100; i++) {
            const c = configs[i]!;
            const match = globMatcher(c);
            if (match !== undefined) {
              out.push({ dir: top, real: top, top, value: hook, runner: r.runner, match });
              continue;
            }
            add(c, hook, r.runner);
            const refs = configRefs.get(path.resolve(top, expandTilde(c, home)))?.value;
            if (refs === undefined) continue;
            noteLintStaged(hook, refs.lintStaged);
            if (r.runner === 'lefthook') {
              configs.push(...refs.extends);
              trees.push(...refs.sourceDirs);
            }
          }
          for (const t of trees) add(t, hook, r.runner, true);
        }
      }
    }
    if (lintStaged !== undefined) {
      const ls = lintStaged;
      out.push({ dir: top, real: top, top, value: ls.hook, runner: 'lint-staged', match: lintStagedConfig });
    }
    return out;
  });
}

/**
 * A hook git would run for a command started in `dir` (with `env`), if any: a file named as one of
 * git's hooks in a hooks directory the repository's configuration (or the global ones) names, or in
 * its own `hooks/` where none is named. A hook is a program with the command's rights: what it
 * writes no listing of the command's own changes tells (bash-rules.ts, step 4c).
 */
export function gitHookPresent(dir: string, env: NodeJS.ProcessEnv): string | undefined {
  const repo = repositoryFrom(dir);
  if (repo === undefined) return undefined;
  const dirs = hooksDirsFrom(dir, env)
    .filter((h) => !h.config && h.runner === undefined && h.match === undefined && !h.tree)
    .map((h) => h.dir);
  if (dirs.length === 0) dirs.push(path.join(commonDir(repo.gitDir) ?? repo.gitDir, 'hooks'));
  for (const d of dirs) {
    for (const name of memoised('gitHookNames', d, listNames)) if (GIT_HOOK_NAMES.has(name)) return path.join(d, name);
  }
  return undefined;
}

/**
 * Why writing an absolute path changes a hooks directory `core.hooksPath`
 * names (see above), or undefined. `globStart`: the path is only the
 * directory a glob starts in, so a directory holding the hooks directory does
 * not count for it.
 */
export function gitHooksReason(abs: string, workspace: Workspace, env: NodeJS.ProcessEnv, globStart = false): string | undefined {
  const target = absolute(abs);
  const real = realpathLoose(target);
  const starts = new Set([path.dirname(real), path.dirname(target), ...workspace.roots]);
  const f = (p: string): string => workspace.fold(p);
  // Folded once a hooks directory is met (outside a repository, or in one without, none is).
  let spellings: string[] | undefined;
  for (const start of starts) {
    for (const h of hooksDirsFrom(start, env)) {
      spellings ??= [...new Set([f(target), f(real)])];
      for (const d of new Set([f(h.dir), f(h.real)])) {
        for (const t of spellings) {
          if (h.config && (t === d || (!globStart && d.startsWith(t + path.sep) && t.startsWith(f(h.top) + path.sep)))) {
            return `${abs} ${t === d ? 'is' : `holds ${h.dir},`} a file git reads as its configuration (included from ${repoConfigName(h.top)}): a setting there (core.hooksPath, core.fsmonitor) runs a program on a later git command`;
          }
          if (h.match !== undefined) {
            // A name anywhere below the top (lint-staged's nearest configuration, a glob lefthook extends).
            if (t.startsWith(d + path.sep) && h.match(t.slice(d.length + 1))) {
              return `${abs} is a configuration ${h.runner} reads the commands it runs from, as the hook ${h.value} runs it: a command there runs on a later git command`;
            }
            if (!globStart && t.startsWith(d + path.sep) && h.holds?.(t.slice(d.length + 1))) {
              return `${abs} holds a configuration ${h.runner} reads the commands it runs from, as the hook ${h.value} runs it: a command there runs on a later git command`;
            }
            continue;
          }
          if (h.tree && (t === d || t.startsWith(d + path.sep))) {
            return `${abs} is ${t === d ? '' : 'in '}${h.dir}, where ${h.runner} finds the scripts it runs, as the hook ${h.value} runs it: a script there runs on a later git command`;
          }
          if (h.runner !== undefined && (t === d || (!globStart && d.startsWith(t + path.sep) && t.startsWith(f(h.top) + path.sep)))) {
            return `${abs} ${t === d ? 'is' : `holds ${h.dir},`} the configuration ${h.runner} reads the commands it runs from, as the hook ${h.value} runs it: a command there runs on a later git command`;
          }
          if (h.config || h.runner !== undefined) continue;
          if (t === d || t.startsWith(d + path.sep)) {
            return `${abs} is ${t === d ? '' : 'in '}${h.dir}, where git's hooks are (core.hooksPath ${h.value}): a hook there runs on a later git command`;
          }
          // A directory that holds it, below the work tree's top: moving another there puts hooks in place.
          if (!globStart && d.startsWith(t + path.sep) && t.startsWith(f(h.top) + path.sep)) {
            return `${abs} holds ${h.dir}, where git's hooks are (core.hooksPath ${h.value}): a hook there runs on a later git command`;
          }
        }
      }
    }
  }
  return undefined;
}

/**
 * Why writing an absolute path changes the git directory of a repository whose `.git` is a file
 * naming a directory of another name (`git init --separate-git-dir=store`, `git clone
 * --separate-git-dir`), or a symlink to one: git reads that directory's `config` and runs its `hooks/` as it does
 * `.git`'s, and the name `.git/` protects nothing there. Seen from where the path is and from each
 * working directory, as gitHooksReason looks. A directory holding it, below the work tree's top,
 * counts too (a directory moved there replaces it), except as the directory a glob only starts in.
 */
export function gitDirReason(abs: string, workspace: Workspace, globStart = false): string | undefined {
  const target = path.resolve(abs);
  const real = realpathLoose(target);
  const f = (p: string): string => workspace.fold(p);
  const spellings = [...new Set([f(target), f(real)])];
  for (const start of new Set([path.dirname(real), path.dirname(target), ...workspace.roots])) {
    const repo = memoised('gitRepository', start, () => repositoryFrom(start) ?? null);
    if (repo === null) continue;
    const dirs = [repo.gitDir];
    const common = commonDir(repo.gitDir);
    if (common !== undefined) dirs.push(common);
    for (const g of dirs) {
      // A `.git` directory's own name protects it (filesystem.ts); where a `.git` symlink leads has no such name.
      for (const d of new Set([f(g), f(realpathLoose(g))])) {
        for (const t of spellings) {
          if (t === d || t.startsWith(d + path.sep)) {
            return `${abs} is ${t === d ? '' : 'in '}${g}, the git directory of the repository at ${repo.top} (its .git names it): git reads its config and runs its hooks`;
          }
          if (!globStart && d.startsWith(t + path.sep) && t.startsWith(f(repo.top) + path.sep)) {
            return `${abs} holds ${g}, the git directory of the repository at ${repo.top} (its .git names it): git reads its config and runs its hooks`;
          }
        }
      }
    }
  }
  return undefined;
}

/** The names in a directory (at most 1,000), as paths; none when it cannot be listed. */
function entries(dir: string): string[] {
  try {
    return fs.readdirSync(dir).slice(0, 1000).map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/**
 * Why writing a file in place changes a protected one under another name: a file with several names
 * (hard links) that is the repository's config, a hook (.git/hooks, a core.hooksPath directory), an
 * included configuration, or a protected file in a workspace root or its .claude/.vscode. With
 * Bash(git:*) in acceptEdits, `cp -l .git/config cfg.txt && echo '[core] fsmonitor = "…"' >> cfg.txt
 * && git status` ran the program, and `cp -l .husky/pre-commit notes.txt && echo … >> notes.txt`
 * changed the hook the next `git commit` ran: neither name written was protected. (Making the link
 * is judged as a change of its source, bash-paths.ts; this is for a link made some other way.)
 */
export function sharedInodeReason(abs: string, workspace: Workspace, env: NodeJS.ProcessEnv, isProtected: (p: string) => boolean): string | undefined {
  const st = memoFs.multiplyLinked(abs);
  if (st === undefined) return undefined;
  const candidates: string[] = [];
  for (const start of new Set([path.dirname(realpathLoose(abs)), path.dirname(path.resolve(abs)), ...workspace.roots])) {
    const repo = repositoryFrom(start);
    if (repo !== undefined) {
      const common = commonDir(repo.gitDir);
      for (const g of common === undefined ? [repo.gitDir] : [repo.gitDir, common]) {
        candidates.push(path.join(g, 'config'), path.join(g, 'config.worktree'), ...entries(path.join(g, 'hooks')));
      }
    }
    for (const h of hooksDirsFrom(start, env)) {
      if (h.match !== undefined) candidates.push(...entries(h.dir).filter((p) => h.match!(path.basename(p))));
      else candidates.push(h.dir, ...(h.config ? [] : entries(h.dir)));
    }
  }
  for (const root of workspace.roots) {
    for (const p of [...entries(root), ...entries(path.join(root, '.claude')), ...entries(path.join(root, '.vscode'))]) if (isProtected(p)) candidates.push(p);
  }
  const self = path.resolve(abs);
  for (const c of candidates) {
    if (c === self) continue;
    let o: fs.Stats | undefined;
    try {
      o = memoFs.stat(c);
    } catch {
      continue;
    }
    if (o?.isFile() && o.dev === st.dev && o.ino === st.ino) {
      return `${abs} is another name (a hard link) of ${c}: a change in place changes that protected file (git reads or runs it, or it is a protected path)`;
    }
  }
  return undefined;
}
