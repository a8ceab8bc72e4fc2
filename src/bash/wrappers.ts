/**
 * Commands that run another command (`timeout 5 rm …`, `env FOO=1 rm …`,
 * `sudo rm …`) and the stripping of them, so that rules see the command
 * that really runs. Deny and ask rules strip every wrapper known here;
 * allow rules strip only Claude Code's safe ones (timeout, time, nice,
 * nohup, stdbuf), whose effect never changes what runs.
 *
 * Options are parsed strictly: every option a wrapper accepts is listed with
 * its arity, long options may be abbreviated as getopt_long allows, and an
 * option that is not listed makes the use `complex` (never allowed by its
 * content): a wrongly guessed arity would take the wrapped command for an
 * option's value, and a deny rule on it would no longer match.
 */
import type { Word } from './types.js';
import { wordTail } from './words.js';
import { runsNamedProgram } from './grammar.js';

interface OptionSpec {
  /** Short options that take a value (`-n 5` or `-n5`). */
  shortArg?: string;
  /** Short options without a value. */
  shortFlag?: string;
  /** Short options whose optional value can only be attached (`-dcumulative`). */
  shortOptional?: string;
  /** Long options that take a value (`--opt value` or `--opt=value`). */
  longArg?: readonly string[];
  /** Long options without a value, or whose optional value must be attached with `=`. */
  longFlag?: readonly string[];
  /** Every `--opt=value` is one word and `--opt` never takes the next one (firejail). */
  attachedLongValues?: boolean;
  /** `-5` and `--5` are options (nice's adjustment). */
  numericOption?: boolean;
  /** Positional words the wrapper takes before the command (timeout's duration). */
  positional?: number;
  /** Skip `NAME=value` words after the options (env, sudo). */
  assignments?: boolean;
  /** Options that make the command something other than a wrapper (`command -v`). */
  notWrapper?: string;
  notWrapperLong?: readonly string[];
  /** Options whose value is a command string (`env -S '…'`, `su -c '…'`): not modelled as a wrapper. */
  complexShort?: string;
  complexLong?: readonly string[];
  /** Options after the positional words that run a command string (`flock FILE -c '…'`). */
  complexAfterPositional?: readonly string[];
  /** `-` alone is an option (`env -` = `env -i`). */
  dashIsOption?: boolean;
  /** The command always runs in another directory or root (chroot, pkexec, systemd-run). */
  relocates?: boolean;
  /** Options that run the command in another directory or root (`env -C`, `sudo -D`). */
  relocateShort?: string;
  relocateLong?: readonly string[];
  /** The command's words are joined with spaces and run by a shell (watch, firejail). */
  viaShell?: boolean;
  /** Options that make a viaShell wrapper run the words directly (`watch -x`). */
  execShort?: string;
  execLong?: readonly string[];
  /** A parser of its own, after the options (su, runuser, parallel). */
  rest?: (argv: readonly Word[], at: number, seen: ReadonlySet<string>) => StripResult;
}

const HELP = ['--help', '--version'];

const WRAPPERS: Readonly<Record<string, OptionSpec>> = {
  timeout: { shortArg: 'ks', shortFlag: 'v', longArg: ['--signal', '--kill-after'], longFlag: ['--preserve-status', '--foreground', '--verbose'], positional: 1 },
  time: { shortArg: 'of', shortFlag: 'apqv', notWrapper: 'V', longArg: ['--output', '--format'], longFlag: ['--append', '--portability', '--quiet', '--verbose'] },
  nice: { shortArg: 'n', longArg: ['--adjustment'], numericOption: true },
  nohup: {},
  stdbuf: { shortArg: 'ioe', longArg: ['--input', '--output', '--error'] },
  env: {
    shortArg: 'uCSa',
    shortFlag: 'iv0',
    longArg: ['--unset', '--chdir', '--split-string', '--argv0'],
    longFlag: ['--ignore-environment', '--null', '--debug', '--block-signal', '--default-signal', '--ignore-signal', '--list-signal-handling'],
    assignments: true,
    complexShort: 'S',
    complexLong: ['--split-string'],
    dashIsOption: true,
    relocateShort: 'C',
    relocateLong: ['--chdir'],
  },
  command: { shortFlag: 'p', notWrapper: 'vV' },
  builtin: {},
  noglob: {},
  exec: { shortArg: 'a', shortFlag: 'cl' },
  ionice: { shortArg: 'cn', shortFlag: 't', notWrapper: 'pPu', longArg: ['--class', '--classdata'], longFlag: ['--ignore'], notWrapperLong: ['--pid', '--pgid', '--uid'] },
  setsid: { shortFlag: 'cfw', longFlag: ['--ctty', '--fork', '--wait'] },
  coproc: {},
  sudo: {
    shortArg: 'aCcDghpRrtTUu',
    shortFlag: 'AbBEHiknNPSs',
    notWrapper: 'eKlvV',
    longArg: ['--user', '--group', '--close-from', '--chdir', '--host', '--prompt', '--role', '--type', '--command-timeout', '--other-user', '--chroot', '--login-class', '--auth-type'],
    longFlag: ['--askpass', '--background', '--bell', '--preserve-env', '--set-home', '--login', '--reset-timestamp', '--non-interactive', '--no-update', '--preserve-groups', '--stdin', '--shell'],
    notWrapperLong: ['--edit', '--list', '--validate', '--remove-timestamp'],
    assignments: true,
    // -i starts a login shell in the target user's home directory.
    relocateShort: 'DRi',
    relocateLong: ['--chdir', '--chroot', '--login'],
  },
  doas: { shortArg: 'u', shortFlag: 'ns', notWrapper: 'LC' },
  pkexec: { shortArg: 'u', longArg: ['--user'], longFlag: ['--disable-internal-agent', '--keep-cwd'], relocates: true },
  fakeroot: { shortArg: 'lfisb', shortFlag: 'u', notWrapper: 'hv', longArg: ['--lib', '--faked', '--fd-base'], longFlag: ['--unknown-is-real'] },
  nsenter: {
    shortArg: 'tSGW',
    shortFlag: 'aFZecN',
    shortOptional: 'muinpCUTrw',
    longArg: ['--target', '--setuid', '--setgid', '--wdns'],
    longFlag: ['--all', '--mount', '--uts', '--ipc', '--net', '--pid', '--user', '--cgroup', '--time', '--root', '--wd', '--no-fork', '--follow-context', '--preserve-credentials', '--env', '--join-cgroup', '--user-parent', '--keep-caps'],
    // Another mount namespace or root: no path means what it means here.
    relocates: true,
  },
  firejail: {
    complexShort: 'c',
    attachedLongValues: true,
    longFlag: ['--quiet', '--private', '--noprofile', '--seccomp', '--nonewprivs', '--noroot', '--private-tmp', '--private-dev', '--private-cache', '--nogroups', '--nosound', '--novideo', '--no3d', '--nodvd', '--notv', '--nou2f', '--noinput', '--x11', '--apparmor', '--caps', '--disable-mnt', '--ipc-namespace', '--machine-id', '--memory-deny-write-execute', '--writable-etc', '--writable-var', '--allusers', '--deterministic-exit-code', '--keep-dev-shm'],
    relocates: true,
    viaShell: true,
  },
  'systemd-run': {
    shortArg: 'HMupEC',
    shortFlag: 'rdtPqGS',
    notWrapper: 'h',
    longArg: ['--host', '--machine', '--unit', '--property', '--description', '--slice', '--service-type', '--uid', '--gid', '--nice', '--working-directory', '--setenv', '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--on-calendar', '--path-property', '--socket-property', '--timer-property', '--background', '--json', '--capsule'],
    longFlag: ['--user', '--system', '--scope', '--slice-inherit', '--remain-after-exit', '--send-sighup', '--same-dir', '--pty', '--pipe', '--quiet', '--on-clock-change', '--on-timezone-change', '--no-block', '--no-ask-password', '--wait', '--collect', '--shell', '--ignore-failure', '--expand-environment'],
    // A service unit starts in / (or the home directory) with its own environment.
    relocates: true,
  },
  unbuffer: { shortFlag: 'p' },
  chronic: { shortFlag: 'ev' },
  chroot: { longArg: ['--userspec', '--groups'], longFlag: ['--skip-chdir'], positional: 1, relocates: true },
  taskset: { shortFlag: 'ac', notWrapper: 'p', longFlag: ['--all-tasks', '--cpu-list'], notWrapperLong: ['--pid'], positional: 1 },
  flock: {
    shortArg: 'wE',
    shortFlag: 'sexnoFu',
    longArg: ['--wait', '--timeout', '--conflict-exit-code'],
    longFlag: ['--shared', '--exclusive', '--unlock', '--nonblock', '--nb', '--close', '--no-fork', '--verbose'],
    positional: 1,
    complexShort: 'c',
    complexLong: ['--command'],
    complexAfterPositional: ['-c', '--command'],
  },
  unshare: {
    shortArg: 'RwSG',
    shortFlag: 'fmuinpCTUrcl',
    longArg: ['--root', '--wd', '--setuid', '--setgid', '--propagation', '--setgroups', '--map-user', '--map-group', '--map-users', '--map-groups', '--monotonic', '--boottime'],
    longFlag: ['--fork', '--mount', '--uts', '--ipc', '--net', '--pid', '--user', '--cgroup', '--time', '--map-root-user', '--map-current-user', '--map-auto', '--kill-child', '--mount-proc', '--keep-caps', '--load-interp'],
    relocateShort: 'Rw',
    relocateLong: ['--root', '--wd'],
  },
  strace: {
    shortArg: 'abeEIoOpPsSuUX',
    shortFlag: 'AcCdDfFhiknqrtTvVwxyzZ',
    longArg: ['--output', '--expr', '--trace', '--signal', '--attach', '--user', '--string-limit', '--env', '--columns', '--trace-path', '--summary-sort-by', '--status', '--quiet', '--decode-fds', '--absolute-timestamps', '--relative-timestamps', '--syscall-times'],
    longFlag: ['--follow-forks', '--output-separately', '--summary-only', '--summary', '--stack-traces', '--instruction-pointer', '--no-abbrev', '--verbose', '--detach-on', '--debug'],
  },
  ltrace: { shortArg: 'aADeFlnopsux', shortFlag: 'bcfhiLrStTV', longArg: ['--output', '--library', '--align', '--indent'], longFlag: ['--demangle', '--no-signals'] },
  watch: {
    shortArg: 'nqs',
    shortFlag: 'bcCegptwrx',
    shortOptional: 'd',
    longArg: ['--interval', '--equexit', '--shotsfile'],
    longFlag: ['--beep', '--color', '--no-color', '--differences', '--errexit', '--chgexit', '--exec', '--precise', '--no-title', '--no-wrap', '--no-linewrap', '--no-rerun'],
    viaShell: true,
    execShort: 'x',
    execLong: ['--exec'],
  },
  chrt: {
    shortArg: 'TPD',
    shortFlag: 'abdefioRrv',
    notWrapper: 'pmh',
    longArg: ['--sched-runtime', '--sched-period', '--sched-deadline'],
    longFlag: ['--all-tasks', '--batch', '--deadline', '--ext', '--fifo', '--idle', '--other', '--rr', '--reset-on-fork', '--verbose'],
    notWrapperLong: ['--pid', '--max'],
    positional: 1,
  },
  su: {
    shortArg: 'gGsw',
    shortFlag: 'flmpP',
    longArg: ['--group', '--supp-group', '--shell', '--whitelist-environment'],
    longFlag: ['--fast', '--login', '--preserve-environment', '--pty'],
    complexShort: 'c',
    complexLong: ['--command', '--session-command'],
    dashIsOption: true,
    rest: shellUser,
  },
  runuser: {
    shortArg: 'gGsuw',
    shortFlag: 'flmpP',
    longArg: ['--group', '--supp-group', '--shell', '--user', '--whitelist-environment'],
    longFlag: ['--fast', '--login', '--preserve-environment', '--pty'],
    complexShort: 'c',
    complexLong: ['--command', '--session-command'],
    dashIsOption: true,
    rest: (argv, at, seen) => (seen.has('-u') || seen.has('--user') ? { argv: argv.slice(at) } : shellUser(argv, at)),
  },
  script: {
    shortArg: 'EIOTBmo',
    shortFlag: 'aefq',
    shortOptional: 't',
    longArg: ['--log-in', '--log-out', '--log-io', '--log-timing', '--echo', '--logging-format', '--output-limit'],
    longFlag: ['--append', '--return', '--flush', '--quiet', '--timing'],
    complexShort: 'c',
    complexLong: ['--command'],
  },
  // `sg [-] GROUP [-c] COMMAND` runs COMMAND with /bin/sh -c; without one, a shell reads the input.
  sg: { dashIsOption: true, rest: groupShell },
  newgrp: { dashIsOption: true, rest: groupShell },
  parallel: { shortArg: 'jP', shortFlag: 'k', longArg: ['--jobs', '--max-procs'], longFlag: ['--keep-order', '--will-cite'], rest: parallelRest },
  xargs: {
    shortArg: 'adEILnPs',
    shortFlag: '0oprtx',
    shortOptional: 'eil',
    longArg: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    longFlag: ['--null', '--eof', '--replace', '--max-lines', '--interactive', '--no-run-if-empty', '--show-limits', '--verbose', '--exit', '--open-tty'],
  },
};

/** Claude Code's wrappers that allow rules strip too. */
export const SAFE_WRAPPERS: ReadonlySet<string> = new Set(['timeout', 'time', 'nice', 'nohup', 'stdbuf']);

/**
 * Claude Code's SAFE_ENV_VARS: assignments allow rules may look through.
 * Never PATH, LD_*, NODE_OPTIONS or anything else that changes what runs.
 */
export const SAFE_ENV_VARS: ReadonlySet<string> = new Set([
  'GOEXPERIMENT',
  'GOOS',
  'GOARCH',
  'CGO_ENABLED',
  'GO111MODULE',
  'RUST_BACKTRACE',
  'RUST_LOG',
  'NODE_ENV',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PYTEST_DISABLE_PLUGIN_AUTOLOAD',
  'PYTEST_DEBUG',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_TIME',
  'CHARSET',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'TZ',
  'LS_COLORS',
  'LSCOLORS',
  'GREP_COLOR',
  'GREP_COLORS',
  'GCC_COLORS',
  'TIME_STYLE',
  'BLOCK_SIZE',
  'BLOCKSIZE',
]);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** A word a shell reads back as itself: no quoting, expansion, globbing, comment or operator. */
const SHELL_PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

function isShellPlain(w: Word): boolean {
  return w.literal && !w.glob && !w.tilde && SHELL_PLAIN.test(w.value);
}

/** `script` is the command string of an option like `su -c`, when it is literal (analysed best effort). */
function literalValue(w: Word | string | undefined): string | undefined {
  if (w === undefined) return undefined;
  if (typeof w === 'string') return w;
  return w.literal ? w.value : undefined;
}

export type StripResult =
  | { argv: Word[]; relocated?: boolean | undefined; chdir?: Word | undefined }
  | { complex: string; script?: string | undefined }
  | undefined;

type Complex = { complex: string; script?: string | undefined };

/** `su [-] [user [argument…]]`: the arguments go to the user's shell. */
function shellUser(argv: readonly Word[], at: number): StripResult {
  let i = at;
  if (argv[i]?.literal && !argv[i]!.value.startsWith('-')) i++;
  const name = argv[0]!.value;
  // With nothing after the user, the user's shell reads commands from the input.
  if (i >= argv.length) return { complex: `${name} starts a shell that reads commands from its input` };
  const c = argv.findIndex((w, k) => k >= i && w.literal && w.value === '-c');
  return { complex: `${name} passes its arguments to a shell`, script: c === -1 ? undefined : literalValue(argv[c + 1]) };
}

/** `sg GROUP [-c] COMMAND`, `newgrp GROUP`: a shell runs the command string, or reads the input. */
function groupShell(argv: readonly Word[], at: number): StripResult {
  const name = argv[0]!.value;
  let i = at + 1;
  if (argv[i]?.literal && argv[i]!.value === '-c') i++;
  const rest = argv.slice(i);
  if (rest.length === 0) return { complex: `${name} starts a shell that reads commands from its input` };
  return { complex: `${name} runs its command through a shell`, script: rest.every((w) => w.literal) ? rest.map((w) => w.value).join(' ') : undefined };
}

/**
 * GNU parallel runs its command through a shell, once per argument. Only
 * `parallel CMD… ::: ARG…` with plain words is modelled (as `CMD… ARG…`);
 * anything else (input from stdin or files, replacement strings, quoting)
 * cannot be checked.
 */
function parallelRest(argv: readonly Word[], at: number): StripResult {
  const sep = argv.findIndex((w, k) => k >= at && w.literal && w.value.startsWith(':::'));
  const cmd = argv.slice(at, sep === -1 ? argv.length : sep);
  const script = cmd.length > 0 && cmd.every((w) => w.literal) ? cmd.map((w) => w.value).join(' ') : undefined;
  const args = sep === -1 ? [] : argv.slice(sep + 1);
  const simple =
    sep !== -1 &&
    argv[sep]!.value === ':::' &&
    cmd.length > 0 &&
    args.length > 0 &&
    [...cmd, ...args].every((w) => isShellPlain(w) && !w.value.startsWith(':::'));
  if (!simple) return { complex: 'parallel runs a command through a shell with arguments it supplies', script };
  return { argv: [...cmd, ...args] };
}

/** getopt_long (and git) accept an exact name, else any unambiguous prefix of a long option. */
export function resolveLong(name: string, known: { has(name: string): boolean; keys(): Iterable<string> }): string | undefined {
  if (known.has(name)) return name;
  let found: string | undefined;
  for (const k of known.keys()) {
    if (!k.startsWith(name)) continue;
    if (found !== undefined) return undefined;
    found = k;
  }
  return found;
}

const longTables = new WeakMap<OptionSpec, Map<string, string>>();

/** Every long option of a spec → what it is: arg, flag, complex or not. */
function longTable(spec: OptionSpec): Map<string, string> {
  let t = longTables.get(spec);
  if (t) return t;
  t = new Map<string, string>();
  for (const n of spec.longFlag ?? []) t.set(n, 'flag');
  for (const n of spec.longArg ?? []) t.set(n, 'arg');
  for (const n of spec.complexLong ?? []) t.set(n, 'complex');
  for (const n of [...HELP, ...(spec.notWrapperLong ?? [])]) t.set(n, 'not');
  longTables.set(spec, t);
  return t;
}

interface Skipped {
  at: number;
  /** Options seen, in their canonical spelling (`-u`, `--user`). */
  seen: Set<string>;
  /** The values of the options that take one, by canonical spelling. */
  values: Map<string, Word>;
}

/** The index of the wrapped command in argv, or a reason it cannot be found. */
function skipOptions(argv: readonly Word[], spec: OptionSpec): Skipped | Complex | undefined {
  const name = argv[0]!.value;
  const unknown = (opt: string): Complex => ({ complex: `${name} ${opt} is an option that is not modelled` });
  const seen = new Set<string>();
  const values = new Map<string, Word>();
  const table = longTable(spec);
  let i = 1;
  while (i < argv.length) {
    const w = argv[i]!;
    if (!w.literal) return { complex: `an option of ${name} is an expansion` };
    const v = w.value;
    if (v === '--') {
      i++;
      break;
    }
    if (v === '-' && spec.dashIsOption) {
      i++;
      continue;
    }
    if (!v.startsWith('-') || v === '-') break;
    if (spec.numericOption && /^--?\d+$/.test(v)) {
      i++;
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const given = eq === -1 ? v : v.slice(0, eq);
      const long = resolveLong(given, table);
      const kind = long === undefined ? undefined : table.get(long);
      if (long === undefined || kind === undefined) {
        if (spec.attachedLongValues && eq !== -1) {
          i++;
          continue;
        }
        return unknown(given);
      }
      if (kind === 'not') return undefined;
      if (kind === 'complex') {
        const value = eq !== -1 ? literalValue(v.slice(eq + 1)) : literalValue(argv[i + 1]);
        return { complex: `${name} ${long} runs a command given as a string`, script: value };
      }
      seen.add(long);
      if (kind === 'arg') {
        const value = eq !== -1 ? wordTail(w, eq + 1) : argv[i + 1];
        if (value) values.set(long, value);
      }
      i += kind === 'arg' && eq === -1 ? 2 : 1;
      continue;
    }
    let takesNext = false;
    for (let j = 1; j < v.length; j++) {
      const c = v[j]!;
      if (spec.notWrapper?.includes(c)) return undefined;
      if (spec.complexShort?.includes(c)) {
        const value = j < v.length - 1 ? literalValue(v.slice(j + 1)) : literalValue(argv[i + 1]);
        return { complex: `${name} -${c} runs a command given as a string`, script: value };
      }
      seen.add(`-${c}`);
      if (spec.shortArg?.includes(c)) {
        takesNext = j === v.length - 1;
        const value = takesNext ? argv[i + 1] : wordTail(w, j + 1);
        if (value) values.set(`-${c}`, value);
        break;
      }
      if (spec.shortOptional?.includes(c)) break;
      if (!spec.shortFlag?.includes(c)) return unknown(`-${c}`);
    }
    i += takesNext ? 2 : 1;
  }
  i += spec.positional ?? 0;
  const after = argv[i];
  if (spec.complexAfterPositional && after?.literal) {
    const eq = after.value.indexOf('=');
    const opt = eq === -1 ? after.value : after.value.slice(0, eq);
    if (spec.complexAfterPositional.includes(opt)) {
      return { complex: `${name} ${opt} runs a command given as a string`, script: eq === -1 ? literalValue(argv[i + 1]) : after.value.slice(eq + 1) };
    }
  }
  if (spec.assignments) while (i < argv.length && argv[i]!.literal && ASSIGNMENT.test(argv[i]!.value)) i++;
  return { at: i, seen, values };
}

/** Relocating options that only change the directory the command starts in, by the wrapper's name. */
const CHDIR_OPTIONS: Readonly<Record<string, readonly string[]>> = { env: ['-C', '--chdir'], sudo: ['-D', '--chdir'], unshare: ['-w', '--wd'] };

/**
 * The directory a relocating wrapper starts its command in, when that is all it does and
 * the option says which (`env -C DIR`, `sudo -D DIR`); undefined otherwise (a root, a login
 * shell's home, several options).
 */
function chdirBy(name: string, spec: OptionSpec, seen: ReadonlySet<string>, values: ReadonlyMap<string, Word>): Word | undefined {
  if (spec.relocates) return undefined;
  const relocating = [...seen].filter((o) => (o.startsWith('--') ? (spec.relocateLong ?? []).includes(o) : (spec.relocateShort ?? '').includes(o.slice(1))));
  const chdir = Object.hasOwn(CHDIR_OPTIONS, name) ? CHDIR_OPTIONS[name]! : [];
  if (relocating.length !== 1 || !chdir.includes(relocating[0]!)) return undefined;
  return values.get(relocating[0]!);
}

function relocatedBy(spec: OptionSpec, seen: ReadonlySet<string>): boolean {
  if (spec.relocates) return true;
  for (const c of spec.relocateShort ?? '') if (seen.has(`-${c}`)) return true;
  return (spec.relocateLong ?? []).some((l) => seen.has(l));
}

/** Strips one wrapper from the front of argv; undefined when argv[0] is not a wrapper. */
export function stripWrapperOnce(argv: readonly Word[], safeOnly: boolean): StripResult {
  const head = argv[0];
  if (!head || !head.literal) return undefined;
  // `time ! rm …`, `time { rm …`: after `time` bash reads a pipeline, whose `!` or `{` is a reserved word, not the command.
  if (argv.length > 1 && (head.raw === '!' || head.raw === '{')) return { argv: argv.slice(1) };
  // `VAR=value` words after a wrapper (`sudo FOO=1 rm`): deny and ask rules look through them.
  if (!safeOnly && ASSIGNMENT.test(head.value)) {
    let i = 0;
    while (i < argv.length && argv[i]!.literal && ASSIGNMENT.test(argv[i]!.value)) i++;
    return i < argv.length ? { argv: argv.slice(i) } : undefined;
  }
  // `/usr/bin/env rm …` is `env rm …`: a wrapper named by its path is still that wrapper.
  const slash = head.value.lastIndexOf('/');
  const name = slash === -1 ? head.value : head.value.slice(slash + 1);
  // `./timeout 5 ls` runs ./timeout, whatever it is: not the wrapper allow rules and read-only commands look through.
  if (safeOnly && (!SAFE_WRAPPERS.has(name) || !runsNamedProgram(head))) return undefined;
  const spec = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
  if (!spec) return undefined;
  const skipped = skipOptions(argv, spec);
  if (skipped === undefined || 'complex' in skipped) return skipped;
  const { at, seen, values } = skipped;
  if (spec.rest) return spec.rest(argv, at, seen);
  if (at >= argv.length) {
    // `sudo -s`, `sudo -i` without a command: a shell reads commands from the input.
    if (name === 'sudo' && ['-s', '-i', '--shell', '--login'].some((o) => seen.has(o))) return { complex: `${name} starts a shell that reads commands from its input` };
    return undefined;
  }
  const inner = argv.slice(at);
  const viaShell = spec.viaShell && ![...(spec.execShort ?? '')].some((c) => seen.has(`-${c}`)) && !(spec.execLong ?? []).some((l) => seen.has(l));
  // What a shell re-reads is the same command only when every word reads back as itself.
  if (viaShell && !inner.every(isShellPlain)) {
    const script = inner.every((w) => w.literal) ? inner.map((w) => w.value).join(' ') : undefined;
    return { complex: `${name} runs its command through a shell`, script };
  }
  const relocated = relocatedBy(spec, seen);
  return { argv: inner, relocated, chdir: relocated ? chdirBy(name, spec, seen, values) : undefined };
}

/**
 * Every form of argv as wrappers are stripped, the original first. `complex`
 * is set when a wrapper's use cannot be modelled; `relocated` when a
 * stripped wrapper runs the command in another directory or root, so that
 * the paths it names are not where they seem. `chdirs`: the directories
 * wrappers start it in, in order, when each relocation is only that (`env -C
 * a sudo -D b` starts it in a/b); undefined when one is something else (a
 * root, a login shell's home).
 */
export function unwrapStages(
  argv: readonly Word[],
  safeOnly: boolean,
): { stages: Word[][]; complex: string | undefined; script?: string | undefined; relocated: boolean; chdirs: Word[] | undefined } {
  const stages: Word[][] = [argv.slice()];
  let cur: readonly Word[] = argv;
  let relocated = false;
  let chdirs: Word[] | undefined = [];
  for (let n = 0; n < 32; n++) {
    const r = stripWrapperOnce(cur, safeOnly);
    if (r === undefined) return { stages, complex: undefined, relocated, chdirs };
    if ('complex' in r) return { stages, complex: r.complex, script: r.script, relocated, chdirs };
    if (r.relocated) {
      relocated = true;
      if (r.chdir) chdirs?.push(r.chdir);
      else chdirs = undefined;
    }
    cur = r.argv;
    stages.push(r.argv);
  }
  return { stages, complex: 'too many nested wrappers', relocated, chdirs };
}

/** The command that finally runs, after every wrapper. */
export function innermost(argv: readonly Word[]): { argv: Word[]; complex: string | undefined } {
  const { stages, complex } = unwrapStages(argv, false);
  return { argv: stages[stages.length - 1]!, complex };
}

/** Options by which a wrapper writes a file of its own (`time -o FILE`, `strace -o FILE`, `script --log-out FILE`). */
const OUTPUT_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  time: ['-o', '--output'],
  strace: ['-o', '--output'],
  ltrace: ['-o', '--output'],
  script: ['-O', '-I', '-B', '-T', '--log-out', '--log-in', '--log-io', '--log-timing'],
};

/**
 * The files the wrappers of a command write themselves, from its stages
 * (unwrapStages): the values of their output options (also of a wrapper
 * left with nothing to wrap), and the typescript file `script` takes where a
 * command would be (`script out.txt`).
 */
export function wrapperOutputs(stages: readonly (readonly Word[])[]): Word[] {
  const out: Word[] = [];
  for (let s = 0; s < stages.length; s++) {
    const argv = stages[s]!;
    const head = argv[0];
    if (!head || !head.literal) continue;
    const name = head.value.slice(head.value.lastIndexOf('/') + 1);
    const outputs = Object.hasOwn(OUTPUT_OPTIONS, name) ? OUTPUT_OPTIONS[name] : undefined;
    const spec = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
    if (!outputs || !spec) continue;
    // The options as the wrapper was stripped (the last stage is a wrapper only when it wraps nothing: `script --log-out FILE`).
    const skipped = skipOptions(argv, spec);
    if (skipped === undefined || 'complex' in skipped) continue;
    for (const [opt, w] of skipped.values) if (outputs.includes(opt)) out.push(w);
    // `script [options] [file]`: what follows the options is its typescript, not a command.
    const next = stages[s + 1];
    if (name === 'script' && next?.[0]) out.push(next[0]);
  }
  return out;
}
