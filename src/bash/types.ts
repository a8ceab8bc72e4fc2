/**
 * What the analyser makes of a bash command: every simple command it would
 * run (including those inside `$( )`, backticks, process substitutions,
 * subshells, groups, control flow and function bodies), with words whose
 * quotes are removed where their value is fixed, and every redirection.
 */

export interface Word {
  /** The word as written in the source. */
  raw: string;
  /** The word after quote removal; equal to `raw` when the word is not literal. */
  value: string;
  /**
   * The value is fixed by the text alone: no parameter, command, arithmetic
   * or brace expansion. Globs and a leading tilde are flagged separately.
   */
  literal: boolean;
  /** Unquoted `*`, `?` or `[…]`: the word may expand to other file names. */
  glob: boolean;
  /** Unquoted leading `~`. */
  tilde: boolean;
}

export interface Assignment {
  name: string;
  value: Word | undefined;
  raw: string;
}

export type RedirectKind = 'file' | 'dup' | 'heredoc' | 'herestring';

export interface Redirect {
  /** The operator as written: `>`, `>>`, `&>`, `&>>`, `>|`, `<`, `<>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. */
  op: string;
  fd: number | undefined;
  kind: RedirectKind;
  /** The file named, for `file` redirects. */
  target: Word | undefined;
  /** The redirection writes (or truncates) a file. */
  output: boolean;
}

export type CommandOrigin =
  /** Part of the command's own lists, pipelines, groups and control flow. */
  | 'top'
  /** Inside `$( )`, backticks or a process substitution. */
  | 'substitution'
  /** A function body. */
  | 'function'
  /** The script of `bash -c '…'` or `eval`. */
  | 'nested'
  /** The command that `xargs` or `find -exec` runs. */
  | 'derived'
  /** A piece of a command that does not parse, cut lexically (for deny and ask rules only). */
  | 'fallback';

export interface SimpleCommand {
  /** The command name and its arguments; empty for a bare assignment or redirection. */
  argv: Word[];
  /** Leading `VAR=value` assignments. */
  assignments: Assignment[];
  /** Redirections that apply to this command (its own and those of enclosing statements). */
  redirects: Redirect[];
  origin: CommandOrigin;
  /**
   * For a command `find -exec` runs: find's starting points (`.` when it names none), where every
   * name it puts in place of `{}` lies; undefined when they cannot be told (an expansion,
   * `-files0-from`).
   */
  findRoots?: Word[];
  /** The command's source text. */
  text: string;
  /** It runs in directories the line does not name (`find -execdir`: where each match is). */
  elsewhere?: boolean;
}

export interface BashAnalysis {
  /** Every simple command found, best effort when `tooComplex` is set. */
  commands: SimpleCommand[];
  /** Every redirection anywhere in the command. */
  redirects: Redirect[];
  /** Why the command cannot be modelled safely; undefined when it can. */
  tooComplex: string | undefined;
  /**
   * The line is one list joined by `&&` alone (`cd src && grep -rn TODO .`, in a subshell or not):
   * its first simple command runs first, and every other only once it succeeded.
   */
  andChain?: true;
}
