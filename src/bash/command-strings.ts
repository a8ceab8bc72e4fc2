/**
 * Options by which a program that is no wrapper runs a command given on its
 * command line: tar's `--to-command`, `-I`, `--checkpoint-action=exec=`;
 * rsync's `-e`; ssh's `-o ProxyCommand=`; scp's and sftp's `-S`; zip's `-TT`;
 * man's `-P`; sort's `--compress-program`. `tar --to-command='rm -rf x' -xf
 * a.tar` ran rm past `Bash(rm:*)` in bypassPermissions. The command is
 * analysed as a script (deny rules see it); one that is not literal, or an
 * option that runs what no word of the line holds, cannot be checked.
 *
 * Options are found generously: a word that may be such an option is taken
 * for one (an abbreviation, any letter of a cluster), which only makes a
 * command ask more, never less.
 */
import type { Word } from './types.js';
import { wordTail } from './words.js';

export interface CommandString {
  /** The option as written. */
  option: string;
  /** The command it runs, when a literal word holds it. */
  script: string | undefined;
}

/** Long options (with their value) whose value a program runs, by program; `exec=` marks tar's checkpoint actions. */
const LONG: Readonly<Record<string, readonly string[]>> = {
  tar: ['--to-command', '--use-compress-program', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command', '--checkpoint-action'],
  rsync: ['--rsh'],
  zip: ['--unzip-command'],
  man: ['--pager', '--html'],
  sort: ['--compress-program'],
};

/** Short options whose value a program runs, and the short options before which a cluster ends (they take a value of their own). */
const SHORT: Readonly<Record<string, { runs: string; valued: string }>> = {
  tar: { runs: 'IF', valued: 'bCfgHKLNTVX' },
  rsync: { runs: 'e', valued: 'BfMT@' },
  scp: { runs: 'S', valued: 'cDFiJloPX' },
  sftp: { runs: 'SD', valued: 'BbcFiJloPRs' },
  man: { runs: 'PH', valued: 'CELMmpRSsex' },
};

/** ssh's configuration keys (`-o KEY=VALUE`, any case) that run a local command; PermitLocalCommand runs the one a configuration file holds. */
const SSH_RUNS = new Set(['proxycommand', 'localcommand', 'knownhostscommand', 'permitlocalcommand']);
const SSH_FAMILY = new Set(['ssh', 'scp', 'sftp']);
const TAR_FAMILY = new Set(['tar', 'gtar']);

function literal(w: Word | undefined): string | undefined {
  return w?.literal ? w.value : undefined;
}

/** Whether `given` may be `long` as getopt_long reads it: the name, or a prefix of it (one a program finds ambiguous only errs). */
function mayBe(given: string, long: string): boolean {
  return given.length >= 4 && long.startsWith(given);
}

/** The commands the options of `name` (after every wrapper) run; `words`: its arguments. */
export function commandStrings(name: string, words: readonly Word[]): CommandString[] {
  const program = TAR_FAMILY.has(name) ? 'tar' : name;
  const long = Object.hasOwn(LONG, program) ? LONG[program]! : [];
  const short = Object.hasOwn(SHORT, program) ? SHORT[program] : undefined;
  const ssh = SSH_FAMILY.has(program);
  if (long.length === 0 && !short && !ssh) return [];
  const out: CommandString[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.literal) {
      // An expansion may be any option, the value included (`x='--to-command=rm -rf y'; tar xf a.tar $x`);
      // not one after a literal start that is no dash (`./$f`, `a-$x`), nor a directory's absolute path (`$HOME/x`, `"$PWD"`).
      if (!/^[A-Za-z0-9_./~+,:@%]/.test(w.raw) && !/^"?(?:\$\{?(?:HOME|PWD)\}?|\$\(pwd\))(?![A-Za-z0-9_])/.test(w.raw)) out.push({ option: w.raw, script: undefined });
      continue;
    }
    const v = w.value;
    if (v === '--') break;
    // tar's old style (`tar cIf PROG a.tar`): the letters' values are the next words, in order.
    if (program === 'tar' && i === 0 && !v.startsWith('-') && /[IF]/.test(v)) {
      out.push({ option: v, script: undefined });
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const given = eq === -1 ? v : v.slice(0, eq);
      const hit = long.find((l) => mayBe(given, l));
      if (!hit) continue;
      // man's --html takes its browser attached only.
      const value = eq !== -1 ? wordTail(w, eq + 1) : hit === '--html' ? undefined : words[i + 1];
      if (hit === '--html' && value === undefined) continue;
      let script = literal(value);
      if (hit === '--checkpoint-action') {
        // Only `exec=COMMAND` runs one; `dot`, `echo`, `sleep=N` do not.
        if (script !== undefined && !/^exec=/.test(script)) continue;
        script = script?.slice(5);
      }
      out.push({ option: given, script });
      continue;
    }
    if (!v.startsWith('-') || v.length < 2) continue;
    // zip's -TT is one option of two letters (`-TT CMD`, `-TTCMD`).
    if (program === 'zip' && v.startsWith('-TT')) {
      out.push({ option: '-TT', script: v.length > 3 ? v.slice(3) : literal(words[i + 1]) });
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const c = v[j]!;
      if (ssh && c === 'o') {
        const value = j < v.length - 1 ? v.slice(j + 1) : literal(words[i + 1]);
        if (value === undefined) out.push({ option: `-o`, script: undefined });
        else {
          const m = /^\s*([A-Za-z]+)\s*(?:=\s*|\s+)?([\s\S]*)$/.exec(value);
          const key = m?.[1]?.toLowerCase() ?? '';
          if (SSH_RUNS.has(key)) out.push({ option: `-o ${m![1]}`, script: key === 'permitlocalcommand' ? undefined : m![2] });
        }
        break;
      }
      if (short?.runs.includes(c)) {
        // man's -H takes its browser attached only.
        if (program === 'man' && c === 'H' && j === v.length - 1) break;
        out.push({ option: `-${c}`, script: j < v.length - 1 ? v.slice(j + 1) : literal(words[i + 1]) });
        break;
      }
      if (short?.valued.includes(c)) break;
    }
  }
  return out;
}

/**
 * Programs that run a command line given as their arguments, which the wrapper table (wrappers.ts)
 * does not model: `eatmydata rm -rf x`, `xvfb-run -a rm …`, `uv run rm …`, `npm exec -- rm …` ran
 * rm past `Bash(rm:*)` in bypassPermissions. Their options are not known here, so where the command
 * starts is not either: every word from the first their arguments may start a command with is
 * taken as the start of one, for deny rules only (as the lexical fallback does), and what they
 * allow, ask or run is as before. By name: the subcommand after which the command comes (`uv run`),
 * or undefined when it comes after the program's own options.
 */
const RUNNERS: ReadonlyMap<string, readonly string[] | undefined> = new Map<string, readonly string[] | undefined>([
  ...[
    'dbus-run-session', 'dbus-launch', 'xvfb-run', 'ssh-agent', 'setpriv', 'prlimit', 'numactl', 'eatmydata', 'systemd-inhibit',
    'proxychains', 'proxychains4', 'torsocks', 'tsocks', 'faketime', 'rlwrap', 'nocache', 'cgexec', 'valgrind', 'catchsegv',
    'caffeinate', 'ifne', 'lockf', 'start-stop-daemon', 'daemonize', 'setarch', 'linux32', 'linux64', 'i386', 'x86_64', 'chpst',
    's6-setuidgid', 'gosu', 'su-exec', 'tini', 'dumb-init', 'runcon', 'bwrap', 'proot', 'fakechroot', 'schroot', 'systemd-nspawn',
    'flatpak-spawn', 'mpirun', 'mpiexec', 'srun', 'cross-env', 'env-cmd', 'dotenv', 'npx', 'pnpx', 'bunx', 'uvx', 'nix-shell',
    'expect', 'gdb', 'toybox',
  ].map((n) => [n, undefined] as const),
  ['npm', ['exec', 'x']],
  ['pnpm', ['exec', 'dlx']],
  ['yarn', ['exec', 'dlx']],
  ['bun', ['x', 'exec']],
  ['uv', ['run', 'tool']],
  ['poetry', ['run']],
  ['pipenv', ['run']],
  ['pdm', ['run']],
  ['hatch', ['run']],
  ['rye', ['run']],
  ['bundle', ['exec']],
  ['conda', ['run']],
  ['mamba', ['run']],
  ['micromamba', ['run']],
  ['pixi', ['run', 'exec']],
  ['direnv', ['exec']],
  ['nix', ['develop', 'shell', 'run']],
  ['devbox', ['run']],
  ['asdf', ['exec']],
  ['mise', ['exec', 'x']],
  ['rtx', ['exec', 'x']],
  ['rbenv', ['exec']],
  ['pyenv', ['exec']],
  ['nodenv', ['exec']],
  ['fnm', ['exec']],
  ['volta', ['run']],
  ['perf', ['stat', 'record', 'trace']],
  ['doppler', ['run']],
  ['op', ['run']],
  ['aws-vault', ['exec']],
  ['chamber', ['exec']],
  ['toolbox', ['run']],
  ['distrobox', ['enter']],
  ['ip', ['exec']],
]);

/**
 * Programs that run shell command strings (or commands read from their input) no check models:
 * tmux and screen (a session's command, send-keys, `#()` in a format), at and batch, benchmark and
 * watch runners. Too complex, and their literal words are searched for deny rules as RUNNERS' are.
 */
const SHELL_RUNNERS: ReadonlySet<string> = new Set(['tmux', 'screen', 'at', 'batch', 'hyperfine', 'watchexec', 'entr', 'nodemon', 'tsp', 'pueue', 'sem']);

/**
 * The text, from where a command line a runner is given may start, for deny rules to search (see
 * RUNNERS), and whether the runner cannot be modelled at all (SHELL_RUNNERS). Undefined for other programs.
 */
export function runnerText(name: string, words: readonly Word[]): { text: string; complex: boolean } | undefined {
  const complex = SHELL_RUNNERS.has(name);
  if (!complex && !RUNNERS.has(name)) return undefined;
  const subcommands = RUNNERS.get(name);
  let start = 0;
  if (subcommands) {
    const at = words.findIndex((w) => w.literal && subcommands.includes(w.value));
    if (at === -1) return undefined;
    start = at + 1;
  }
  const text = words
    .slice(start)
    .filter((w) => w.literal)
    .map((w) => w.value)
    .join(' ');
  return { text, complex };
}
