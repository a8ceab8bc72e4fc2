/**
 * git's global options, the words between `git` and its subcommand, read as
 * git.c's handle_options reads them: the one walk over them that the rule
 * matcher (rule-match.ts) and git's permission checks (permissions/bash-git.ts,
 * permissions/git-config.ts, bash/paths.ts) share, so that none of them can
 * stop earlier or later than another (a check that stopped at `-c`'s value
 * missed a later `-C`; all of them took `--shallow-file`'s value for the
 * subcommand).
 *
 * git compares each option whole (no abbreviations, no clusters):
 *   - `-C DIR`, `-c KEY=VALUE`, `--shallow-file FILE` take the next word only
 *     (`-Cdir`, `-ckey=v` are unknown options);
 *   - `--git-dir`, `--work-tree`, `--namespace`, `--super-prefix`,
 *     `--config-env`, `--attr-source` take the next word or an `=VALUE`;
 *   - `--exec-path=DIR` and `--list-cmds=…` only an `=VALUE`;
 *   - `--help`, `-h`, `--version`, `-v` end the options (git runs help or version);
 *   - anything else starting with `-` (`--` too) is an unknown option, after
 *     which git stops with a usage error. The walk steps over it as a flag,
 *     which only makes the checks see more.
 * Several `-C` apply in turn, each relative to the last, and `-C ''` does
 * nothing; `--git-dir` and `--work-tree` are kept as given and resolved by git
 * from where the last `-C` leads (gitWhere in permissions/bash-git.ts).
 */
import type { Word } from './types.js';
import { wordTail } from './words.js';

/** Options that take the next word as their value, or an attached `=VALUE` where git has that form. */
const WITH_VALUE: ReadonlySet<string> = new Set(['-C', '-c', '--shallow-file', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--attr-source']);
/** Those of WITH_VALUE that also have an `=VALUE` form. */
const WITH_ATTACHED: ReadonlySet<string> = new Set(['--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--attr-source']);
/** Options that take no value. */
const FLAGS: ReadonlySet<string> = new Set([
  '-p', '--paginate', '-P', '--no-pager', '--no-replace-objects', '--bare', '--literal-pathspecs', '--no-literal-pathspecs',
  '--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks', '--no-lazy-fetch', '--no-advice',
]);
/** Options after which git runs `help` or `version` with the words that follow. */
const HELP_OR_VERSION: ReadonlySet<string> = new Set(['--help', '-h', '--version', '-v']);
/** Options that print something and end git (`--exec-path` without `=`, `--list-cmds=…`). */
const QUERIES = /^(--exec-path(?!=)|--html-path$|--man-path$|--info-path$|--list-cmds=)/;

/** One global option as written, with its value word (an attached value as a word of its own). */
export interface GitOption {
  /** The option's name: `-C`, `--git-dir`, `--no-pager`, … (an unknown one as written, without `=VALUE`). */
  name: string;
  /** Its value, when it takes one; undefined when the argv ends before it. */
  value: Word | undefined;
  /** The word the option is written in. */
  word: Word;
}

export interface GitGlobals {
  /** Every global option in order, known or not (expansions excepted). */
  options: GitOption[];
  /** Index in argv of the subcommand: the first word after the global options (argv.length when there is none). */
  verbAt: number;
  /** The subcommand and its arguments. */
  rest: Word[];
  /** The values of `-C`, in order. */
  chdirs: Array<Word | undefined>;
  /** The last `--git-dir` / `--work-tree` given (git keeps the last), as written. */
  gitDir: Word | undefined;
  workTree: Word | undefined;
  /** `-c KEY=VALUE` and `--config-env KEY=ENVVAR` settings, in order. */
  settings: Array<{ option: '-c' | '--config-env'; setting: Word | undefined }>;
  /** `--exec-path=DIR`: git runs its non-builtin commands and remote helpers from DIR. */
  execPath: Word | undefined;
  /** Words where an option may stand that are expansions: what they become (any option, several words) is not known. */
  expansions: Word[];
  /** Options git does not know (it stops with a usage error), `--` included, and attached forms it rejects (`-Cdir`). */
  unknown: string[];
  /** `--help`, `--version`, a query such as `--exec-path` or `--list-cmds=`: git runs no subcommand of the argv as such. */
  noSubcommand: string | undefined;
}

/** Reads git's global options from a git argv (argv[0] is git, unchecked). */
export function parseGitGlobals(argv: readonly Word[]): GitGlobals {
  const g: GitGlobals = {
    options: [],
    verbAt: argv.length,
    rest: [],
    chdirs: [],
    gitDir: undefined,
    workTree: undefined,
    settings: [],
    execPath: undefined,
    expansions: [],
    unknown: [],
    noSubcommand: undefined,
  };
  let i = 1;
  for (; i < argv.length; i++) {
    const w = argv[i]!;
    // An expansion where an option may stand: stepped over, the next word may be the subcommand.
    if (!w.literal) {
      g.expansions.push(w);
      continue;
    }
    const v = w.value;
    if (!v.startsWith('-')) break;
    if (v === '--') {
      // git rejects it; the walk takes what follows for the subcommand, as `--` means elsewhere.
      g.unknown.push(v);
      i += 1;
      break;
    }
    const eq = v.indexOf('=');
    const name = eq !== -1 && WITH_ATTACHED.has(v.slice(0, eq)) ? v.slice(0, eq) : v;
    let value: Word | undefined;
    if (WITH_VALUE.has(name)) {
      if (name !== v) value = wordTail(w, eq + 1);
      else value = argv[++i];
    } else if (v.startsWith('--exec-path=')) {
      value = wordTail(w, '--exec-path='.length);
      g.execPath = value;
      g.options.push({ name: '--exec-path', value, word: w });
      continue;
    } else if (HELP_OR_VERSION.has(v) || QUERIES.test(v)) {
      g.noSubcommand ??= v;
    } else if (!FLAGS.has(v)) g.unknown.push(v);
    g.options.push({ name, value, word: w });
    if (name === '-C') g.chdirs.push(value);
    else if (name === '--git-dir') g.gitDir = value;
    else if (name === '--work-tree') g.workTree = value;
    else if (name === '-c' || name === '--config-env') g.settings.push({ option: name, setting: value });
  }
  g.verbAt = Math.min(i, argv.length);
  g.rest = argv.slice(g.verbAt);
  return g;
}
