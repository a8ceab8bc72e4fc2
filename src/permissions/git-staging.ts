/**
 * What git stages from the work tree without naming the files: `git add -A`, `git add .`, `git add
 * DIR`, `git add :/`, `git add -N .`, `git add -u`, `git commit -a` (or with paths), `git stash`. With
 * Read(./.env) denied and Bash(git:*) allowed, `git add -A && git commit -qm x && git push -q
 * /tmp/out.git HEAD:main` was allowed and put an untracked .env that no .gitignore lists in a
 * repository outside the workspace, where `git --git-dir=/tmp/out.git show main:.env` printed it: no
 * word named .env, and `git add .` reads `.` as a name, not as a tree.
 *
 * The check (bash-rules.ts) lists the work tree and asks where it holds a denied file (or a link to
 * one) git would stage: for `-A`, `.` and directories, one that is not surely ignored, or may be
 * tracked; for `-u`, `commit -a` and `stash`, which take tracked files only, one that may be
 * tracked. "Surely ignored" is judged conservatively (gitIgnoresSurely); "may be tracked" by the
 * index (loadIndex). `git push` is not judged: what it sends is what was staged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseGitGlobals } from '../bash/git-globals.js';
import { isLongOption } from '../bash/long-option.js';
import type { Word } from '../bash/types.js';
import { memoised } from '../util/decision-memo.js';
import { readSmallFile, readSmallText } from '../util/read-small-file.js';
import { starMatch } from '../util/star-match.js';
import { gitAddWords, gitConfigText, gitVerb, gitSubcommand } from './bash-git.js';
import { IGNORE_MAX_BYTES } from './rg-hidden.js';

export interface Staging {
  /** `all`: untracked files as well, those ignored excepted; `tracked`: only files git tracks already. */
  scope: 'all' | 'tracked';
  /**
   * The operands, when each is a plain name (literal, no pattern nor pathspec magic, git given no
   * global option but -C) that git takes as that file or directory; undefined when the staging may
   * cover the whole work tree (no operand, `:/`, a pattern, `--pathspec-from-file`, an expansion).
   */
  names: Word[] | undefined;
  /** What stages, for the message: `git add -A`, `git commit -a`. */
  what: string;
}

/** A pathspec git expands itself (a wildcard, any magic) or that is not spelled out (a backslash). */
const PATHSPEC_PATTERN = /[*?[\\]|^:/;

/** `git add` long options that take no value and change neither what is staged nor how (`--force` and `--dry-run` are judged apart). */
const ADD_FLAGS = ['--verbose', '--interactive', '--patch', '--edit', '--ignore-errors', '--ignore-missing', '--sparse', '--refresh', '--chmod', '--pathspec-file-nul', '--no-warn-embedded-repo'];

/**
 * What a `git add` (not -f: gitForceAdds judges that), `git commit` or `git stash` push stages
 * beyond the names it is given; undefined for any other argv and for a `git add -n` (a dry run) or a
 * `git commit` that takes the index as it is.
 */
export function gitStages(argv: readonly Word[]): Staging | undefined {
  const v = gitVerb(argv);
  if (v === undefined) return undefined;
  const onlyChdirs = parseGitGlobals(argv).options.every((o) => o.name === '-C');
  // `git stage` is git's other name for add.
  if (v.verb === 'add' || v.verb === 'stage') return addStages(v.rest, onlyChdirs);
  if (v.verb === 'commit') return commitStages(v.rest) ? { scope: 'tracked', names: undefined, what: 'git commit -a (or with paths)' } : undefined;
  if (v.verb === 'stash' && stashPushesTracked(v.rest)) return { scope: 'tracked', names: undefined, what: 'git stash' };
  if ((v.verb === 'rebase' || v.verb === 'merge' || v.verb === 'pull') && mayAutostash(v.rest)) {
    return { scope: 'tracked', names: undefined, what: `git ${v.verb} (which may autostash; --no-autostash does not)` };
  }
  // `--again` re-adds from the work tree every path whose index entry differs from HEAD's (after `git reset --soft`, all of them).
  if (v.verb === 'update-index' && v.rest.some((w) => !w.literal || /^-[^-]*g/.test(w.value) || isLongOption(w.value, ['--again'], 3))) {
    return { scope: 'tracked', names: undefined, what: 'git update-index --again' };
  }
  return undefined;
}

/** Options that go on with, or leave, a rebase or merge already begun: no autostash is made then. */
const SEQUENCER_STEPS = ['--continue', '--abort', '--skip', '--quit', '--edit-todo', '--show-current-patch'];

/**
 * Whether a `git rebase`, `git merge` or `git pull` may store the work tree's tracked changes in an
 * autostash, a commit like `git stash`'s: with `--autostash`, or with rebase.autoStash or
 * merge.autoStash set in any configuration file, which is not read here. git prints its name
 * ('Created autostash: e293929'), and a later `git push origin e293929:refs/heads/x` sends it.
 * Only a `--no-autostash` after any `--autostash` surely makes none.
 */
function mayAutostash(rest: readonly Word[]): boolean {
  let autostash = true;
  for (const w of rest) {
    if (!w.literal) return true;
    if (w.value === '--') break;
    if (SEQUENCER_STEPS.includes(w.value)) return false;
    if (isLongOption(w.value, ['--no-autostash'], 8)) autostash = false;
    else if (isLongOption(w.value, ['--autostash'], 7)) autostash = true;
  }
  return autostash;
}

/** `git add` long options that take everything: untracked files, removals. */
const ADD_ALL = ['--all', '--no-ignore-removal', '--no-all', '--ignore-removal', '--intent-to-add'];
/** `git add` long options that take tracked files only. */
const ADD_UPDATE = ['--update', '--renormalize'];

function addStages(rest: readonly Word[], onlyChdirs: boolean): Staging | undefined {
  const a = gitAddWords(rest);
  if (a.force || a.longs.some((x) => isLongOption(x, ['--dry-run'], 5)) || a.shorts.some((x) => x.includes('n'))) return undefined;
  const all = a.longs.some((x) => isLongOption(x, ADD_ALL)) || a.shorts.some((x) => x.includes('A') || x.includes('N'));
  const update = a.longs.some((x) => isLongOption(x, ADD_UPDATE)) || a.shorts.some((x) => x.includes('u'));
  const opaque =
    !onlyChdirs ||
    a.expansion ||
    a.longs.some((x) => !isLongOption(x, [...ADD_ALL, ...ADD_UPDATE, ...ADD_FLAGS])) ||
    a.shorts.some((x) => !/^-[vipeuAN]+$/.test(x)) ||
    a.operands.some((w) => PATHSPEC_PATTERN.test(w.value));
  const scope = update && !all ? 'tracked' : 'all';
  const what = `git add ${scope === 'tracked' ? '-u' : a.operands.length === 0 ? '-A' : 'with a directory or pathspec'}`;
  return { scope, names: opaque || a.operands.length === 0 ? undefined : a.operands, what };
}

/** `git commit` short options whose value is the rest of the word or the next word, and those whose value is only attached. */
const COMMIT_SHORT_VALUE = 'mFCct';
const COMMIT_SHORT_ATTACHED = 'uS';
/** `git commit` long options whose value may be the next word. */
const COMMIT_LONG_VALUE = ['--message', '--file', '--reuse-message', '--reedit-message', '--fixup', '--squash', '--author', '--date', '--template', '--cleanup', '--trailer'];

/**
 * Whether a `git commit` stages files from the work tree: `-a`/`--all`, `-i`/`--include`,
 * `-o`/`--only`, `--pathspec-from-file`, or a path operand; an expansion, or an option it does not
 * know, may be one.
 */
function commitStages(rest: readonly Word[]): boolean {
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (!w.literal) return true;
    const x = w.value;
    if (x === '--') return i + 1 < rest.length;
    if (!x.startsWith('-') || x === '-') return true;
    if (x.startsWith('--')) {
      if (isLongOption(x, ['--all', '--include', '--only', '--pathspec-from-file', '--interactive', '--patch'], 3)) return true;
      if (isLongOption(x, COMMIT_LONG_VALUE, 3) && !x.includes('=')) i++;
      continue;
    }
    for (let k = 1; k < x.length; k++) {
      const c = x[k]!;
      if ('aiop'.includes(c)) return true;
      if (COMMIT_SHORT_VALUE.includes(c)) {
        if (k === x.length - 1) i++;
        break;
      }
      if (COMMIT_SHORT_ATTACHED.includes(c)) break;
    }
  }
  return false;
}

/** Whether the words after `stash` store tracked changes (`git stash`, `push`, `save`, and `create`, which makes the commit without the push; -u/-a are gitStashesUntracked's). */
function stashPushesTracked(rest: readonly Word[]): boolean {
  // `git stash -m wip` is a push: options first mean one (an option's value, as in `-m list`, may be taken for the subcommand).
  if (rest[0]?.literal && rest[0].value.startsWith('-')) return true;
  const sub = gitSubcommand(rest);
  return sub === undefined || !sub.literal || sub.value === 'push' || sub.value === 'save' || sub.value === 'create';
}

/**
 * An ignore line simple enough to read surely: a name (its `*` matching within it), anchored by a
 * leading `/`, a directory by a trailing one; a leading `**\/` is the name at any depth, as without it.
 */
const SIMPLE_LINE = /^(\/|\*\*\/)?([A-Za-z0-9._*-]+)(\/?)$/;

interface IgnoreLine {
  /** The name's pattern (`*` any run of characters), and with ASCII letters folded, as git folds them for core.ignorecase. */
  pattern: string;
  folded: string;
  anchored: boolean;
  dirOnly: boolean;
  /** A `!` line: it takes back what an earlier line, or a shallower file, left out. */
  negative: boolean;
}

interface IgnoreLines {
  /** A `!` line not of the simple form (which may take back names this reading cannot tell), or a file git may read otherwise than it lies (a link, too long). */
  unclear: boolean;
  /** The simple lines, in the file's order. */
  lines: IgnoreLine[];
}

/** The lines of an ignore file that are read surely; undefined when there is none. Not a regular file (git does not follow a link in the work tree): unclear. */
function ignoreLines(file: string): IgnoreLines | undefined {
  return memoised('git-ignore-lines', file, readIgnoreLines);
}

function readIgnoreLines(file: string): IgnoreLines | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return undefined;
  }
  if (!st.isFile() || st.size > IGNORE_MAX_BYTES) return { unclear: true, lines: [] };
  let text: string;
  try {
    text = readSmallText(file, IGNORE_MAX_BYTES, true);
  } catch {
    return { unclear: true, lines: [] };
  }
  // git skips a UTF-8 byte order mark at the start; `!` after it still takes names back.
  text = text.replace(/^\ufeff/, '');
  const lines: IgnoreLine[] = [];
  // git ends lines at \n only: in '.env*\r!.env' the `!` is inside one line, which takes nothing back.
  for (const raw of text.split('\n')) {
    // git drops a \r before the \n, then unescaped trailing spaces; a backslash anywhere makes the line not simple.
    const line = raw.replace(/\r$/, '').replace(/ +$/, '');
    const negative = line.startsWith('!');
    const m = SIMPLE_LINE.exec(negative ? line.slice(1) : line);
    if (!m || m[2]!.includes('**')) {
      // A line left out ignores nothing here, which errs towards staging; a `!` line left out could take anything back.
      if (negative) return { unclear: true, lines: [] };
      continue;
    }
    lines.push({ pattern: m[2]!, folded: foldAscii(m[2]!), anchored: m[1] === '/', dirOnly: m[3] === '/', negative });
  }
  return { unclear: false, lines };
}

/** ASCII letters in lower case, as git's case folding takes them. */
function foldAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (x) => x.toLowerCase());
}

/** The `*` matcher ignore lines are judged with (util/star-match.ts). */

/**
 * Whether git surely leaves a path below the work tree's `top` out as ignored, judged as git does
 * (gitignore(5)): each directory on the way, then the path, is matched against the simple lines
 * (`.env`, `/.env`, `*.env`, `.env*`, `**\/.env`, `secrets/`, each possibly after a `!`) of the
 * `.gitignore` files in the directories above it, the deepest first, then of the repository's
 * `info/exclude`; in each file the last line that matches decides, a `!` line meaning "not ignored".
 * A directory left out is left out with everything in it (git does not enter it, so no `!` line
 * takes a file in it back, nor is a `.gitignore` in it read). Both with and without core.ignorecase:
 * ignored only if under both. Anything else counts as not ignored: an ignore file that is a link
 * (git does not follow one in the work tree) or too long, or has a `!` line of another form; a line
 * of another form (a slash inside, `**`, `?`, a class, an escape) and the global excludes file are
 * taken as ignoring nothing.
 */
function gitIgnoresSurely(top: string, p: string, isDir: boolean): boolean {
  const rel = path.relative(top, p);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
  const parts = rel.split(path.sep);
  return ignoredAsGitReads(top, parts, isDir, false) && ignoredAsGitReads(top, parts, isDir, true);
}

function ignoredAsGitReads(top: string, parts: readonly string[], isDir: boolean, folded: boolean): boolean {
  const exclude = ignoreLines(path.join(top, '.git', 'info', 'exclude'));
  if (exclude?.unclear) return false;
  // gitignores[d]: the .gitignore beside parts[d], read only once the walk gets there.
  const gitignores: (IgnoreLines | undefined)[] = [];
  for (let k = 0; k < parts.length; k++) {
    const here = ignoreLines(path.join(top, ...parts.slice(0, k), '.gitignore'));
    if (here?.unclear) return false;
    gitignores.push(here);
    const dir = k < parts.length - 1 || isDir;
    const name = parts[k]!;
    const matches = (l: IgnoreLine, depth: number): boolean => (!l.dirOnly || dir) && (!l.anchored || depth === k) && (folded ? starMatch(l.folded, foldAscii(name)) : starMatch(l.pattern, name));
    let decided: IgnoreLine | undefined;
    for (let d = k; d >= -1 && decided === undefined; d--) {
      const lines = d >= 0 ? gitignores[d]?.lines : exclude?.lines;
      if (lines === undefined) continue;
      for (let i = lines.length - 1; i >= 0; i--) {
        if (matches(lines[i]!, Math.max(d, 0))) {
          decided = lines[i];
          break;
        }
      }
    }
    if (decided !== undefined && !decided.negative) return true;
  }
  return false;
}

/**
 * What a git index lists: `has(name)` for a path, `dirs` every directory its paths lie in; `unknown`
 * when it cannot be read as git's plain version 2 whole.
 */
type IndexPaths = { has(name: string): boolean; dirs: ReadonlySet<string> } | 'unknown';

/** The longest index read; a longer one may list anything. */
const INDEX_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The paths git's index (top/.git/index) lists. Only a whole index of git's plain version 2 is read:
 * not version 3 or 4 (an entry with extended flags: skip-worktree, which makes git read a
 * `.gitignore` from the index instead of the work tree, or intent-to-add; version 4 compresses
 * names), nor a split index (`sharedindex.*`, which holds other entries). No index: none.
 */
function loadIndex(top: string): IndexPaths {
  return memoised('git-index', top, readIndex);
}

function readIndex(top: string): IndexPaths {
  const dotGit = path.join(top, '.git');
  let buf: Buffer;
  try {
    if (fs.readdirSync(dotGit).some((n) => n.startsWith('sharedindex.'))) return 'unknown';
    buf = readSmallFile(path.join(dotGit, 'index'), INDEX_MAX_BYTES, true);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? { has: () => false, dirs: new Set() } : 'unknown';
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC' || buf.readUInt32BE(4) !== 2) return 'unknown';
  // An entry: ten 32-bit stat fields, the object name (SHA-1's 20 bytes, SHA-256's 32 where the config says
  // objectFormat = sha256), 16-bit flags, the path, then 1 to 8 NULs to a multiple of 8.
  let config = '';
  try {
    config = gitConfigText(dotGit);
  } catch {
    return 'unknown';
  }
  return parseEntries(buf, /objectformat\s*=\s*"?sha256/i.test(config) ? 32 : 20) ?? 'unknown';
}

/**
 * The entries' names by where they lie in the index (start and end offsets), and their directories.
 * Only directories are decoded, once per run of entries in one (the entries are sorted): a path is
 * looked up in the bytes when the listing meets a denied file, rarely. Decoding every name cost
 * about 7 ms for a 30,000-entry index (2.4 MB), the whole reading about 3 ms now.
 */
function parseEntries(buf: Buffer, hashLen: number): IndexPaths | undefined {
  const count = buf.readUInt32BE(8);
  const names = new Int32Array(2 * count);
  const dirs = new Set<string>();
  let lastDirEnd = -1;
  let lastDirAt = -1;
  let at = 12;
  for (let n = 0; n < count; n++) {
    const nameAt = at + 40 + hashLen + 2;
    if (nameAt > buf.length) return undefined;
    const flags = buf.readUInt16BE(nameAt - 2);
    // Version 2 has no extended flags.
    if (flags & 0x4000) return undefined;
    const len = flags & 0xfff;
    const end = len < 0xfff ? nameAt + len : buf.indexOf(0, nameAt);
    if (end < 0 || end >= buf.length || buf[end] !== 0) return undefined;
    const size = (end + 1 - at + 7) & ~7;
    if (at + size > buf.length) return undefined;
    for (let k = end + 1; k < at + size; k++) if (buf[k] !== 0) return undefined;
    names[2 * n] = nameAt;
    names[2 * n + 1] = end;
    const slash = end > nameAt ? buf.lastIndexOf(0x2f, end - 1) : -1;
    if (slash >= nameAt && !sameBytes(buf, lastDirAt, lastDirEnd, buf, nameAt, slash)) {
      const dir = buf.toString('utf8', nameAt, slash);
      for (let k = dir.indexOf('/'); k !== -1; k = dir.indexOf('/', k + 1)) dirs.add(dir.slice(0, k));
      dirs.add(dir);
      lastDirAt = nameAt;
      lastDirEnd = slash;
    }
    at += size;
  }
  const has = (name: string): boolean => {
    const want = Buffer.from(name, 'utf8');
    for (let n = 0; n < count; n++) if (sameBytes(want, 0, want.length, buf, names[2 * n]!, names[2 * n + 1]!)) return true;
    return false;
  };
  return { has, dirs };
}

/** Whether a[aFrom, aTo) and b[bFrom, bTo) hold the same bytes (Buffer.compare's range checks cost more than the loop, per entry). */
function sameBytes(a: Buffer, aFrom: number, aTo: number, b: Buffer, bFrom: number, bTo: number): boolean {
  if (aFrom < 0 || aTo - aFrom !== bTo - bFrom) return false;
  for (let k = aTo - aFrom - 1; k >= 0; k--) if (a[aFrom + k] !== b[bFrom + k]) return false;
  return true;
}

/**
 * Whether staging of this scope takes a path under the work tree's `top` (a denied file or a link to
 * one the listing found, or a directory it would enter): one the index may list, and for `all` one
 * not surely ignored as well. A directory neither holds is left out whole, as git leaves an ignored
 * directory (node_modules/) unlisted. A path outside the top may be anything: it counts.
 */
export function mayStage(scope: Staging['scope'], top: string, p: string, isDir: boolean): boolean {
  const rel = path.relative(top, p);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return true;
  // The ignore lines first: most directories are not ignored, and then the index need not be read.
  if (scope === 'all' && !gitIgnoresSurely(top, p, isDir)) return true;
  const paths = loadIndex(top);
  const name = rel.split(path.sep).join('/');
  return paths === 'unknown' || paths.has(name) || (isDir && paths.dirs.has(name));
}
