/**
 * Read-only classification (Claude Code's readOnlyValidation): a command is
 * read-only when every subcommand is, the analysis is not too complex, and
 * nothing is redirected into a file (`> /dev/null` is fine). Plain commands
 * are read-only with any arguments; others only with flags that cannot
 * write or run anything (`sed` without `-i` or a `w` command, `sort`
 * without `-o`, `git` and `gh` read verbs, `xargs` running a read-only
 * command).
 */
import type { BashAnalysis, Redirect, SimpleCommand, Word } from './types.js';
import { gitReadsFiles, pathArgs } from './paths.js';
import { isLongOption } from './long-option.js';
import { resolveLong, SAFE_ENV_VARS, unwrapStages, wrapperOutputs } from './wrappers.js';
import { runsNamedProgram } from './grammar.js';

/** Read-only whatever their arguments. */
const PLAIN: ReadonlySet<string> = new Set([
  'cat', 'head', 'tail', 'wc', 'stat', 'diff', 'cmp', 'comm', 'cut', 'tr', 'basename', 'dirname', 'realpath', 'readlink',
  'id', 'uname', 'df', 'du', 'which', 'type', 'expr', 'test', '[', '[[', 'seq', 'sleep', 'true', 'false', ':', 'ls', 'pwd',
  'nl', 'tac', 'rev', 'paste', 'join', 'column', 'fold', 'fmt', 'expand', 'unexpand', 'od', 'hexdump', 'strings',
  'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum', 'base64', 'base32',
  'whoami', 'groups', 'printenv', 'nproc', 'arch', 'uptime', 'locale', 'getconf', 'free', 'lscpu', 'tty', 'pgrep',
  'jq', 'cd', 'grep', 'egrep', 'fgrep', 'zgrep',
]);

/** Commands whose arguments, however they expand, name no file to read or write and nothing to run. */
const EXPANSION_SAFE: ReadonlySet<string> = new Set(['test', '[', '[[', 'cd', 'seq', 'sleep', 'true', 'false', ':', 'basename', 'dirname', 'expr', 'id', 'groups', 'which', 'type', 'pwd', 'printenv', 'uname', 'nproc', 'ls']);

/** Literal arguments only (no `$` or backticks), as Claude Code requires for echo. */
const LITERAL_ONLY: ReadonlySet<string> = new Set(['echo', 'printf']);

/** `set` and `shopt` change options only in the call's own shell. */
const NO_ARGS_ONLY: ReadonlySet<string> = new Set(['hostname', 'env']);

const GIT_READ_VERBS: ReadonlySet<string> = new Set([
  'status', 'log', 'diff', 'show', 'rev-parse', 'ls-files', 'ls-tree', 'blame', 'describe', 'shortlog', 'cat-file',
  'grep', 'rev-list', 'merge-base', 'name-rev', 'for-each-ref', 'show-ref', 'count-objects', 'check-ignore',
  'diff-tree', 'diff-files', 'diff-index', 'whatchanged', 'version', 'show-branch', 'var',
]);

const GH_READ: Readonly<Record<string, ReadonlySet<string>>> = {
  pr: new Set(['view', 'list', 'diff', 'checks', 'status']),
  issue: new Set(['view', 'list', 'status']),
  repo: new Set(['view', 'list']),
  run: new Set(['list', 'view']),
  release: new Set(['list', 'view']),
  workflow: new Set(['list', 'view']),
  search: new Set(['repos', 'issues', 'prs', 'code', 'commits']),
  auth: new Set(['status']),
  status: new Set(['']),
};

/** Targets an output redirection may name and still be read-only. */
const HARMLESS_TARGETS: ReadonlySet<string> = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/fd/1', '/dev/fd/2']);

/** sed scripts made only of printing, deleting, quitting and substitutions without `w`/`e` flags. */
const SAFE_SED_SCRIPT =
  /^(\s*((\d+|\$|\/([^/\\]|\\.)*\/)(\s*,\s*(\d+|\$|\/([^/\\]|\\.)*\/))?)?\s*!?\s*(p|P|d|D|q|Q|=|n|N|l|s\/([^/\\\n]|\\.)*\/([^/\\\n]|\\.)*\/[gpiImM0-9]*)\s*[;\n]?)+$/;

function baseName(v: string): string {
  return v.includes('/') ? v.slice(v.lastIndexOf('/') + 1) : v;
}

function values(words: readonly Word[]): string[] | undefined {
  const out: string[] = [];
  for (const w of words) {
    if (!w.literal) return undefined;
    out.push(w.value);
  }
  return out;
}

/**
 * Whether one of these options is given. A long option also counts when it
 * could be an abbreviation of a listed one (`--in` for `--in-place`,
 * `--compress-prog` for `--compress-program`): getopt_long and git accept
 * any unambiguous prefix.
 */
function hasFlag(args: readonly string[], short: string, long: readonly string[] = []): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a.startsWith('--')) {
      if (isLongOption(a, long, 3)) return true;
    } else if (a.startsWith('-') && a.length > 1) {
      // A cluster (`-ne`), up to a value glued on (`-i.bak`, `-i/tmp/x`): each letter is an option.
      for (const c of a.slice(1)) {
        if (short.includes(c)) return true;
        if (!/[A-Za-z0-9]/.test(c)) break;
      }
    }
  }
  return false;
}

function positionals(args: readonly string[]): string[] {
  const out: string[] = [];
  let done = false;
  for (const a of args) {
    if (!done && a === '--') done = true;
    else if (done || !a.startsWith('-') || a === '-') out.push(a);
  }
  return out;
}

/** sed's long options that neither write nor run anything, beside --expression (judged by its script). */
const SED_SAFE_LONG = ['--quiet', '--silent', '--debug', '--posix', '--regexp-extended', '--separate', '--sandbox', '--unbuffered', '--null-data', '--zero-terminated', '--line-length'];
const SED_LONG: ReadonlySet<string> = new Set([...SED_SAFE_LONG, '--expression', '--file', '--in-place', '--follow-symlinks', '--help', '--version']);

/** sed's short options without a value (-i and -f are refused before; -e and -l take one; others, as -V, are not modelled). */
const SED_SHORT_FLAGS = 'bsnrzuE';

function sedReadOnly(args: readonly string[]): boolean {
  if (hasFlag(args, 'if', ['--in-place', '--file'])) return false;
  const scripts: string[] = [];
  const operands: string[] = [];
  let hasE = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      // Resolved as getopt_long does: an exact name, else the one option it is a prefix of.
      const eq = a.indexOf('=');
      const given = eq === -1 ? a : a.slice(0, eq);
      const name = resolveLong(given, SED_LONG);
      if (name === undefined) return false;
      if (name === '--expression') {
        hasE = true;
        const s = eq === -1 ? args[++i] : a.slice(eq + 1);
        if (s === undefined) return false;
        scripts.push(s);
      } else if (!SED_SAFE_LONG.includes(name)) return false;
      else if (name === '--line-length' && eq === -1) i++;
    } else if (a.startsWith('-') && a.length > 1) {
      // A cluster (`-ne script`, `-nl 5`): -e and -l take the rest of the word, else the next word
      // (`sed -l p 'w f'` has the line length p and the script `w f`).
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        if (c === 'e' || c === 'l') {
          const v = j < a.length - 1 ? a.slice(j + 1) : args[++i];
          if (v === undefined) return false;
          if (c === 'e') {
            hasE = true;
            scripts.push(v);
          }
          break;
        }
        if (!SED_SHORT_FLAGS.includes(c)) return false;
      }
    } else operands.push(a);
  }
  if (!hasE) {
    if (operands.length === 0) return false;
    scripts.push(operands[0]!);
  }
  return scripts.every((s) => SAFE_SED_SCRIPT.test(s));
}

/** ps options that take a value: dash ones (`-o FORMAT`, `-p PID`), long ones, and BSD ones ending a cluster (`o FORMAT`). */
// procps-ng: -F and -L take no value (-F e shows environments), -D and -k are not options.
const PS_DASH_VALUE = 'CGgUupqstoO';
const PS_BSD_VALUE = 'oOptUkN';
const PS_LONG_VALUE: ReadonlySet<string> = new Set([
  '--pid', '--ppid', '--sid', '--tty', '--user', '--User', '--group', '--Group', '--format', '--sort', '--cols', '--columns',
  '--width', '--rows', '--lines', '--quick-pid', '--deselect-pid', '--pid-file',
]);

/**
 * ps lists processes; with the BSD `e` modifier (`ps e`, `ps eww`, `ps aux e`)
 * it shows every listed process's environment, tokens and all. `-e` (all
 * processes) is fine.
 */
function psReadOnly(words: readonly Word[]): boolean {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const v = w.value;
    if (v.startsWith('--')) {
      if (!w.literal) return false;
      if (!v.includes('=') && PS_LONG_VALUE.has(v)) i++;
      continue;
    }
    if (v.startsWith('-') && w.literal) {
      for (let j = 1; j < v.length; j++) {
        if (!PS_DASH_VALUE.includes(v[j]!)) continue;
        if (j === v.length - 1) i++;
        break;
      }
      continue;
    }
    // A BSD cluster: `e` shows environments; one that is an expansion could hold it.
    if (!w.literal || v.includes('e')) return false;
    if (v.length > 0 && PS_BSD_VALUE.includes(v[v.length - 1]!)) i++;
  }
  return true;
}

/**
 * A word that names a process's environment (`/proc/PID/environ`), or a
 * /proc path whose text does not fix where it leads (`/proc/$PPID/…`,
 * `/proc/*\/…`): the service's own environment holds its token.
 */
export function namesProcessEnvironment(w: Word): boolean {
  const t = `${w.raw}\n${w.value}`;
  return /environ/.test(t) || (/\/proc(\/|$)/m.test(t) && (!w.literal || w.glob));
}

function gitReadOnly(args: readonly string[]): boolean {
  let i = 0;
  // Global options: -C dir, --no-pager, --git-dir=…, --work-tree=…; `-c` can set a pager or an external diff: never.
  while (i < args.length && args[i]!.startsWith('-')) {
    const a = args[i]!;
    // -C, --git-dir and --work-tree run git elsewhere, where a repository's own
    // config (core.fsmonitor, a pager, a diff driver) can run a program: as a cd would, they ask.
    if (a === '--no-pager' || a === '--paginate' || a === '-P' || a === '--no-optional-locks') i += 1;
    else return false;
  }
  const verb = args[i];
  if (verb === undefined) return false;
  const rest = args.slice(i + 1);
  if (hasFlag(rest, '', ['--output', '--ext-diff', '--exec', '--upload-pack', '--open-files-in-pager'])) return false;
  // Files git does not track (`diff --no-index`, `grep --untracked`, `blame --contents`, `config -f`): their paths are not checked.
  if (rest.some((a) => gitReadsFiles(verb, a))) return false;
  if (GIT_READ_VERBS.has(verb)) return !(verb === 'grep' && hasFlag(rest, 'O'));
  switch (verb) {
    case 'branch':
    case 'tag': {
      const listing = hasFlag(rest, 'l', ['--list']);
      const ok = rest.every((a) => a.startsWith('-'));
      const writes = hasFlag(rest, 'dDmMcCfsu', ['--delete', '--move', '--copy', '--force', '--set-upstream-to', '--unset-upstream', '--edit-description', '--sign', '--annotate']);
      return !writes && (ok || listing);
    }
    case 'remote':
      return rest.length === 0 || (rest.every((a) => a === '-v' || a === '--verbose')) || rest[0] === 'get-url';
    case 'stash':
      return rest[0] === 'list' || rest[0] === 'show';
    case 'reflog':
      return rest.length === 0 || rest[0] === 'show' || rest[0]!.startsWith('-');
    case 'worktree':
      return rest[0] === 'list';
    case 'submodule':
      return rest[0] === 'status';
    case 'config':
      return hasFlag(rest, 'l', ['--get', '--get-all', '--get-regexp', '--list']) && !hasFlag(rest, 'e', ['--edit', '--add', '--unset', '--unset-all', '--replace-all', '--rename-section', '--remove-section']);
    default:
      return false;
  }
}

function ghReadOnly(args: readonly string[]): boolean {
  const group = args[0];
  if (group === undefined) return false;
  const verbs = GH_READ[group];
  if (!verbs) return false;
  if (group === 'status') return true;
  const verb = args[1];
  return verb !== undefined && verbs.has(verb) && !hasFlag(args, '', ['--web']);
}

/**
 * `command -v NAME` and `command -V NAME` only describe NAME; `command rm -v f`
 * runs `rm -v f`. Only command's own options (before the name) count.
 */
function commandDescribes(words: readonly Word[]): boolean {
  let describes = false;
  for (const w of words) {
    if (!w.literal || !/^-[pvV]+$/.test(w.value)) break;
    if (/[vV]/.test(w.value)) describes = true;
  }
  return describes;
}

/** Whether one argv (already unwrapped) only reads. */
export function isReadOnlyArgv(argv: readonly Word[], depth = 0): boolean {
  const head = argv[0];
  if (!head || !head.literal || head.glob || !runsNamedProgram(head)) return false;
  const name = baseName(head.value);
  const args = values(argv.slice(1));
  if (LITERAL_ONLY.has(name)) return args !== undefined && !(name === 'printf' && args[0] === '-v');
  // An argument that is an expansion may become several words, options
  // included (`x='5 .env'; head -n $x f`, `sort -k {1,--compress-program=sh}`),
  // whatever position it stands in: only commands whose options can neither
  // name a file nor run anything take one and stay read-only.
  if (args === undefined && !EXPANSION_SAFE.has(name)) return false;
  if (PLAIN.has(name)) return true;
  if (NO_ARGS_ONLY.has(name)) return argv.length === 1;
  if (name === 'command') return commandDescribes(argv.slice(1));
  const a = args ?? argv.slice(1).map((w) => w.value);
  switch (name) {
    case 'ps':
      return psReadOnly(argv.slice(1));
    case 'rg':
      return !hasFlag(a, '', ['--pre']);
    case 'sort':
      // -T writes temporary files in a directory of its choosing.
      return !hasFlag(a, 'oT', ['--output', '--compress-program', '--temporary-directory']);
    case 'uniq':
      // An option's value is not an output file (`uniq -f 1 f`, `xxd -l 64 f`): the path model tells them apart.
      return pathArgs(argv).writes.length === 0;
    case 'xxd':
      return pathArgs(argv).writes.length === 0 && !hasFlag(a, 'r', ['--revert']);
    case 'sed':
      return args !== undefined && sedReadOnly(args);
    case 'tree':
      return !hasFlag(a, 'o');
    case 'file':
      return !hasFlag(a, 'C', ['--compile']);
    case 'date':
      return !hasFlag(a, 's', ['--set']) && positionals(a).every((p) => p.startsWith('+'));
    case 'find':
      return !a.some((x) => /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/.test(x));
    case 'git':
      return args !== undefined && gitReadOnly(args);
    case 'gh':
      return args !== undefined && ghReadOnly(args);
    case 'xargs': {
      if (depth > 4) return false;
      const { stages } = unwrapStages(argv, false);
      const inner = stages[1];
      // Without a command xargs runs echo.
      if (inner === undefined) return true;
      // xargs adds the words it reads (or puts them where -I says), options among them: `echo axeww | xargs ps`
      // shows environments, `xargs sort` may be given --compress-program. Only a command read-only whatever its arguments.
      const innerName = inner[0]?.literal ? baseName(inner[0].value) : undefined;
      if (innerName === undefined || !(PLAIN.has(innerName) || LITERAL_ONLY.has(innerName))) return false;
      return isReadOnlyArgv(inner, depth + 1);
    }
    default:
      return false;
  }
}

/** Whether one simple command only reads (its own words and assignments; redirects are judged apart). */
export function isReadOnlyCommand(cmd: SimpleCommand): boolean {
  // Another process's environment (the service's token) is never read without a person; nor is a /proc path kept in a variable.
  if (cmd.argv.some(namesProcessEnvironment)) return false;
  if (cmd.redirects.some((r) => r.target !== undefined && namesProcessEnvironment(r.target))) return false;
  if (cmd.assignments.some((a) => a.value !== undefined && (namesProcessEnvironment(a.value) || /\/proc(\/|$)/.test(a.value.value)))) return false;
  if (cmd.argv.length === 0) {
    // A bare assignment sets a shell variable of this call only; one that changes how later commands run is not read-only.
    return cmd.assignments.every((a) => /^[a-z_][a-z0-9_]*$/.test(a.name) || SAFE_ENV_VARS.has(a.name));
  }
  if (!cmd.assignments.every((a) => SAFE_ENV_VARS.has(a.name))) return false;
  const { stages } = unwrapStages(cmd.argv, true);
  // A wrapper that writes a file of its own (`/usr/bin/time -o FILE ls`, `\time --output=FILE ls`) is not read-only.
  if (wrapperOutputs(stages).length > 0) return false;
  return isReadOnlyArgv(stages[stages.length - 1]!);
}

export function isHarmlessOutput(r: Redirect): boolean {
  if (!r.output) return true;
  return r.target !== undefined && r.target.literal && !r.target.glob && HARMLESS_TARGETS.has(r.target.value);
}

/** Read-only for the whole command: every subcommand, no output into a file, modelled completely. */
export function isReadOnlyAnalysis(a: BashAnalysis): boolean {
  if (a.tooComplex !== undefined || a.commands.length === 0) return false;
  if (!a.redirects.every(isHarmlessOutput)) return false;
  return a.commands.every(isReadOnlyCommand);
}
