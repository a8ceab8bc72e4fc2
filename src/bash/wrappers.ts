/**
 * Commands that run another command (`timeout 5 rm …`, `env FOO=1 rm …`,
 * `sudo rm …`) and the stripping of them, so that rules see the command
 * that really runs. Deny and ask rules strip every wrapper known here;
 * allow rules strip only Claude Code's safe ones (timeout, time, nice,
 * nohup, stdbuf), whose effect never changes what runs.
 */
import type { Word } from './types.js';

interface OptionSpec {
  /** Short options that take an argument (`-n 5` or `-n5`). */
  shortArg?: string;
  /** Long options that take an argument unless written `--opt=value`. */
  longArg?: readonly string[];
  /** Positional words the wrapper takes before the command (timeout's duration). */
  positional?: number;
  /** Skip `NAME=value` words after the options (env, sudo). */
  assignments?: boolean;
  /** Options that make the command something other than a wrapper (`command -v`). */
  notWrapper?: string;
  /** Options whose value is a command string (`env -S '…'`, `su -c '…'`): not modelled as a wrapper. */
  complexShort?: string;
  complexLong?: readonly string[];
  /** `-` alone is an option (`env -` = `env -i`). */
  dashIsOption?: boolean;
}

const WRAPPERS: Readonly<Record<string, OptionSpec>> = {
  timeout: { shortArg: 'sk', longArg: ['--signal', '--kill-after'], positional: 1 },
  time: { shortArg: 'of', longArg: ['--output', '--format'] },
  nice: { shortArg: 'n', longArg: ['--adjustment'] },
  nohup: {},
  stdbuf: { shortArg: 'ioe', longArg: ['--input', '--output', '--error'] },
  env: {
    shortArg: 'uCS',
    longArg: ['--unset', '--chdir', '--split-string'],
    assignments: true,
    complexShort: 'S',
    complexLong: ['--split-string'],
    dashIsOption: true,
  },
  command: { notWrapper: 'vV' },
  builtin: {},
  noglob: {},
  exec: { shortArg: 'a' },
  ionice: { shortArg: 'cnpPu' },
  setsid: {},
  coproc: {},
  sudo: {
    shortArg: 'ugCDhprtTUR',
    longArg: ['--user', '--group', '--close-from', '--chdir', '--host', '--prompt', '--role', '--type', '--command-timeout', '--other-user', '--chroot'],
    assignments: true,
    notWrapper: 'elvVK',
  },
  doas: { shortArg: 'uC' },
  chroot: { longArg: ['--userspec', '--groups'], positional: 1 },
  taskset: { positional: 1, notWrapper: 'p' },
  flock: { shortArg: 'wEc', longArg: ['--timeout', '--conflict-exit-code', '--command'], positional: 1, complexShort: 'c', complexLong: ['--command'] },
  unshare: { shortArg: 'S', longArg: ['--setuid', '--setgid', '--wd', '--root'] },
  strace: { shortArg: 'eoOpPsSuIbXa', longArg: ['--output', '--expr', '--attach', '--user', '--string-limit'] },
  ltrace: { shortArg: 'eoOpsSuAaDlLnx', longArg: ['--output', '--library'] },
  watch: { shortArg: 'nd', longArg: ['--interval', '--differences'] },
  chrt: { positional: 1, notWrapper: 'p' },
  su: { shortArg: 'cgGsw', longArg: ['--command', '--group', '--supp-group', '--shell', '--whitelist-environment'], complexShort: 'c', complexLong: ['--command'] },
  runuser: { shortArg: 'cgGsuw', longArg: ['--command', '--group', '--supp-group', '--shell', '--user'], complexShort: 'c', complexLong: ['--command'] },
  script: { shortArg: 'cEIOTBmt', longArg: ['--command', '--log-in', '--log-out', '--log-io', '--log-timing', '--echo', '--logging-format'], complexShort: 'c', complexLong: ['--command'] },
  xargs: {
    shortArg: 'adEILnPs',
    longArg: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
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

/** `script` is the command string of an option like `su -c`, when it is literal (analysed best effort). */
function literalValue(w: Word | string | undefined): string | undefined {
  if (w === undefined) return undefined;
  if (typeof w === 'string') return w;
  return w.literal ? w.value : undefined;
}

export type StripResult = { argv: Word[] } | { complex: string; script?: string | undefined } | undefined;

/** The index of the wrapped command in argv, or a reason it cannot be found. */
function skipOptions(argv: readonly Word[], spec: OptionSpec): number | { complex: string; script?: string | undefined } | undefined {
  let i = 1;
  const shortArg = spec.shortArg ?? '';
  while (i < argv.length) {
    const w = argv[i]!;
    if (!w.literal) return { complex: `an option of ${argv[0]!.value} is an expansion` };
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
    if (v.startsWith('--')) {
      const name = v.includes('=') ? v.slice(0, v.indexOf('=')) : v;
      if (spec.complexLong?.includes(name)) {
        const value = v.includes('=') ? literalValue(v.slice(v.indexOf('=') + 1)) : literalValue(argv[i + 1]);
        return { complex: `${argv[0]!.value} ${name} runs a command given as a string`, script: value };
      }
      i += spec.longArg?.includes(name) && !v.includes('=') ? 2 : 1;
      continue;
    }
    let takesNext = false;
    for (let j = 1; j < v.length; j++) {
      const c = v[j]!;
      if (spec.notWrapper?.includes(c)) return undefined;
      if (spec.complexShort?.includes(c)) {
        const value = j < v.length - 1 ? literalValue(v.slice(j + 1)) : literalValue(argv[i + 1]);
        return { complex: `${argv[0]!.value} -${c} runs a command given as a string`, script: value };
      }
      if (shortArg.includes(c)) {
        takesNext = j === v.length - 1;
        break;
      }
    }
    i += takesNext ? 2 : 1;
  }
  i += spec.positional ?? 0;
  if (spec.assignments) while (i < argv.length && argv[i]!.literal && ASSIGNMENT.test(argv[i]!.value)) i++;
  return i;
}

/** Strips one wrapper from the front of argv; undefined when argv[0] is not a wrapper. */
export function stripWrapperOnce(argv: readonly Word[], safeOnly: boolean): StripResult {
  const head = argv[0];
  if (!head || !head.literal) return undefined;
  // `VAR=value` words after a wrapper (`sudo FOO=1 rm`): deny and ask rules look through them.
  if (!safeOnly && ASSIGNMENT.test(head.value)) {
    let i = 0;
    while (i < argv.length && argv[i]!.literal && ASSIGNMENT.test(argv[i]!.value)) i++;
    return i < argv.length ? { argv: argv.slice(i) } : undefined;
  }
  // `/usr/bin/env rm …` is `env rm …`: a wrapper named by its path is still that wrapper.
  const slash = head.value.lastIndexOf('/');
  const name = slash === -1 ? head.value : head.value.slice(slash + 1);
  if (safeOnly && !SAFE_WRAPPERS.has(name)) return undefined;
  const spec = WRAPPERS[name];
  if (!spec) return undefined;
  const at = skipOptions(argv, spec);
  if (at === undefined || typeof at === 'object') return at;
  if (at >= argv.length) return undefined;
  return { argv: argv.slice(at) };
}

/**
 * Every form of argv as wrappers are stripped, the original first. `complex`
 * is set when a wrapper's use cannot be modelled.
 */
export function unwrapStages(
  argv: readonly Word[],
  safeOnly: boolean,
): { stages: Word[][]; complex: string | undefined; script?: string | undefined } {
  const stages: Word[][] = [argv.slice()];
  let cur: readonly Word[] = argv;
  for (let n = 0; n < 32; n++) {
    const r = stripWrapperOnce(cur, safeOnly);
    if (r === undefined) return { stages, complex: undefined };
    if ('complex' in r) return { stages, complex: r.complex, script: r.script };
    cur = r.argv;
    stages.push(r.argv);
  }
  return { stages, complex: 'too many nested wrappers' };
}

/** The command that finally runs, after every wrapper. */
export function innermost(argv: readonly Word[]): { argv: Word[]; complex: string | undefined } {
  const { stages, complex } = unwrapStages(argv, false);
  return { argv: stages[stages.length - 1]!, complex };
}
