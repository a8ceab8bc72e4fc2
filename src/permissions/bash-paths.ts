/**
 * The files a Bash command reads and writes, as absolute paths the
 * permission check can judge (src/permissions/bash-rules.ts).
 *
 * A word is resolved the way the kernel resolves it: `..` applies to where
 * the components before it really lead, symlinks followed (`link/../x` is
 * next to the link's target, not next to the link). The textual resolution
 * is kept as a second spelling, since bash's own `cd` is logical; a use is
 * judged on both, and the strictest answer wins. Only words with a `..`
 * component cost a look at the file system beyond what canonicalising a
 * path already costs.
 */
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { parseGitGlobals } from '../bash/git-globals.js';
import { isLongOption } from '../bash/long-option.js';
import { commandName, gitCheckoutFirst, hasPathModel, hiddenNames, pathArgs, type PathArgs } from '../bash/paths.js';
import type { BashAnalysis, SimpleCommand, Word } from '../bash/types.js';
import { withoutGitGlobals } from '../bash/rule-match.js';
import { unwrapStages, wrapperOutputs } from '../bash/wrappers.js';
import { expandHome, realpathLoose, resolveTarget } from '../workspace.js';
import { gitWhere } from './bash-git.js';
import { INTERPRETER } from './run-scripts.js';
import { wordTail } from '../bash/words.js';
import { memoFs, memoisedFor } from '../util/decision-memo.js';

export interface PathUse {
  word: Word;
  kind: 'read' | 'write';
  /** The absolute paths the word may stand for: per possible working directory, textual and physical. */
  abs: string[];
  /**
   * Where the word leads cannot be fully known before the command runs: an
   * expansion, a relative path after a `cd` to an unknown place, or a command
   * that a wrapper runs in another directory or root (`env -C`, `chroot`).
   */
  uncertain: boolean;
  /** An output redirection (judged as an edit of its target), not a command's argument. */
  redirect: boolean;
  /** Found by the lexical fallback: used for deny rules only. */
  fallback: boolean;
  /**
   * Of abs, the existing directories a glob starts in and does not match
   * itself (`src` of `src/*.ts`): the command reaches names inside them, each
   * match judged on its own, but does not move, remove or create them.
   */
  globDirs?: string[];
  /** The program whose argument (or option's value) the word is, after every wrapper: not set for a redirection. */
  program?: string;
  /** A write by a program that may put files no argument names below it: an archive extracted, a tree copied. */
  fills?: boolean;
}

export interface Cwds {
  dirs: string[];
  /** The home directory a leading `~` stands for. */
  home?: string;
  /**
   * Where the line's first command, a `cd`, runs, when every other runs only once it succeeded
   * (`cd src && grep -rn TODO .`): `dirs` is then the cd's target alone.
   */
  before?: string[];
  unknown: boolean;
  cdCount: number;
}

/** The innermost command (every wrapper stripped), and whether a wrapper runs it elsewhere. Once per command in a decision (util/decision-memo.ts). */
export function innermostOf(cmd: SimpleCommand): { argv: Word[]; relocated: boolean } {
  return memoisedFor('innermostOf', cmd, innermostNow);
}

function innermostNow(cmd: SimpleCommand): { argv: Word[]; relocated: boolean } {
  const { stages, relocated } = unwrapStages(cmd.argv, false);
  return { argv: stages[stages.length - 1]!, relocated: relocated || cmd.elsewhere === true };
}

function isXargs(w: Word | undefined): boolean {
  return w !== undefined && w.literal && w.value.slice(w.value.lastIndexOf('/') + 1) === 'xargs';
}

/** `xargs -a FILE` / `--arg-file=FILE`: the file xargs reads the names from. */
function xargsArgFile(argv: readonly Word[]): Word | undefined {
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (!w.literal || !w.value.startsWith('-')) return undefined;
    const v = w.value;
    if (v === '-a' || v === '--arg-file') return argv[i + 1];
    if (v.startsWith('--arg-file=')) return { ...w, raw: v.slice(11), value: v.slice(11) };
    if (/^-[0oprtx]*a./.test(v)) return { ...w, raw: v.slice(v.indexOf('a') + 1), value: v.slice(v.indexOf('a') + 1) };
  }
  return undefined;
}

/**
 * The files a simple command reads and writes (bash/paths.ts on its
 * innermost command), with what it is given at run time: the names xargs
 * appends from its input (or `-a FILE`), and `{}` of `find -exec`, which
 * no check can know. Those are non-literal words, so uncertain uses. Once
 * per command in a decision (util/decision-memo.ts).
 */
export function commandPaths(cmd: SimpleCommand): PathArgs & { relocated: boolean } {
  return memoisedFor('commandPaths', cmd, commandPathsNow);
}

function commandPathsNow(cmd: SimpleCommand): PathArgs & { relocated: boolean } {
  const { stages, relocated } = unwrapStages(cmd.argv, false);
  let argv = stages[stages.length - 1]!;
  const name = commandName(argv);
  const viaXargs = stages.slice(0, -1).filter((st) => isXargs(st[0]));
  // find -exec … {} … (and xargs -I {}): the names go where the braces are.
  if (cmd.origin === 'derived' || viaXargs.length > 0) argv = argv.map((w) => (w.literal && w.value.includes('{}') ? hiddenNames(w.raw) : w));
  const p = pathArgs(argv);
  // `find src -exec grep -l TODO {} +`: the names find gives lie in its starting points' trees, so
  // reading them is a read of those trees (`grep -r TODO src`), judged as one; not a name built on
  // the braces (`{}.bak`), nor one written.
  let onlyBraces = false;
  if (cmd.origin === 'derived' && cmd.findRoots && viaXargs.length === 0) {
    const braces = argv.filter((w) => !w.literal && ['{}', "'{}'", '"{}"'].includes(w.raw));
    if (braces.length > 0 && braces.every((w) => p.reads.includes(w) && !p.writes.includes(w)) && p.opaque.every((w) => braces.includes(w))) {
      // -execdir runs the command in each match's directory: a name of its own is relative to
      // that (unknown), but the braces' names are still inside the starting points' trees.
      onlyBraces = p.reads.every((w) => braces.includes(w)) && p.writes.length === 0;
      p.reads = [...p.reads.filter((w) => !braces.includes(w)), ...cmd.findRoots];
      p.opaque = [];
      p.recursive = true;
    }
  }
  const extra: Word[] = [];
  for (const st of viaXargs) {
    const list = xargsArgFile(st);
    if (list) p.reads.push(list);
    if (name !== undefined && hasPathModel(name)) {
      const names = hiddenNames(`the names xargs passes to ${name}`);
      const probe = pathArgs([...argv, names]);
      if (probe.reads.includes(names)) p.reads.push(names);
      if (probe.writes.includes(names)) p.writes.push(names);
      extra.push(names);
    }
  }
  p.opaque.push(...extra);
  return { ...p, relocated: relocated || (cmd.elsewhere === true && !onlyBraces) };
}

function isDirectory(p: string): boolean {
  try {
    return memoFs.stat(p)?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

function hasDotDot(p: string): boolean {
  return p === '..' || p.startsWith('../') || p.endsWith('/..') || p.includes('/../');
}

function realTarget(p: string): string {
  try {
    return resolveTarget(p).target;
  } catch {
    return realpathLoose(p);
  }
}

/**
 * Where the kernel takes an absolute, unnormalised path: at each `..`, the
 * components so far are resolved through symlinks first (the longest
 * existing prefix; a dangling last link is followed, as a later command may
 * create its target), then the parent is taken. Parts that do not exist are
 * taken as spelt.
 */
export function physicalPath(p: string): string {
  let cur = '/';
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    cur = part === '..' ? path.dirname(realTarget(cur)) : path.join(cur, part);
  }
  return cur;
}

/** The absolute spellings of a word seen from cwd (textual first), or undefined when its value is not fixed. */
export function resolveWord(w: Word, cwd: string): string[] | undefined {
  return resolveWordReach(w, cwd)?.all;
}

/** resolveWord's paths, and of them the directories a glob only starts in (see PathUse.globDirs). */
function resolveWordReach(w: Word, cwd: string): { all: string[]; globDirs: string[] } | undefined {
  const plain = (all: string[] | undefined) => (all ? { all, globDirs: [] } : undefined);
  if (!w.literal) return undefined;
  let v = w.value;
  if (v.length === 0) return undefined;
  if (w.tilde) {
    if (v !== '~' && !v.startsWith('~/')) return undefined;
    v = expandHome(v);
  }
  if (w.glob) {
    // The names the shell will expand it to, judged one by one (`cat .e*` is a
    // read of .env), and the directory the pattern starts in (what it can
    // reach). Too many to judge: not fixed.
    const matches = expandGlob(path.resolve(cwd, v));
    if (matches === undefined) return undefined;
    // A pattern that starts with its glob passes names as written: one that
    // starts with `-` is an option to the command (`sort *` beside a file named
    // `--compress-program=sh`). Not a path whose reach is known.
    if (/^[*?[]/.test(v) && matches.some((m) => path.relative(cwd, m).startsWith('-'))) return undefined;
    const at = v.search(/[*?[]/);
    const head = v.slice(0, at);
    const dir = head.endsWith('/') ? head : path.dirname(head || '.');
    const spell = (x: string): string[] => resolveWord({ ...w, value: x, glob: false, tilde: false }, cwd) ?? [];
    const matched = new Set(matches.flatMap(spell));
    const dirs = spell(dir);
    return { all: [...new Set([...dirs, ...matched])], globDirs: dirs.filter((d) => !matched.has(d) && isDirectory(d)) };
  }
  const textual = path.resolve(cwd, v);
  if (!hasDotDot(v)) return plain([textual]);
  const physical = physicalPath(path.isAbsolute(v) ? v : `${cwd}/${v}`);
  return plain(physical === textual ? [textual] : [textual, physical]);
}

/**
 * Whether a glob word could hand the command an option: bash passes the names
 * a pattern that starts with its glob matches as they are, and a file named
 * `--compress-program=sh` beside `sort *` is an option to sort. Judged in each
 * directory the command may run in; too many names to judge counts as may.
 */
export function globMayBeOption(w: Word, dirs: readonly string[]): boolean {
  if (!w.literal || !w.glob || !/^[*?[]/.test(w.value)) return false;
  for (const cwd of dirs) {
    const matches = expandGlob(path.resolve(cwd, w.value));
    if (matches === undefined || matches.some((m) => path.relative(cwd, m).startsWith('-'))) return true;
  }
  return false;
}

/** At most this many names per glob, and directories read to expand one, before its reach counts as unknown. */
const GLOB_MAX_MATCHES = 256;
const GLOB_MAX_DIRS = 64;
/**
 * Backtracking steps picomatch's RegExp may take to expand one glob. A
 * component with k stars costs up to C(n, k) steps on a name of n characters
 * that does not match (`*a*a*a*a*c` on a 200-character name of a's: seconds,
 * on the event loop); past this budget the glob's reach counts as unknown
 * instead of being computed.
 */
const GLOB_MAX_STEPS = 5_000_000;

/** C(n, k), the steps a component of k stars may take on a name of n characters. */
function backtrackSteps(n: number, k: number): number {
  let c = 1;
  for (let i = 0; i < k && c < Number.MAX_SAFE_INTEGER; i++) c = (c * (n - i)) / (i + 1);
  return Math.max(c, 1);
}

/**
 * The existing paths an absolute pattern matches, as bash expands it
 * (components matched one directory at a time, a leading dot only by a
 * pattern that starts with one), or undefined when there are too many to
 * judge, a match is a name that is not UTF-8, or a `?` or `[…]` meets a name past ASCII. No match: bash passes the word on as written, so nothing to add.
 */
export function expandGlob(pattern: string): string[] | undefined {
  let paths = ['/'];
  let dirsRead = 0;
  let steps = 0;
  for (const part of pattern.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      // The kernel's `..`: the parent of where the path so far really leads.
      paths = paths.map((p) => path.dirname(realTarget(p)));
      continue;
    }
    if (!/[*?[]/.test(part)) {
      paths = paths.map((p) => path.join(p, part));
      continue;
    }
    const isMatch = picomatch(part, { dot: part.startsWith('.'), nobrace: true, noextglob: true });
    const stars = (part.replace(/\\./g, '').match(/\*+/g) ?? []).length;
    // `?` and `[…]` take a character of bash's locale: one of é's two bytes in C (which a line's
    // `LC_ALL=C` on an earlier line sets), the whole of it in UTF-8. Over a name past ASCII a
    // bracket's match is not known here (its classes too are the locale's), nor a `?`'s where the
    // name's bytes and its characters match differently.
    const bare = part.replace(/\\./g, '');
    const bracket = bare.includes('[');
    const question = bare.includes('?');
    const next: string[] = [];
    for (const dir of paths) {
      if (++dirsRead > GLOB_MAX_DIRS) return undefined;
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        continue;
      }
      for (const n of names) {
        if (stars >= 2 && (steps += backtrackSteps(n.length, stars)) > GLOB_MAX_STEPS) return undefined;
        if ((bracket || question) && /[^\x00-\x7f]/.test(n)) {
          if (bracket || isMatch(n) !== isMatch(Buffer.from(n).toString('latin1'))) return undefined;
        }
        if (!isMatch(n)) continue;
        // A name that is not UTF-8 comes back with U+FFFD: the path built from it leads elsewhere (or nowhere).
        if (n.includes('\ufffd')) return undefined;
        next.push(path.join(dir, n));
        if (next.length > GLOB_MAX_MATCHES) return undefined;
      }
    }
    paths = next;
    if (paths.length === 0) return [];
  }
  return paths;
}

export function workingDirs(a: BashAnalysis, sessionCwd: string, home: string): Cwds {
  const out: Cwds = { dirs: [sessionCwd], home, unknown: false, cdCount: 0 };
  for (const cmd of a.commands) {
    const { argv, relocated } = innermostOf(cmd);
    const name = commandName(argv);
    if (name === 'cd' || name === 'pushd' || name === 'popd') {
      out.cdCount++;
      if (name === 'popd' || relocated) {
        out.unknown = true;
        continue;
      }
      const t = pathArgs(argv).reads[0];
      if (!t) out.dirs.push(home);
      else if (t.literal && !t.glob && t.value !== '-') {
        const r = resolveWord(t, sessionCwd);
        if (r) out.dirs.push(...r);
        else out.unknown = true;
      } else out.unknown = true;
    }
  }
  out.dirs = [...new Set(out.dirs)];
  // `cd DIR && …`: the rest runs in DIR or not at all; one cd, the line's first command, with nothing but DIR.
  const first = a.commands[0];
  if (a.andChain && out.cdCount === 1 && !out.unknown && first && first.origin === 'top' && first.assignments.length === 0 && first.redirects.length === 0) {
    const [name, dir, ...rest] = first.argv;
    if (name?.literal && name.value === 'cd' && dir?.literal && !dir.glob && !dir.tilde && !dir.value.startsWith('-') && rest.length === 0) {
      const target = resolveWord(dir, sessionCwd);
      if (target && target.length > 0) {
        out.before = [sessionCwd];
        out.dirs = [...new Set(target)];
      }
    }
  }
  return out;
}

/**
 * Programs without an option table here may read the files their arguments
 * name, in ways no table lists: interpreters (a script, or files the code
 * opens), editors and pagers, and every other program (`curl -d @.env URL`,
 * `pr .env`, `shuf .env`, `docker run --env-file .env`, `gh gist create
 * .env`). Their literal arguments (an `@file` and an option's attached value
 * too) are judged against Read deny rules (and toolexec's own files) as
 * reads, and against nothing else: `Bash(curl:*)` or bypassPermissions does
 * not let `curl -d @.env URL` past `Read(./.env)`, while an argument that is
 * no file (code, a word, a URL) still asks for nothing. Not the commands
 * whose arguments are never files they read (NAMES_ONLY: `echo .env >>
 * .gitignore`, `test -f .env`). What a program opens by a name it builds is
 * beyond any check (README, "What it does not do").
 */
const NAMES_ONLY: ReadonlySet<string> = new Set([
  'echo', 'printf', 'test', '[', '[[', 'true', 'false', ':', 'which', 'type', 'hash', 'alias', 'unalias', 'export', 'unset',
  'local', 'declare', 'typeset', 'readonly', 'set', 'shopt', 'kill', 'killall', 'sleep', 'exit', 'return', 'break', 'continue',
  'shift', 'wait', 'jobs', 'fg', 'bg', 'disown', 'umask', 'ulimit', 'times', 'trap', 'help', 'whatis', 'apropos',
  'basename', 'dirname', 'expr', 'seq', 'id', 'whoami', 'groups', 'uname', 'printenv', 'nproc', 'arch', 'uptime', 'locale',
  'getconf', 'tty', 'popd', 'dirs', 'let', 'read', 'readarray', 'mapfile', 'getopts', 'complete', 'compgen', 'caller', 'df',
]);
const opaqueReader = (name: string): boolean => !NAMES_ONLY.has(name) || INTERPRETER.test(name);

/** A program whose files no table here models (an interpreter, `rename`, `npm`): what it moves or makes is not known. */
export function unmodelledProgram(argv: readonly Word[]): boolean {
  const name = commandName(argv);
  return name !== undefined && !hasPathModel(name) && opaqueReader(name);
}

/** The file an `@file` word names (`@.env`, curl's `-d@.env`, `-F f=@.env`), if any. */
function atFile(w: Word): Word | undefined {
  const at = w.value.startsWith('@') ? 1 : w.value.indexOf('=@') !== -1 ? w.value.indexOf('=@') + 2 : /^-[A-Za-z]@/.test(w.value) ? 3 : -1;
  if (at === -1 || at >= w.value.length) return undefined;
  // curl's `@file;type=text/plain`.
  const v = w.value.slice(at).replace(/;type=.*$/, '');
  return { ...w, raw: v, value: v };
}

/**
 * Other names a word may hold for a program that reads them: a short option's
 * attached value (`curl -T.env`, `ssh -F.env`, `wget -i.env`, `openssl -in.env`),
 * and what follows a `=`, `@` or `<` inside it (`kubectl --from-file=k=.env`,
 * `curl --data-urlencode a@.env`, `curl -F 'f=<.env'`; curl's `;type=…` left off).
 * Judged against Read deny rules only, so a word that is no file costs nothing.
 */
function embeddedNames(value: string): string[] {
  const out = new Set<string>();
  const m = /^-([A-Za-z]{1,3})/.exec(value);
  if (m && !value.startsWith('--')) for (let k = 2; k <= 1 + m[1]!.length && k < value.length; k++) out.add(value.slice(k));
  let found = 0;
  for (let i = 0; i < value.length && found < 8; i++) {
    const c = value[i];
    if (c !== '=' && c !== '@' && c !== '<') continue;
    found += 1;
    const rest = value.slice(i + 1).replace(/;type=.*$/, '');
    if (rest.length > 0) out.add(rest);
  }
  out.delete(value);
  return [...out];
}

/** Container tools whose `-e NAME=VALUE` sets a variable in the container and whose `-v HOST:PATH` shares a host path with it. */
const CONTAINER_TOOLS: ReadonlySet<string> = new Set(['docker', 'podman', 'nerdctl', 'docker-compose']);
/** The working directory as a word may spell it before the rest of a literal path: `$PWD/src:/app`, `"$(pwd)":/app`. */
const PWD_PREFIX = /^(?:\$PWD|\$\{PWD\}|\$\(pwd\))(?![A-Za-z0-9_])/;

/**
 * What a container tool's options say of files (`docker run`, `podman run`, `docker compose run`,
 * `docker exec`): the words of `-e`/`--env` (NAME or NAME=VALUE: a variable, no file the tool opens,
 * so `-e ENV_FILE=.env` names nothing), and the host side of a bind mount (`-v
 * HOST:PATH`, `--volume`, `--mount type=bind,source=HOST`), which the container may read whatever
 * runs in it: a read of HOST (`-v ./.env:/x`). A mount spelled with the working directory
 * (`$PWD/.env:/x`, `"$(pwd)":/app`) is read from it, unless the line gives PWD a value; any other
 * expansion there is a location not known before it runs.
 */
function containerWords(argv: readonly Word[], a: BashAnalysis): { env: Set<Word>; mounts: Word[]; unknown: Word[]; volumes: Set<Word> } {
  const out = { env: new Set<Word>(), mounts: [] as Word[], unknown: [] as Word[], volumes: new Set<Word>() };
  const pwdChanged = a.commands.some((c) => c.assignments.some((x) => x.name === 'PWD') || c.argv.some((w) => /(?:^|[^${A-Za-z0-9_])PWD\b/.test(w.raw)));
  const host = (w: Word, value: string | undefined, from: number): void => {
    if (value === undefined) {
      out.unknown.push(w);
      return;
    }
    const colon = value.indexOf(':');
    // Without a colon it is a path inside the container (an anonymous volume).
    if (colon <= 0) return;
    const v = value.slice(0, colon);
    // The shell expands a leading ~ of the word (`-v ~/.aws:/root/.aws`), not one after `--volume=`.
    const m = { ...w, raw: v, value: v, literal: true, glob: false, tilde: from === 0 && w.literal && w.tilde };
    out.mounts.push(m);
    // `-v data:/x` names a volume, not a directory (docker takes a host path only with a / or a leading . or ~).
    if (VOLUME_NAME.test(v)) out.volumes.add(m);
  };
  // The value of a word as a path: literal, or the working directory followed by literal text.
  const valueOf = (w: Word, from: number): string | undefined => {
    if (w.literal) return w.value.slice(from);
    if (from > 0 || pwdChanged || /['\\`]/.test(w.raw)) return undefined;
    const unquoted = w.raw.replaceAll('"', '');
    const m = PWD_PREFIX.exec(unquoted);
    if (!m) return undefined;
    const rest = unquoted.slice(m[0].length);
    return rest.includes('$') ? undefined : `.${rest}`;
  };
  const mount = (w: Word, value: string | undefined): void => {
    // The value is read as CSV (`"source=./.env",target=/x` is quoted), its keys in any case (`Source=`): quotes are not modelled.
    if (value === undefined || value.includes('"')) {
      out.unknown.push(w);
      return;
    }
    for (const part of value.split(',')) {
      const eq = part.indexOf('=');
      const key = (eq === -1 ? part : part.slice(0, eq)).toLowerCase();
      if (key === 'source' || key === 'src') out.mounts.push({ ...w, raw: part.slice(eq + 1), value: part.slice(eq + 1), literal: true, glob: false, tilde: false });
    }
  };
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    const next = argv[i + 1];
    if (!w.literal) {
      // An expansion may be an option (`$FLAGS` = `-v`): the word after it may be a mount.
      if (next && !(next.literal && next.value.startsWith('-'))) {
        host(next, valueOf(next, 0), 0);
        mount(next, next.literal ? next.value : undefined);
      }
      continue;
    }
    const v = w.value;
    if (v === '--') break;
    if (v === '-e' || v === '--env') {
      out.env.add(w);
      // pflag takes the next word whatever it is; one that is an option is judged as one (`--label -e -v
      // ./.env:/x` gives the label the value -e, and mounts .env).
      if (next && !(next.literal && next.value.startsWith('-'))) {
        out.env.add(next);
        i++;
      }
    } else if (v.startsWith('--env=')) out.env.add(w);
    else if (v === '--volume') {
      if (next) host(next, valueOf(next, 0), 0);
      i++;
    } else if (v.startsWith('--volume=')) host(w, valueOf(w, 9), 9);
    else if (v === '--mount') {
      if (next) mount(next, next.literal ? next.value : undefined);
      i++;
    } else if (v.startsWith('--mount=')) mount(w, v.slice(8));
    else if (/^-[A-Za-z]/.test(v)) {
      // A cluster of short options, as pflag reads it: flags, then one that takes the rest of the word
      // or the next word as its value (`-itv ./.env:/x`, `-dv./.env:/x`, `-ite X`).
      let j = 1;
      while (j < v.length && SHORT_FLAGS.includes(v[j]!)) j++;
      const c = v[j];
      if (c === undefined || !SHORT_WITH_VALUE.includes(c)) continue;
      const attached = j + 1 < v.length;
      const from = v[j + 1] === '=' ? j + 2 : j + 1;
      if (c === 'v') {
        if (attached) host(w, valueOf(w, from), from);
        else if (next) host(next, valueOf(next, 0), 0);
      } else if (c === 'e') {
        out.env.add(w);
        if (!attached && next && !(next.literal && next.value.startsWith('-'))) out.env.add(next);
        else continue;
      }
      if (!attached) i++;
    }
  }
  return out;
}

/** The host paths a container tool's command mounts into the container (`-v HOST:PATH`, `--mount source=HOST`): what lies below them is the container's to read. */
export function containerMounts(argv: readonly Word[], a: BashAnalysis): Word[] {
  const name = commandName(argv);
  if (name === undefined || !CONTAINER_TOOLS.has(name)) return [];
  const { mounts, volumes } = containerWords(argv, a);
  return mounts.filter((m) => !volumes.has(m));
}

/** A named volume's name, as docker takes the host side of `-v` without a / or a leading . or ~. */
const VOLUME_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** The short options of docker/podman run, create and exec that take no value, and those that take one (pflag). */
const SHORT_FLAGS = 'ditPq';
const SHORT_WITH_VALUE = 'acehlmpuvw';

/** Devices a command may read or write without touching a file. */
const DEVICES: ReadonlySet<string> = new Set(['/dev/null', '/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/zero', '/dev/random', '/dev/urandom']);

function isDevice(w: Word, redirect: boolean): boolean {
  if (!w.literal || w.glob) return false;
  // `cat -` reads standard input; `> -` names a file.
  if (w.value === '-') return !redirect;
  return DEVICES.has(w.value) || /^\/dev\/fd\/\d+$/.test(w.value);
}

/** A process's own directory in /proc: `self` (and a pid) means the checker here, but the command there. */
const PROC_PID = /^\/proc\/(self|thread-self|\d+)(\/|$)/;

/**
 * Whether a path leads through a process's /proc directory (`/proc/self/cwd/.env`,
 * or a symlink to one: `l` → /proc/self/cwd). The checker resolving it would
 * follow its own process's links (its working directory, its root, its open
 * files), not those of the command that opens it: where it leads is not known.
 */
export function throughProcDir(p: string, hops = 0): boolean {
  if (PROC_PID.test(p)) return true;
  if (hops > 40) return true;
  // Only a path with a symlink on it can lead elsewhere (one realpath tells).
  if (realpathLoose(p) === p) return false;
  const parts = p.split('/').filter((x) => x.length > 0);
  let cur = '';
  for (let i = 0; i < parts.length; i++) {
    cur = `${cur}/${parts[i]}`;
    let target: string;
    try {
      const st = memoFs.lstat(cur);
      if (st === undefined) return false;
      if (!st.isSymbolicLink()) continue;
      target = memoFs.readlink(cur);
    } catch {
      return false;
    }
    return throughProcDir(path.resolve(path.dirname(cur), target, ...parts.slice(i + 1)), hops + 1);
  }
  return false;
}

/** Other programs that put files into a directory by names no argument spells (archive extractors). */
const UNSEEN_FILLERS: ReadonlySet<string> = new Set(['gtar', 'bsdtar', 'cpio', 'bsdcpio', 'pax', 'star', 'unsquashfs', '7z', '7za', '7zz', 'ar']);
/**
 * Programs that may put a symbolic link (or a hard link to one) at or below
 * the places they write, as ln -s does: archive extraction (a member that
 * is a link), cp and rsync copying a link as a link (-P, -d, -a, -R), ln and
 * link making a hard link to a symlink.
 */
const LINK_COPIERS: ReadonlySet<string> = new Set(['tar', 'unzip', 'rsync', 'ln', 'link']);
/**
 * Whether a cp argv may copy a symlink as a symlink (-R, -P, -d, -a, --no-dereference,
 * --preserve=links, or a link made with -s / -l): a relative one then leads elsewhere from its
 * new place (`src/y` → `../../.env` copied to `d/src/y` is `.env`). A plain `cp f g` follows its
 * source, which is judged where it leads.
 */
function cpCopiesLinks(argv: readonly Word[]): boolean {
  return argv.slice(1).some((w) => {
    if (!w.literal) return true;
    const v = w.value;
    if (v === '--') return false;
    if (v.startsWith('--')) return /^--(rec|no-d|arc|sym|lin|pre)/.test(v) && !/^--preserve=(mode|ownership|timestamps|context|xattr)(,(mode|ownership|timestamps|context|xattr))*$/.test(v);
    return /^-[A-Za-z]*[rRPdasl]/.test(v);
  });
}
/** git verbs that write the work tree (a tracked symlink checked out, a patch adding one). */
const GIT_WORKTREE_WRITERS: ReadonlySet<string> = new Set([
  'checkout', 'switch', 'restore', 'reset', 'stash', 'merge', 'pull', 'rebase', 'cherry-pick', 'revert', 'am', 'apply', 'read-tree',
  'checkout-index', 'clone', 'worktree', 'submodule', 'bisect', 'sparse-checkout', 'mv',
]);

/** Subcommands of those verbs that only list or report: `git stash list`, `git worktree list`. */
const GIT_LISTING_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  stash: ['list', 'show'],
  worktree: ['list'],
  submodule: ['status', 'summary'],
  bisect: ['log', 'visualize', 'view'],
};

const CLONE_FLAGS = new Set(
  ('-q --quiet -v --verbose --progress --no-progress -n --no-checkout -l --local --no-local --no-hardlinks -s --shared --recursive ' +
    '--recurse-submodules --shallow-submodules --no-shallow-submodules --single-branch --no-single-branch --no-tags --tags ' +
    '--remote-submodules --no-remote-submodules --sparse --also-filter-submodules --reject-shallow --no-reject-shallow --dissociate').split(' '),
);
const CLONE_WITH_VALUE = new Set(
  ('-b --branch -o --origin --depth -u --upload-pack --template --reference --reference-if-able --separate-git-dir --filter -j --jobs ' +
    '--shallow-since --shallow-exclude --server-option --bundle-uri').split(' '),
);

/**
 * The one directory `git clone` writes a work tree into, when the argv says it plainly: `git clone
 * URL DIR`, or the name git makes of a URL's last part (`…/y.git` → y). Undefined when it cannot
 * be told (a global option such as -C, -c/--config (core.worktree), --bare, an unknown option, a URL
 * with no plain last part): the work tree may then be anywhere.
 */
function gitCloneTarget(argv: readonly Word[]): Word | undefined {
  if (argv.length < 3 || !argv[1]!.literal || argv[1]!.value !== 'clone') return undefined;
  const positional: Word[] = [];
  for (let i = 2; i < argv.length; i++) {
    const w = argv[i]!;
    if (!w.literal) return undefined;
    const v = w.value;
    if (v === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!v.startsWith('-') || v === '-') positional.push(w);
    else if (CLONE_FLAGS.has(v)) continue;
    else if (CLONE_WITH_VALUE.has(v)) i += 1;
    else if (v.startsWith('--') && v.includes('=') && CLONE_WITH_VALUE.has(v.slice(0, v.indexOf('=')))) continue;
    else return undefined;
  }
  if (positional.some((w) => !w.literal)) return undefined;
  if (positional.length === 2) return positional[1];
  if (positional.length !== 1) return undefined;
  // git's own guess: the URL's last part, without a trailing / or /.git, then without .git.
  let u = positional[0]!.value.replace(/\/+$/, '').replace(/\/\.git$/, '').replace(/\/+$/, '');
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*$/i.test(u)) return undefined;
  u = u.slice(Math.max(u.lastIndexOf('/'), u.lastIndexOf(':')) + 1).replace(/\.git$/, '');
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(u)) return undefined;
  return { ...positional[0]!, raw: u, value: u };
}

function gitWritesWorkTree(argv: readonly Word[]): boolean {
  const words = withoutGitGlobals(argv)?.[0] ?? argv;
  const at = words.findIndex((w, k) => k > 0 && !(w.literal && w.value.startsWith('-')));
  const verb = at === -1 ? undefined : words[at];
  if (verb === undefined) return false;
  if (!verb.literal || !GIT_WORKTREE_WRITERS.has(verb.value)) return !verb.literal;
  const rest = words.slice(at + 1);
  if (rest.some((w) => !w.literal)) return true;
  const args = rest.map((w) => w.value);
  // `git stash list`, `git worktree list`: exactly the subcommand, then options only.
  const listing = GIT_LISTING_SUBCOMMANDS[verb.value];
  if (listing && args.length > 0 && listing.includes(args[0]!) && args.slice(1).every((a) => a.startsWith('-'))) return false;
  // Not `git checkout -b NAME`: with a sparse checkout in effect git re-applies its patterns and may write a skip-worktree entry.
  return true;
}

/**
 * Whether a command may put files no check can list in the places it writes (an archive
 * extracted, a tree copied, a git checkout or clone): a directory laid out as a repository among
 * them, for one (`tar xf a.tar && git -C p fetch` obeys p/config).
 */
export function plantsFiles(argv: readonly Word[]): boolean {
  const name = commandName(argv);
  return name !== undefined && (LINK_COPIERS.has(name) || (name === 'cp' && cpCopiesLinks(argv)) || (name === 'git' && gitWritesWorkTree(argv)));
}

/**
 * The redirections the shell opens before a command runs, so before it writes anything: its own,
 * and those of a statement enclosing it. The grammar hangs a redirection written after a list or a
 * pipeline (`tar xf a.tar && cat < out/x`) on every command of it, where bash gives it to the last
 * one alone: one that a later command holds too is not counted.
 */
function ownRedirects(a: BashAnalysis, cmd: SimpleCommand): ReadonlySet<unknown> {
  const own = new Set<unknown>(cmd.redirects);
  for (const other of a.commands.slice(a.commands.indexOf(cmd) + 1)) for (const r of other.redirects) own.delete(r);
  return own;
}

/**
 * The directories git takes a command's relative names from, seen from each
 * working directory: where its -C options lead, and the top of the work tree
 * --work-tree names (git takes pathspecs from there when it runs outside it;
 * `git --work-tree=sub add .env` stages sub/.env). Undefined for other
 * commands and for git without those options; `unknown` when one of them is
 * an expansion.
 */
function gitNameBases(argv: readonly Word[], dirs: readonly string[], home: string | undefined): { dirs: string[]; unknown: boolean } | undefined {
  if (commandName(argv) !== 'git') return undefined;
  const g = parseGitGlobals(argv);
  if (g.chdirs.length === 0 && !g.options.some((o) => o.name === '--work-tree')) return undefined;
  const out = new Set<string>();
  let unknown = false;
  for (const d of dirs) {
    const where = gitWhere(g, d, home);
    out.add(where.run);
    if (where.workTree !== undefined) out.add(where.workTree);
    unknown ||= where.unknown;
  }
  return { dirs: [...out], unknown };
}

/**
 * Whether a command gives its source files another name (a hard link): `cp -l`/`--link` (`cp -al`),
 * `ln` without -s/--symbolic, `link`. A word that is no literal may be any option.
 */
export function makesHardLinks(argv: readonly Word[]): boolean {
  const name = commandName(argv);
  if (name === 'link') return true;
  if (name !== 'cp' && name !== 'ln') return false;
  let symbolic = false;
  let hard = name === 'ln';
  for (const w of argv.slice(1)) {
    if (!w.literal) return true;
    const x = w.value;
    if (x === '--') break;
    if (x.startsWith('--')) {
      if (name === 'cp' && isLongOption(x, ['--link'], 4)) hard = true;
      if (name === 'ln' && isLongOption(x, ['--symbolic'], 4)) symbolic = true;
    } else if (x.startsWith('-') && x.length > 1) {
      if (name === 'cp' && x.includes('l')) hard = true;
      if (name === 'ln' && x.includes('s')) symbolic = true;
    }
  }
  return hard && !symbolic;
}

/** Compressors that replace each file they are given (`gzip src/a.ts` leaves src/a.ts.gz), unless they write to stdout, test or list. */
const COMPRESSORS: ReadonlySet<string> = new Set([
  'gzip', 'gunzip', 'pigz', 'unpigz', 'bzip2', 'bunzip2', 'pbzip2', 'xz', 'unxz', 'lzma', 'unlzma', 'zstd', 'unzstd', 'pzstd', 'lz4', 'unlz4', 'lzip', 'compress', 'uncompress', 'brotli',
]);
/** Formatters and fixers that rewrite the files and trees they are given: by program, what makes them write (any option, when undefined). */
const FORMATTERS: Readonly<Record<string, { writes?: RegExp; readOnly?: RegExp }>> = {
  prettier: { writes: /^(-w|--write)$/ },
  eslint: { writes: /^--fix(-dry-run)?$/ },
  biome: { writes: /^--(write|apply|apply-unsafe|fix)$/ },
  black: { readOnly: /^(--check|--diff)$/ },
  isort: { readOnly: /^(--check|--check-only|-c|--diff)$/ },
  autopep8: { writes: /^(-i|--in-place)$/ },
  yapf: { writes: /^(-i|--in-place)$/ },
  'clang-format': { writes: /^-i$/ },
  gofmt: { writes: /^-[a-z]*w$/ },
  goimports: { writes: /^-w$/ },
  rustfmt: { readOnly: /^--check$/ },
  shfmt: { writes: /^-[a-z]*w$/ },
  stylua: { readOnly: /^(-c|--check)$/ },
};

/**
 * The operands of a program without an option table that changes them in place: compressors (not
 * with -c/-t/-l), `sponge FILE`, dos2unix and the like, `perl -i`/`ruby -i`, and formatters told
 * to write. With Edit(./src/**) denied, `gzip src/a.ts` or `perl -pi -e … src/a.ts` changed the file
 * in bypassPermissions. Every literal word not an option is taken (a word that is code or a value
 * names no denied file, and costs nothing).
 */
function inPlaceWrites(name: string, args: readonly Word[]): Word[] {
  const words = args.filter((w) => w.literal);
  const operands = (): Word[] => words.filter((w) => !w.value.startsWith('-'));
  if (COMPRESSORS.has(name)) {
    if (words.some((w) => /^-[A-Za-z0-9]*[ctl]/.test(w.value) || /^--(stdout|to-stdout|test|list)$/.test(w.value))) return [];
    return operands();
  }
  if (name === 'sponge' || name === 'ed' || name === 'red' || name === 'mkfifo' || ['dos2unix', 'unix2dos', 'mac2unix', 'unix2mac'].includes(name)) return operands();
  if (name === 'mknod') return operands().slice(0, 1);
  const valueOf = (short: string, long: string): Word[] => {
    const out: Word[] = [];
    for (let i = 0; i < args.length; i++) {
      const w = args[i]!;
      if (!w.literal) continue;
      if (w.value === short || w.value === long) {
        if (args[i + 1]) out.push(args[i + 1]!);
      } else if (w.value.startsWith(`${long}=`)) out.push(wordTail(w, long.length + 1));
      else if (short.length === 2 && w.value.startsWith(short) && !w.value.startsWith('--') && w.value.length > 2) out.push(wordTail(w, 2));
    }
    return out;
  };
  // The files a patch names are known only when it is read: not where they are.
  if (name === 'patch') {
    if (words.some((w) => w.value === '--dry-run' || w.value === '-C' || w.value === '--check')) return [];
    return [hiddenNames('the files the patch names'), ...operands().slice(0, 1), ...valueOf('-o', '--output')];
  }
  // split and csplit write files named by a prefix: split's is its last operand of two, csplit's -f.
  if (name === 'split') return operands().length >= 2 ? operands().slice(-1) : [];
  if (name === 'csplit') return valueOf('-f', '--prefix');
  if (name === 'mktemp') return [...operands(), ...valueOf('-p', '--tmpdir')];
  // A download saved under a name given, or the URL's last component (in the directory -P or --output-dir names).
  if (name === 'wget' || name === 'curl') {
    const named = name === 'wget' ? valueOf('-O', '--output-document') : valueOf('-o', '--output');
    const dir = name === 'wget' ? valueOf('-P', '--directory-prefix')[0] : valueOf('--output-dir', '--output-dir')[0];
    const remote = name === 'wget' ? named.length === 0 : words.some((w) => /^-[A-Za-z]*O/.test(w.value) || w.value.startsWith('--remote-name'));
    const urls = remote ? words.filter((w) => /^[a-z][a-z0-9+.-]*:\/\//i.test(w.value)) : [];
    const base = (u: string): string => u.replace(/[?#].*$/s, '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split('/').pop() || 'index.html';
    const inDir = (n: string): Word => literalPath(dir ? path.posix.join(dir.value, n) : n);
    return [...named, ...(dir ? [dir] : []), ...urls.map((u) => inDir(base(u.value)))];
  }
  if ((name === 'perl' || name === 'ruby' || INTERPRETER_PERL.test(name)) && words.some((w) => /^-[A-Za-z]*i/.test(w.value))) {
    // Not the code of -e (nor, without one, the script file the first operand is).
    const out: Word[] = [];
    let code = false;
    for (let i = 0; i < words.length; i++) {
      const v = words[i]!.value;
      if (/^-[A-Za-z]*[eE]$/.test(v)) {
        code = true;
        i++;
      } else if (!v.startsWith('-')) out.push(words[i]!);
    }
    return code ? out : out.slice(1);
  }
  const f = Object.hasOwn(FORMATTERS, name) ? FORMATTERS[name]! : undefined;
  if (!f) return [];
  if (f.readOnly && words.some((w) => f.readOnly!.test(w.value))) return [];
  if (f.writes && !words.some((w) => f.writes!.test(w.value))) return [];
  return operands();
}
const INTERPRETER_PERL = /^perl5(\.\d+)*$/;

function literalPath(v: string): Word {
  return { raw: v, value: v, literal: true, glob: false, tilde: false };
}

/** Programs that put what they are given into a directory they are given last (or with -t), under its base name. */
const INTO_DIRECTORY: ReadonlySet<string> = new Set(['cp', 'mv', 'ln', 'install']);

function relative(w: Word): boolean {
  return w.literal && !w.tilde && !w.value.startsWith('/');
}

/** The base names a source word stands for, from each working directory (a glob's matches); undefined when not known. */
function baseNames(w: Word, dirs: readonly string[]): string[] | undefined {
  if (!w.literal) return undefined;
  const strip = (v: string): string => path.posix.basename(v.replace(/\/+$/, ''));
  if (!w.glob) {
    const b = strip(w.value);
    return b === '' || b === '.' || b === '..' ? [] : [b];
  }
  const out = new Set<string>();
  for (const d of dirs) {
    const r = resolveWord(w, d);
    if (r === undefined) return undefined;
    for (const p of r) out.add(path.basename(p));
  }
  return [...out];
}

export function pathUses(a: BashAnalysis, cwds: Cwds): PathUse[] {
  const uses: PathUse[] = [];
  const add = (word: Word, kind: 'read' | 'write', o: { fallback?: boolean; redirect?: boolean; relocated?: boolean; opaque?: boolean; bases?: string[]; program?: string | undefined; fills?: boolean }): void => {
    const redirect = o.redirect ?? false;
    if (isDevice(word, redirect)) return;
    const relative = word.literal && !word.tilde && !word.value.startsWith('/');
    const bases = relative ? (o.bases ?? cwds.dirs) : [cwds.dirs[0]!];
    const abs = new Set<string>();
    const reached: Array<{ all: string[]; globDirs: string[] }> = [];
    let unresolved = false;
    for (const d of bases) {
      const r = resolveWordReach(word, d);
      if (r) {
        for (const p of r.all) abs.add(p);
        reached.push(r);
      } else unresolved = true;
    }
    const uncertain = unresolved || (relative && cwds.unknown) || (o.relocated ?? false) || (o.opaque ?? false) || [...abs].some((p) => throughProcDir(p));
    // A start directory that another working directory's reading matches is no mere start.
    const reachOnly = [...new Set(reached.flatMap((r) => r.globDirs))].filter((p) => reached.every((r) => !r.all.includes(p) || r.globDirs.includes(p)));
    uses.push({ word, kind, abs: [...abs], uncertain, redirect, fallback: o.fallback ?? false, ...(reachOnly.length > 0 ? { globDirs: reachOnly } : {}), ...(o.program !== undefined ? { program: o.program } : {}), ...(o.fills ? { fills: true } : {}) });
  };
  // Symbolic links an earlier command of the same line makes: where a path through one leads is not known yet.
  const links: string[] = [];
  /** Where `mv` puts something (a link, a directory) that paths may go through. */
  const moved: string[] = [];
  let unknownLink = false;
  /**
   * Trees another program of the line may put links in (an archive extracted, a link copied as a
   * link, a git checkout): paths below them, in the line's other commands, lead where no check
   * can know before it runs. `all`: anywhere (git's work tree may be any of the line's directories).
   */
  const linkTrees: Array<{ dirs: string[] | 'all'; from: number; to: number; own: ReadonlySet<unknown> }> = [];
  /** The redirection each redirect use stands for, to tell a link maker's own from the others'. */
  const redirectOf = new Map<number, unknown>();
  /** Uses that read a whole tree (`grep -R x out`): a link put anywhere below them is read through too. */
  const treeReads = new Set<number>();
  const changesDir = new Set<number>();
  /** The names a command makes inside the directory it puts things in (`mv x build` makes build/x): not paths through what it moves. */
  const intoDir = new Set<number>();
  const cwdTreeReaders: SimpleCommand[] = [];
  /** Marks the uses from `from` on that go through such a link as unknown locations. */
  const markThroughLinks = (from: number): void => {
    if (links.length === 0 && !unknownLink) return;
    for (let k = from; k < uses.length; k++) {
      const u = uses[k]!;
      if (unknownLink || u.abs.some((p) => links.some((l) => p === l || p.startsWith(`${l}/`)))) u.uncertain = true;
    }
  };
  for (const cmd of a.commands) {
    const { stages } = unwrapStages(cmd.argv, false);
    const argv = stages[stages.length - 1]!;
    const p = commandPaths(cmd);
    // git opens the names it is given from where its -C options lead (pathspecs from its --work-tree's top, too).
    const named = gitNameBases(argv, cwds.dirs, cwds.home);
    const relocated = p.relocated || (named?.unknown ?? false);
    // The cd of `cd DIR && …` names DIR from where the line starts.
    const bases = named?.dirs ?? (cwds.before !== undefined && cmd === a.commands[0] ? cwds.before : undefined);
    const fallback = cmd.origin === 'fallback';
    const first = uses.length;
    for (const w of p.reads) add(w, 'read', { fallback, relocated, opaque: p.opaque.includes(w), bases });
    // A hard link made of a file lets it be changed in place under the new name (`cp -l .git/config c && echo … >> c`):
    // making one is judged as a change of the file it names.
    if (makesHardLinks(argv)) for (const w of p.reads) add(w, 'write', { fallback, relocated, opaque: p.opaque.includes(w), bases });
    const name0 = commandName(argv);
    // Not ln and link: what they make below a directory is named after their source.
    const fills = (plantsFiles(argv) && name0 !== 'ln' && name0 !== 'link') || UNSEEN_FILLERS.has(name0 ?? '') || (name0 === 'cp' && p.recursive);
    for (const w of p.writes) add(w, 'write', { fallback, relocated, opaque: p.opaque.includes(w), bases, program: name0, fills });
    // `git checkout X`: X is a path git overwrites when no revision has that name; one that is on disk is taken for one.
    const checkoutFirst = gitCheckoutFirst(argv);
    if (checkoutFirst) {
      const c = checkoutFirst;
      const where = c.literal && !c.glob ? (relative(c) ? (bases ?? cwds.dirs) : [cwds.dirs[0]!]).flatMap((d) => resolveWord(c, d) ?? []) : [];
      // A pattern the shell expands names files; an expansion may name one.
      if (!c.literal || c.glob || where.some((x) => memoFs.lstat(x) !== undefined)) add(c, 'write', { fallback, relocated, opaque: !c.literal, bases, program: name0 });
    }
    // Into an existing directory, cp, mv, ln and install make DIR/NAME, NAME each source's base name: `cp x/.env build/`
    // writes build/.env, which `Edit(.env)` denies, though neither word is that name.
    if (name0 !== undefined && INTO_DIRECTORY.has(name0) && !argv.some((w) => w.literal && (w.value === '-T' || /^--no-t/.test(w.value) || /^-[A-Za-z]*T/.test(w.value)))) {
      for (const dest of p.writes) {
        if (p.reads.includes(dest) || !dest.literal) continue;
        const dirs = (relative(dest) ? (bases ?? cwds.dirs) : [cwds.dirs[0]!]).flatMap((d) => resolveWord(dest, d) ?? []);
        if (!dest.value.endsWith('/') && !dirs.some(isDirectory)) continue;
        for (const src of p.reads) {
          const names = baseNames(src, bases ?? cwds.dirs);
          if (names === undefined) {
            add({ raw: `${dest.raw}/${src.raw}`, value: dest.value, literal: false, glob: false, tilde: false }, 'write', { fallback, opaque: true, bases, program: name0 });
            continue;
          }
          for (const n of names) {
            intoDir.add(uses.length);
            add({ ...dest, raw: `${dest.raw}/${n}`, value: path.posix.join(dest.value, n), glob: false }, 'write', { fallback, relocated, bases, program: name0 });
          }
        }
      }
    }
    // What the command reads without naming it: an unknown location.
    for (const w of p.opaque) if (!p.reads.includes(w)) add(w, 'read', { fallback, opaque: true, bases });
    // Files a wrapper writes itself (`time -o`, `strace -o`, `script FILE`), where the shell runs it.
    for (const w of wrapperOutputs(stages)) add(w, 'write', { fallback });
    // An interpreter's or an editor's arguments: judged against deny rules only (as fallback uses are).
    const name = commandName(argv);
    // Programs without a table that change the files they are given in place: judged as writes of them too.
    if (name !== undefined && !hasPathModel(name)) for (const w of inPlaceWrites(name, argv.slice(1))) add(w, 'write', { fallback, relocated, bases, program: name });
    if (name !== undefined && !hasPathModel(name) && opaqueReader(name)) {
      const container = CONTAINER_TOOLS.has(name) ? containerWords(argv, a) : undefined;
      for (const m of container?.mounts ?? []) add(m, 'read', { fallback: true });
      // Not judged against deny rules only: a place no check can know may be a denied file or toolexec's own.
      for (const m of container?.unknown ?? []) add(m, 'read', { opaque: true });
      for (const w of argv.slice(1)) {
        if (!w.literal || w.value.length > 4096) continue;
        // A variable given to the container (NAME or NAME=VALUE): no file the tool opens.
        if (container?.env.has(w)) continue;
        if (!w.value.startsWith('-')) add(w, 'read', { fallback: true });
        // An option's attached value (`--require=./.env`, `--config=.env`) names a file as often.
        else if (/^--?[\w-]+=./.test(w.value)) add(wordTail(w, w.value.indexOf('=') + 1), 'read', { fallback: true });
        const file = atFile(w);
        if (file) add(file, 'read', { fallback: true });
        for (const v of embeddedNames(w.value)) add({ ...w, raw: v, value: v }, 'read', { fallback: true });
      }
    }
    markThroughLinks(first);
    // find lists names; it reads no file through a link.
    if (p.recursive && commandName(argv) !== 'find') for (let k = first; k < uses.length; k++) if (uses[k]!.kind === 'read') treeReads.add(k);
    // `grep -R x`, `rg -L x` with no operand read the working directory's whole tree.
    const readsCwdTree = p.recursive && p.reads.length === 0 && p.writes.length === 0 && commandName(argv) !== 'find';
    // cd reads nothing; the paths used after it are resolved from where it may lead (a link made in the tree included).
    if (commandName(argv) === 'cd' || commandName(argv) === 'pushd') for (let k = first; k < uses.length; k++) changesDir.add(k);
    const maker = commandName(argv);
    if (maker !== undefined && (LINK_COPIERS.has(maker) || (maker === 'cp' && cpCopiesLinks(argv))) && p.writes.length > 0) {
      const dirs: string[] = [];
      let unknown = false;
      for (const w of p.writes) {
        const r = resolveWord(w, cwds.dirs[0]!);
        if (r) dirs.push(...r);
        else unknown = true;
      }
      linkTrees.push({ dirs: unknown ? 'all' : dirs, from: first, to: uses.length, own: ownRedirects(a, cmd) });
    } else if (readsCwdTree) cwdTreeReaders.push(cmd);
    else if (maker === 'git' && gitWritesWorkTree(argv)) {
      // `git clone URL y` puts its work tree (and the links in it) in y only.
      const target = relocated ? undefined : gitCloneTarget(argv);
      const dirs = target ? resolveWord(target, cwds.dirs[0]!) : undefined;
      linkTrees.push({ dirs: dirs ?? 'all', from: first, to: uses.length, own: ownRedirects(a, cmd) });
    }
    // A link or directory moved into place: paths through it (not the moved name itself: mv's source, a read, was judged where it leads).
    if (commandName(argv) === 'mv') {
      for (const w of p.writes) {
        if (p.reads.includes(w)) continue;
        const r = resolveWord(w, cwds.dirs[0]!);
        if (r) moved.push(...r);
        else unknownLink = true;
      }
    }
    if (commandName(argv) === 'ln' && argv.some((w) => w.literal && (/^-[A-Za-z]*s[A-Za-z]*$/.test(w.value) || (w.value.startsWith('--sy') && '--symbolic'.startsWith(w.value))))) {
      const source = p.reads[p.reads.length - 1];
      for (const w of p.writes) {
        const r = resolveWord(w, cwds.dirs[0]!);
        if (!r) {
          unknownLink = true;
          continue;
        }
        for (const d of r) {
          links.push(d);
          // Into an existing directory, the link is made inside it, under the source's name.
          if (source?.literal && isDirectory(d)) links.push(path.join(d, path.basename(source.value)));
        }
      }
    }
  }
  // The shell opens redirections itself, in its own directory, before any wrapper runs.
  const beforeRedirects = uses.length;
  for (const r of a.redirects) {
    if (r.kind !== 'file' || !r.target) continue;
    redirectOf.set(uses.length, r);
    add(r.target, r.output ? 'write' : 'read', { redirect: r.output });
  }
  markThroughLinks(beforeRedirects);
  // A command of the line that runs at the same time (`(sleep 1; cat l/.env) & ln -sfn . l`,
  // a pipeline) or in a loop may go through such a link too, though it stands before it;
  // and a path through a directory or link `mv` puts in place leads where that went.
  const through = [...links, ...moved];
  if (through.length > 0 || unknownLink) {
    for (const [k, u] of uses.entries()) {
      if (unknownLink || (!intoDir.has(k) && u.abs.some((p) => through.some((l) => p.startsWith(`${l}/`))))) u.uncertain = true;
      // A glob expanded after a symbolic link is made may take the link in (`ln -s ../.env src/x.ts &&
      // cat src/*.ts`), a name the expansion made before the line runs does not hold.
      if (links.length > 0 && u.word.glob) u.uncertain = true;
    }
  }
  // A tree read of the working directory, with no word naming it, where such a tree is: judged as a read of `.`.
  if (linkTrees.length > 0) {
    for (const cmd of cwdTreeReaders) {
      const dot: Word = { raw: '.', value: '.', literal: true, glob: false, tilde: false };
      treeReads.add(uses.length);
      add(dot, 'read', { fallback: cmd.origin === 'fallback' });
    }
  }
  // Below a tree another command of the line may put links in (before it or after it: it may run at the same time).
  for (const t of linkTrees) {
    for (let k = 0; k < uses.length; k++) {
      // The maker's own redirections (`git am < fix.patch`) are opened by the shell before it runs, as its own arguments are read by it before it writes.
      if ((k >= t.from && k < t.to) || changesDir.has(k) || t.own.has(redirectOf.get(k))) continue;
      const u = uses[k]!;
      // A tree read at or above such a tree (`tar xf a.tar -C out && grep -R x out`) goes through what lands in it.
      const tree = treeReads.has(k);
      const reaches = (p: string, d: string): boolean => p.startsWith(`${d}/`) || (tree && (p === d || d.startsWith(p.endsWith('/') ? p : `${p}/`)));
      if (t.dirs === 'all' || u.abs.some((p) => (t.dirs as string[]).some((d) => reaches(p, d)))) u.uncertain = true;
    }
  }
  return uses;
}
