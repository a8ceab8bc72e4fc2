/**
 * Walks a tree-sitter-bash syntax tree into the simple commands it would
 * run and the redirections it makes. Anything it cannot model safely makes
 * the analysis `tooComplex` with a reason: a parse error, a command name that
 * is itself an expansion, `eval`, a shell reading commands from its input,
 * an unknown construct, too many subcommands, too deep a nesting. The walk
 * goes on after that, best effort, so that deny rules still see what it found.
 */
import type { Node } from 'web-tree-sitter';
import type { Assignment, BashAnalysis, CommandOrigin, Redirect, SimpleCommand, Word } from './types.js';
import { roughCommands } from './fallback.js';
import {
  ARITH_TEST_OPS,
  baseName,
  CODE_TEXT,
  fileRedirect,
  FIND_EXEC,
  isDescriptorPath,
  lexicalDifference,
  lineBreakTail,
  LIST_LIKE,
  RESERVED,
  SHELLS,
  SUBSCRIPT_CODE,
  unescapeBackticks,
} from './grammar.js';
import { CODE_VARIABLES, HOME_VARIABLES, INTEGER_VARIABLES, isConstantArithmetic, isConstantSubscript, isProgramVariable, PROJECT_CODE_RUNNERS, splitName } from './arith.js';
import { literalWord, wordOf } from './words.js';
import { unwrapStages } from './wrappers.js';
import { commandStrings, runnerText } from './command-strings.js';

/** Claude Code's MAX_SUBCOMMANDS_FOR_SECURITY_CHECK. */
export const MAX_SUBCOMMANDS = 50;
const MAX_DEPTH = 120;
const MAX_NESTED_SCRIPTS = 4;
const MAX_NODES = 50_000;

export type NestedAnalyser = (script: string, depth: number) => BashAnalysis;

export function limitedAnalysis(reason: string, src?: string): BashAnalysis {
  return { commands: src === undefined ? [] : roughCommands(src), redirects: [], tooComplex: reason };
}

class Walker {
  readonly commands: SimpleCommand[] = [];
  readonly redirects: Redirect[] = [];
  tooComplex: string | undefined;
  private nodes = 0;

  constructor(
    private readonly src: string,
    private readonly depth: number,
    private readonly nested: NestedAnalyser,
  ) {}

  complex(reason: string): void {
    this.tooComplex ??= reason;
  }

  private budget(level: number): boolean {
    if (++this.nodes > MAX_NODES) {
      this.complex('the command is too large to analyse');
      return false;
    }
    if (level > MAX_DEPTH) {
      this.complex('the command nests too deeply');
      return false;
    }
    return true;
  }

  private push(cmd: SimpleCommand): void {
    for (const w of cmd.argv) {
      if (w.literal && SUBSCRIPT_CODE.test(w.value)) this.complex('an array subscript in a word holds a command substitution');
    }
    this.commands.push(cmd);
    if (this.commands.length > MAX_SUBCOMMANDS) this.complex(`the command has more than ${MAX_SUBCOMMANDS} subcommands`);
  }

  statement(node: Node, origin: CommandOrigin, inherited: Redirect[], level: number, extraArgs: Word[] = []): void {
    if (!this.budget(level)) return;
    const next = level + 1;
    if (node.isError || node.isMissing) {
      this.complex('the command does not parse');
      this.children(node, origin, inherited, next);
      return;
    }
    switch (node.type) {
      case 'comment':
        return;
      case 'command':
        this.command(node, origin, inherited, next, extraArgs);
        return;
      case 'redirected_statement':
        this.redirected(node, origin, inherited, next);
        return;
      case 'compound_statement':
        if (node.child(0)?.type === '((') {
          this.arithmeticCommand(node, origin, inherited, next);
          return;
        }
        this.children(node, origin, inherited, next);
        return;
      case 'if_statement':
      case 'while_statement':
        this.children(node, origin, inherited, next);
        return;
      case 'for_statement':
      case 'c_style_for_statement':
      case 'case_statement':
        if (node.type === 'for_statement') {
          const v = node.childForFieldName('variable');
          if (v) this.nameWord(wordOf(v), 'for');
        }
        if (node.type === 'c_style_for_statement') {
          for (const f of ['initializer', 'condition', 'update']) {
            for (const c of node.childrenForFieldName(f)) if (c) this.arithmetic(c.text, 'a for (( )) loop');
          }
        }
        for (const c of node.namedChildren) {
          if (!c) continue;
          if (c.type === 'do_group' || c.type === 'compound_statement' || c.type === 'case_item') this.statement(c, origin, inherited, next);
          else this.scan(c, origin, next);
        }
        return;
      case 'case_item':
        for (let i = 0; i < node.childCount; i++) {
          const c = node.child(i);
          if (!c || !c.isNamed) continue;
          if (node.fieldNameForChild(i) === 'value') this.scan(c, origin, next);
          else this.statement(c, origin, inherited, next);
        }
        return;
      case 'function_definition': {
        this.definesFunction = true;
        const body = node.childForFieldName('body');
        const own = this.redirectsOf(node.childrenForFieldName('redirect'), origin, next);
        if (body) this.statement(body, 'function', [...inherited, ...own.redirects], next);
        return;
      }
      case 'variable_assignment':
      case 'variable_assignments': {
        const assignments = node.type === 'variable_assignment' ? [this.assignment(node, origin, next)] : [];
        if (node.type === 'variable_assignments') {
          for (const c of node.namedChildren) if (c?.type === 'variable_assignment') assignments.push(this.assignment(c, origin, next));
        }
        this.push({ argv: [], assignments, redirects: inherited, origin, text: node.text });
        return;
      }
      case 'declaration_command':
      case 'unset_command': {
        const argv: Word[] = [];
        for (const c of node.children) {
          if (!c) continue;
          if (!c.isNamed) {
            if (argv.length === 0) argv.push(literalWord(c.text));
            continue;
          }
          if (c.type === 'variable_assignment') {
            const a = this.assignment(c, origin, next);
            argv.push({ raw: a.raw, value: a.raw, literal: a.value?.literal ?? true, glob: false, tilde: false });
          } else {
            const w = wordOf(c);
            argv.push(w);
            this.scan(c, origin, next);
            if (w.literal && /^[-+]/.test(w.value)) {
              // -i: later assignments to the name are evaluated as arithmetic; -n: the name refers to another, subscript and all.
              if (/^-[A-Za-z]*[in]/.test(w.value) && argv[0]?.value !== 'export' && argv[0]?.value !== 'unset') this.complex(`${argv[0]?.value ?? 'declare'} ${w.value} makes assignments evaluate their values`);
            } else this.nameWord(w, argv[0]?.value ?? 'declare');
          }
        }
        this.push({ argv, assignments: [], redirects: inherited, origin, text: node.text });
        return;
      }
      case 'test_command':
        this.testCommand(node, origin, inherited, next);
        return;
      default:
        if (LIST_LIKE.has(node.type)) {
          this.children(node, origin, inherited, next);
          return;
        }
        this.complex(`the command uses a construct that is not modelled (${node.type})`);
        this.scan(node, origin, next);
    }
  }

  /** Every named child as a statement. */
  private children(node: Node, origin: CommandOrigin, inherited: Redirect[], level: number): void {
    for (const c of node.namedChildren) if (c) this.statement(c, origin, inherited, level);
  }

  /**
   * Looks inside a word or an expression for commands it runs (`$( )`,
   * backticks, `<( )`). `doubleQuoted`: inside "…" or an unquoted heredoc body.
   */
  scan(node: Node, origin: CommandOrigin, level: number, doubleQuoted = false): void {
    if (!this.budget(level)) return;
    if (node.isError || node.isMissing) this.complex('the command does not parse');
    // In "${x:-'…'}" (and in a heredoc body) bash keeps the single quotes as characters and expands
    // what is between them: "${x-'$(rm y)'}" runs rm. The grammar reads a quoted string there.
    if (doubleQuoted && (node.type === 'raw_string' || node.type === 'ansi_c_string') && /[$`]/.test(node.text)) {
      this.complex('single quotes inside a double-quoted ${…} do not quote: what they hold is expanded');
    }
    // ${x@P} expands the value as a prompt, which runs command substitutions in it.
    if (node.type === 'expansion' && /@\s*P\s*\}$/.test(node.text)) this.complex('a prompt expansion (${…@P}) can run commands');
    if (node.type === 'arithmetic_expansion') {
      const t = node.text;
      this.arithmetic(t.startsWith('$((') ? t.slice(3, -2) : t.slice(2, -1), 'an arithmetic expansion');
    } else if (node.type === 'expansion') this.parameterExpansion(node.text);
    else if (node.type === 'subscript') this.subscript(node.childForFieldName('index')?.text ?? '');
    else if (node.type === 'array') {
      // `a=([i]=v)`: the subscripts of an indexed array are arithmetic.
      for (const c of node.namedChildren) {
        const m = c ? /^\[([^\]]*)\]\+?=/.exec(c.text) : null;
        if (m) this.subscript(m[1]!);
      }
    }
    if (node.type === 'command_substitution' && node.child(0)?.text === '`' && node.text.includes('\\')) {
      // Inside backticks bash first turns \\ \` \$ into \ ` $ and then parses the text: nested
      // backticks and escapes the grammar does not undo. The text is parsed again as bash would.
      this.substitutionScript(unescapeBackticks(node.text.slice(1, -1)));
      return;
    }
    if (node.type === 'command_substitution' || node.type === 'process_substitution') {
      const own = this.redirectsOf(node.childrenForFieldName('redirect'), 'substitution', level + 1);
      for (const c of node.namedChildren) {
        if (!c || c.type === 'file_redirect') continue;
        this.statement(c, 'substitution', own.redirects, level + 1);
      }
      return;
    }
    const inQuotes = doubleQuoted || node.type === 'string' || node.type === 'heredoc_body';
    for (const c of node.namedChildren) if (c) this.scan(c, origin, level + 1, inQuotes);
  }

  /** Arithmetic that refers to a variable: the variable's value is evaluated again, and a subscript in it runs commands. */
  private arithmetic(text: string, what: string): void {
    if (!isConstantArithmetic(text)) {
      this.complex(`${what} refers to a variable, whose value bash evaluates as arithmetic (a subscript there can run commands)`);
    }
  }

  private subscript(sub: string): void {
    if (!isConstantSubscript(sub)) this.complex('an array subscript refers to a variable, whose value bash evaluates as arithmetic (a subscript there can run commands)');
  }

  /** `${…}`: indirection, subscripts, substring offsets (arithmetic) and `${name:=value}` assignments. */
  private parameterExpansion(text: string): void {
    const body = text.slice(2, -1);
    const m = /^([!#]?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])/.exec(body) ?? /^()([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])/.exec(body);
    if (!m) {
      this.complex('a parameter expansion that is not modelled');
      return;
    }
    const [, prefix, name] = m as unknown as [string, string, string];
    const parts = /^[A-Za-z_]/.test(name) ? splitName(body.slice(prefix.length)) : { name, subscript: undefined, rest: body.slice(m[0].length) };
    const sub = parts?.subscript;
    const rest = parts?.rest ?? '';
    if (sub !== undefined) this.subscript(sub);
    if (prefix === '!') {
      // `${!prefix*}`, `${!prefix@}` list names and `${!a[@]}` lists keys; any other `${!x}` evaluates a name taken from x's value.
      const listing = (sub === undefined && (rest === '*' || rest === '@')) || ((sub === '@' || sub === '*') && rest === '');
      if (!listing) this.complex('an indirect expansion (${!name}) uses a name taken from a value, which can run commands');
      return;
    }
    if (prefix === '#') return;
    if (rest.startsWith(':') && !/^:[-=?+]/.test(rest)) this.arithmetic(rest.slice(1), 'a substring offset');
    if (/^:?=/.test(rest)) this.assignedName(name, undefined);
  }

  /** A function is defined: it may take a program's name (`npm() { git x; }`), and run where the program was meant to. */
  definesFunction = false;
  /** HOME or XDG_CONFIG_HOME set for a PROJECT_CODE_RUNNERS program, which is no reason to ask unless a function may stand for it. */
  homeOnRunner = false;

  /** A HOME_VARIABLES name a command's own prefix sets (`HOME=/tmp npm test`): judged once its command name is known. */
  private homePrefix: string | undefined;

  /** A variable a command sets by name; `prefix`: before a command's name, for that command alone. */
  private assignedName(name: string, value: string | undefined, prefix = false): void {
    if (prefix && HOME_VARIABLES.has(name)) {
      this.homePrefix ??= name;
      return;
    }
    if (CODE_VARIABLES.has(name)) this.complex(`${name} is given a value, from which bash runs code or decides what runs`);
    else if (isProgramVariable(name, value)) this.complex(`${name} is given a value, which a program it starts runs as a command or loads code or configuration from`);
    if (INTEGER_VARIABLES.has(name) && (value === undefined || !isConstantArithmetic(value))) {
      this.complex(`${name} evaluates what it is given as arithmetic`);
    }
  }

  /**
   * A word a builtin takes as a variable name (`read`, `printf -v`, `unset`,
   * `test -v`, `declare`): an expansion could be a subscript that runs
   * commands, and a subscript is arithmetic.
   */
  private nameWord(w: Word | undefined, what: string): void {
    if (!w) return;
    if (!w.literal) {
      this.complex(`${what} takes a variable name from an expansion`);
      return;
    }
    const parts = splitName(w.value);
    if (!parts) return;
    if (parts.subscript !== undefined) this.subscript(parts.subscript);
    const assigned = /^\+?=/.exec(parts.rest);
    this.assignedName(parts.name, assigned ? parts.rest.slice(assigned[0].length) : undefined);
  }

  /** An operand of an arithmetic comparison (`[[ a -eq b ]]`, `test a -eq b`). */
  private arithmeticOperand(w: Word | undefined): void {
    if (!w) return;
    this.arithmetic(w.literal ? w.value : w.raw.replace(/"/g, ''), 'an arithmetic comparison');
  }

  private assignment(node: Node, origin: CommandOrigin, level: number, prefix = false): Assignment {
    const name = node.childForFieldName('name')?.text ?? '';
    const v = node.childForFieldName('value');
    // The name too: an array subscript is evaluated (`a[$(cmd)]=1`).
    this.scan(node, origin, level);
    const value = v ? wordOf(v) : literalWord('');
    if (value.literal && CODE_TEXT.test(value.value)) this.complex('a variable is given text that holds a command substitution');
    const base = splitName(name)?.name ?? name;
    this.assignedName(base, value.literal && v?.type !== 'array' ? value.value : undefined, prefix);
    return { name, value, raw: node.text };
  }

  /** A line continuation between two words joins them in bash; the grammar splits them. */
  private checkContinuation(prev: Node | undefined, cur: Node): void {
    if (prev && this.src.slice(prev.endIndex, cur.startIndex) === '\\\n') {
      this.complex('a line continuation inside a word');
    }
  }

  private command(node: Node, origin: CommandOrigin, inherited: Redirect[], level: number, extraArgs: Word[]): void {
    // A substitution inside this command's words has prefixes of its own.
    const outerHome = this.homePrefix;
    this.homePrefix = undefined;
    const argv: Word[] = [];
    const assignments: Assignment[] = [];
    const own: Redirect[] = [];
    let prev: Node | undefined;
    /** Where the grammar ran a word across a line break that ends the command in bash. */
    let broken: { at: number; tail: Word } | undefined;
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i);
      if (!c) continue;
      const field = node.fieldNameForChild(i);
      this.checkContinuation(prev, c);
      prev = c;
      if (c.type === 'variable_assignment') {
        assignments.push(this.assignment(c, origin, level, true));
      } else if (field === 'name') {
        const w = wordOf(c);
        if (!w.literal || w.glob) this.complex(`the command name ${JSON.stringify(c.text.slice(0, 80))} is an expansion`);
        // A reserved word where a command name stands means the grammar read the structure differently from bash.
        else if (RESERVED.has(w.raw)) this.complex(`the reserved word ${w.raw} stands where a command name should`);
        this.scan(c, origin, level);
        argv.push(w);
      } else if (field === 'redirect') {
        const r = this.redirectsOf([c], origin, level);
        own.push(...r.redirects);
        argv.push(...r.extraArgs);
      } else if (field === 'argument') {
        if (this.isDescriptorNumber(c)) continue;
        const tail = c.isNamed ? lineBreakTail(c) : undefined;
        if (tail && !broken) broken = { at: argv.length, tail };
        argv.push(wordOf(c));
        if (c.isNamed) this.scan(c, origin, level);
      } else if (c.isNamed) {
        if (c.type === 'subshell') this.statement(c, origin, inherited, level);
        else if (c.type !== 'comment') {
          this.complex(`the command has a part that is not modelled (${c.type})`);
          this.scan(c, origin, level);
        }
      }
    }
    argv.push(...extraArgs);
    const home = this.homePrefix;
    this.homePrefix = outerHome;
    if (home !== undefined) {
      const name = argv[0];
      if (name?.literal && !name.glob && PROJECT_CODE_RUNNERS.has(baseName(name))) this.homeOnRunner = true;
      else this.complex(`${home} is given a value, which a program it starts runs as a command or loads code or configuration from`);
    }
    const cmd: SimpleCommand = { argv, assignments, redirects: [...inherited, ...own], origin, text: node.text };
    this.push(cmd);
    this.special(cmd, level);
    if (broken) {
      this.complex('the grammar joined words across a line break');
      this.derived([broken.tail, ...argv.slice(broken.at + 1)], level);
    }
    // `! { rm x; }` is read by the grammar as a command named `{`: what follows is a command too.
    if (argv[0] && RESERVED.has(argv[0].raw)) this.derived(argv, level);
  }

  /**
   * Digits written right before `<` or `>` are the descriptor of that
   * redirection in bash (`git 0</dev/null push`), but the grammar reads `0`
   * (and a number after another redirection, `a 2>&1 0<x b`) as a word of
   * the command: it is not one.
   */
  private isDescriptorNumber(n: Node): boolean {
    return /^[0-9]+$/.test(n.text) && /^(?:\\\n)*[<>]/.test(this.src.slice(n.endIndex, n.endIndex + 200));
  }

  /** What wrappers, shells, eval, xargs and find -exec run. */
  private special(cmd: SimpleCommand, level: number): void {
    if (cmd.argv.length === 0) return;
    const { stages, complex, script } = unwrapStages(cmd.argv, false);
    if (complex) this.complex(complex);
    // Variables set by a wrapper (`env BASH_ENV=… bash`, `sudo PS4=…`), and functions exported through the environment.
    const last = stages[stages.length - 1]!;
    for (const w of cmd.argv.slice(0, cmd.argv.length - last.length)) {
      const m = w.literal ? /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(w.value) : null;
      if (m) this.assignedName(m[1]!, w.value.slice(m[0].length));
    }
    if (cmd.argv.some((w) => w.literal && /^BASH_FUNC_.*=/s.test(w.value))) this.complex('a function is defined through the environment (BASH_FUNC_…)');
    if (script !== undefined) this.nestedScript(script, cmd);
    // xargs runs the rest of its words as a command of its own.
    for (let s = 0; s < stages.length - 1; s++) {
      if (baseName(stages[s]![0]!) === 'xargs') {
        this.derived(stages[s + 1]!, level);
        return;
      }
    }
    const argv = stages[stages.length - 1]!;
    const head = argv[0];
    if (!head || !head.literal) return;
    const name = baseName(head);
    const words = argv.slice(1);
    if (name === 'eval') {
      this.complex('eval runs text as a command');
      if (words.every((w) => w.literal)) this.nestedScript(words.map((w) => w.value).join(' '), cmd);
      return;
    }
    if (name === 'trap' && words.length >= 2) {
      this.complex('trap runs text as a command');
      if (words[0]!.literal) this.nestedScript(words[0]!.value, cmd);
      return;
    }
    if (name === 'alias' && words.some((w) => !w.literal || w.value.includes('='))) {
      this.complex('alias defines a command from text');
      return;
    }
    if (name === 'let') {
      for (const w of words) this.arithmetic(w.literal ? w.value : w.raw, 'let');
      return;
    }
    // `tar --to-command='rm -rf x'`, `rsync -e CMD`, `ssh -o ProxyCommand=CMD`: a program runs the string.
    for (const o of commandStrings(name, words)) {
      if (o.script === undefined) this.complex(`${name} ${o.option} runs a command the line does not spell out`);
      else this.nestedScript(o.script, cmd);
    }
    // `eatmydata rm -rf x`, `uv run rm …`, `tmux new 'rm …'`: every word that may start the command, for deny rules.
    const runner = runnerText(name, words);
    if (runner) {
      if (runner.complex) this.complex(`${name} runs commands no check can model`);
      // Not subcommands of the line (`npx eslint` of fifty files is not too complex): pieces the deny rules search.
      this.commands.push(...roughCommands(runner.text));
    }
    this.nameArguments(name, words);
    const options = (letters: string): Word | undefined => {
      for (const w of words) {
        if (!w.literal || !w.value.startsWith('-') || w.value === '-' || w.value === '--') return undefined;
        if (!w.value.startsWith('--') && [...letters].some((c) => w.value.includes(c))) return w;
      }
      return undefined;
    };
    // `hash -p /bin/rm ls` makes a name run another file; `enable -f` loads a builtin from a shared object.
    if ((name === 'hash' && options('p')) || (name === 'enable' && options('f'))) {
      this.complex(`${name} ${name === 'hash' ? '-p' : '-f'} makes a command name run other code`);
      return;
    }
    // `mapfile -C CALLBACK` evaluates the callback's text for every few lines read.
    if (name === 'mapfile' || name === 'readarray') {
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        if (!w.literal || !/^-[a-zA-Z]*C/.test(w.value)) continue;
        this.complex(`${name} -C runs its callback as a command`);
        const at = w.value.indexOf('C');
        const cb = at < w.value.length - 1 ? literalWord(w.value.slice(at + 1)) : words[i + 1];
        if (cb?.literal) this.nestedScript(cb.value, cmd);
        return;
      }
    }
    // `compgen -C CMD` runs CMD to list completions; `jobs -x CMD ARGS` runs CMD.
    if (name === 'compgen') {
      if (words.some((w) => !w.literal)) {
        this.complex('compgen is given a word that is an expansion (compgen -C runs a command)');
        return;
      }
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        // `compgen -W WORDLIST` expands the list as shell words: `compgen -W '$(cat .env)' S` runs the substitution.
        if (/^-[a-zA-Z]*W/.test(w.value)) {
          const at = w.value.indexOf('W');
          const list = at < w.value.length - 1 ? literalWord(w.value.slice(at + 1)) : words[i + 1];
          if (list && /[$`<>]/.test(list.value)) {
            this.complex('compgen -W expands its word list (a command substitution there runs)');
            this.nestedScript(`: ${list.value}`, cmd);
            return;
          }
        }
        if (!/^-[a-zA-Z]*C/.test(w.value)) continue;
        this.complex('compgen -C runs a command');
        const at = w.value.indexOf('C');
        const c = at < w.value.length - 1 ? literalWord(w.value.slice(at + 1)) : words[i + 1];
        if (c) this.nestedScript(c.value, cmd);
        return;
      }
    }
    // `fc` (but `fc -l`) runs commands from the history list, which `history -s TEXT` fills, after an editor or `-s old=new` changed them.
    if (name === 'fc' && !words.some((w) => w.literal && /^-[a-zA-Z]*l/.test(w.value))) {
      this.complex('fc runs commands from the history list');
      return;
    }
    if (name === 'jobs') {
      let i = 0;
      let x = false;
      for (; i < words.length; i++) {
        const w = words[i]!;
        if (!w.literal) {
          this.complex('jobs is given a word that is an expansion (jobs -x runs a command)');
          return;
        }
        if (w.value === '--') {
          i++;
          break;
        }
        if (!w.value.startsWith('-') || w.value === '-') break;
        if (w.value.includes('x')) x = true;
      }
      if (x) {
        this.derived(words.slice(i), level);
        return;
      }
    }
    if (SHELLS.has(name)) {
      this.shell(name, words, cmd);
      return;
    }
    if ((name === 'source' || name === '.') && words[0] && !words[0].literal) {
      this.complex(`${name} runs a script whose name is an expansion`);
      return;
    }
    if ((name === 'source' || name === '.') && words[0] && isDescriptorPath(words[0].value)) {
      this.complex(`${name} reads commands from its input or a descriptor (${words[0].value})`);
      return;
    }
    if (name === 'find') {
      const roots = findRoots(words);
      for (let i = 0; i < words.length; i++) {
        if (!(words[i]!.literal && FIND_EXEC.has(words[i]!.value))) continue;
        let j = i + 1;
        while (j < words.length && !(words[j]!.literal && (words[j]!.value === ';' || words[j]!.value === '+'))) j++;
        // -execdir and -okdir run it in the directory of each match.
        if (j > i + 1) this.derived(words.slice(i + 1, j), level, roots, words[i]!.value.endsWith('dir'));
        i = j;
      }
    }
  }

  /** Builtins that take variable names as arguments, and `test`'s arithmetic comparisons. */
  private nameArguments(name: string, words: readonly Word[]): void {
    switch (name) {
      case 'test':
      case '[':
        for (let i = 0; i < words.length; i++) {
          const w = words[i]!;
          if (!w.literal) continue;
          if (ARITH_TEST_OPS.has(w.value) && i > 0) {
            this.arithmeticOperand(words[i - 1]);
            this.arithmeticOperand(words[i + 1]);
          } else if (w.value === '-v' || w.value === '-R') this.nameWord(words[i + 1], `${name} ${w.value}`);
        }
        return;
      case 'read':
      case 'mapfile':
      case 'readarray':
      case 'getopts':
      case 'unset':
      case 'printf':
      case 'wait': {
        // Options with a value: read -a NAME -d -i -n -N -p -t -u; mapfile -d -n -O -s -u -C -c; printf -v NAME; wait -p NAME.
        const withValue = name === 'read' ? 'adinNptu' : name === 'printf' ? 'v' : name === 'wait' ? 'p' : name === 'mapfile' || name === 'readarray' ? 'dnOsuCc' : '';
        const nameOptions = name === 'read' ? 'a' : name === 'printf' ? 'v' : name === 'wait' ? 'p' : '';
        let operands = 0;
        for (let i = 0; i < words.length; i++) {
          const w = words[i]!;
          if (w.literal && w.value === '--') {
            if (name !== 'printf' && name !== 'wait') for (const x of words.slice(i + 1)) this.nameWord(x, name);
            return;
          }
          if (w.literal && w.value.startsWith('-') && w.value.length > 1 && operands === 0) {
            for (let j = 1; j < w.value.length; j++) {
              const c = w.value[j]!;
              if (!withValue.includes(c)) continue;
              const attached = j < w.value.length - 1;
              const value = attached ? literalWord(w.value.slice(j + 1)) : words[i + 1];
              if (nameOptions.includes(c)) this.nameWord(value, `${name} -${c}`);
              if (!attached) i++;
              break;
            }
            continue;
          }
          operands++;
          // printf's operands are its format and arguments, wait's are processes; getopts OPTSTRING NAME [ARG…]; the others take names.
          if (name === 'printf' || name === 'wait') return;
          if (name === 'getopts') {
            if (operands === 2) this.nameWord(w, name);
            continue;
          }
          this.nameWord(w, name);
        }
        return;
      }
      default:
    }
  }

  private derived(words: Word[], level: number, roots?: Word[], elsewhere = false): void {
    let k = 0;
    while (k < words.length && RESERVED.has(words[k]!.raw)) k++;
    if (k >= words.length) return;
    const argv = words.slice(k);
    if (!argv[0]?.literal || argv[0].glob) this.complex('a command run by xargs or find -exec is an expansion');
    const cmd: SimpleCommand = { argv, assignments: [], redirects: [], origin: 'derived', text: argv.map((w) => w.raw).join(' '), ...(roots ? { findRoots: roots } : {}), ...(elsewhere ? { elsewhere } : {}) };
    this.push(cmd);
    if (this.budget(level + 1)) this.special(cmd, level + 1);
  }

  /** `bash -c 'script'` is analysed as a script; a shell reading its input cannot be. */
  private shell(name: string, words: Word[], cmd: SimpleCommand): void {
    let i = 0;
    let dashC = false;
    while (i < words.length) {
      const w = words[i]!;
      if (!w.literal) break;
      const v = w.value;
      if (v === '--' || v === '-') {
        i++;
        break;
      }
      if (!(v.startsWith('-') || v.startsWith('+'))) break;
      if (v === '-o' || v === '+o' || v === '-O' || v === '+O') i++;
      else if (v === '--rcfile' || v === '--init-file' || v.startsWith('--rcfile=') || v.startsWith('--init-file=')) {
        // A startup file is a script too, and an interactive shell goes on to read its input.
        this.complex(`${name} ${v.replace(/=.*$/s, '')} runs a startup file`);
        if (!v.includes('=')) i++;
      } else if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) dashC = true;
      else if (/^-[a-zA-Z]*s[a-zA-Z]*$/.test(v)) this.complex(`${name} -s reads commands from its input`);
      i++;
    }
    if (name === 'busybox') {
      this.complex('busybox runs an applet');
      return;
    }
    if (dashC) {
      const script = words[i];
      if (!script || !script.literal) {
        this.complex(`${name} -c runs text that is not literal`);
        return;
      }
      // xargs -I and find -exec put their input into the script.
      if (cmd.origin === 'derived') this.complex(`${name} -c runs text that xargs or find supplies`);
      this.nestedScript(script.value, cmd);
      return;
    }
    if (i >= words.length) this.complex(`${name} reads commands from its input`);
    else if (!words[i]!.literal) this.complex(`${name} runs a script whose name is an expansion`);
    else if (isDescriptorPath(words[i]!.value)) this.complex(`${name} reads commands from its input or a descriptor (${words[i]!.value})`);
  }

  private substitutionScript(script: string): void {
    if (this.depth >= MAX_NESTED_SCRIPTS) {
      this.complex('substitutions nest too deeply');
      return;
    }
    const inner = this.nested(script, this.depth + 1);
    if (inner.tooComplex) this.complex(inner.tooComplex);
    for (const c of inner.commands) this.push({ ...c, origin: 'substitution' });
    this.redirects.push(...inner.redirects);
  }

  private nestedScript(script: string, parent: SimpleCommand): void {
    if (this.depth >= MAX_NESTED_SCRIPTS) {
      this.complex('scripts nest too deeply');
      return;
    }
    const inner = this.nested(script, this.depth + 1);
    if (inner.tooComplex) this.complex(inner.tooComplex);
    for (const c of inner.commands) this.push({ ...c, origin: 'nested', redirects: [...parent.redirects, ...c.redirects] });
    this.redirects.push(...inner.redirects);
  }

  private arithmeticCommand(node: Node, origin: CommandOrigin, inherited: Redirect[], level: number): void {
    this.arithmetic(node.text.replace(/^\(\(/, '').replace(/\)\)$/, ''), 'an arithmetic command');
    this.scan(node, origin, level);
    this.push({ argv: [literalWord('((')], assignments: [], redirects: inherited, origin, text: node.text });
  }

  private testCommand(node: Node, origin: CommandOrigin, inherited: Redirect[], level: number): void {
    this.scan(node, origin, level);
    const open = node.child(0)?.text ?? '[[';
    // In `[ … ]` (a command, unlike `[[ … ]]`) `>` and `<` are redirections: `[ x > f ]` truncates f. The grammar
    // reads comparisons (or a command with a redirection): too complex, and the files are judged as redirections.
    const own: Redirect[] = [];
    if (open === '[' && hasRedirectionToken(node)) {
      this.complex('[ … ] holds a redirection (< and > there open files)');
      for (const b of node.descendantsOfType('binary_expression')) {
        const op = b?.childForFieldName('operator');
        const right = b?.childForFieldName('right');
        if (!op || !right || !REDIRECTION_TOKENS.has(op.type)) continue;
        own.push({ op: op.type, fd: undefined, kind: 'file', target: wordOf(right), output: op.type !== '<' });
      }
      this.redirects.push(...own);
      const nested = node.descendantsOfType(['file_redirect', 'heredoc_redirect', 'herestring_redirect']).filter((x): x is Node => x !== null);
      own.push(...this.redirectsOf(nested, origin, level).redirects);
    }
    // `[[ a -eq b ]]` evaluates its operands arithmetically: a name's value is evaluated again, and a subscript there runs a command.
    // `[ a -eq b ]` does not in bash today; its operands are held to the same rule.
    for (const b of node.descendantsOfType('binary_expression')) {
      const op = b?.childForFieldName('operator')?.text;
      if (!b || !op || !ARITH_TEST_OPS.has(op)) continue;
      for (const side of [b.childForFieldName('left'), b.childForFieldName('right')]) if (side) this.arithmeticOperand(wordOf(side));
    }
    // `-v a[i]` evaluates the subscript.
    for (const u of node.descendantsOfType('unary_expression')) {
      const op = u?.childForFieldName('operator')?.text;
      if (!u || (op !== '-v' && op !== '-R')) continue;
      const operand = u.namedChildren.find((c) => c && c.type !== 'test_operator');
      if (operand) this.nameWord(wordOf(operand), `test ${op}`);
    }
    for (const d of node.descendantsOfType(['word', 'raw_string', 'string', 'ansi_c_string', 'concatenation'])) {
      const w = d ? wordOf(d) : undefined;
      if (w?.literal && SUBSCRIPT_CODE.test(w.value)) this.complex('an array subscript in a word holds a command substitution');
    }
    this.push({ argv: [literalWord(open)], assignments: [], redirects: [...inherited, ...own], origin, text: node.text });
  }

  private redirected(node: Node, origin: CommandOrigin, inherited: Redirect[], level: number): void {
    const body = node.childForFieldName('body');
    const redirectNodes: Node[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i);
      if (c && c.isNamed && c !== body && node.fieldNameForChild(i) !== 'body') redirectNodes.push(c);
    }
    const r = this.redirectsOf(redirectNodes, origin, level, inherited);
    const all = [...inherited, ...r.redirects];
    if (!body) {
      this.push({ argv: r.extraArgs, assignments: [], redirects: all, origin, text: node.text });
      return;
    }
    if (r.extraArgs.length > 0 && body.type !== 'command') {
      this.complex('a redirection is followed by words the grammar cannot place');
    }
    this.statement(body, origin, all, level, body.type === 'command' ? r.extraArgs : []);
  }

  /**
   * Redirections of a statement. Words the grammar puts after a redirection
   * target (`echo a > f b`) are arguments of the command in bash: returned
   * as extraArgs. Statements the grammar hangs under a heredoc (`cat <<EOF |
   * grep x`, `cat <<EOF && rm y`) are walked as statements.
   */
  private redirectsOf(
    nodes: readonly (Node | null)[],
    origin: CommandOrigin,
    level: number,
    inherited: Redirect[] = [],
    record = true,
  ): { redirects: Redirect[]; extraArgs: Word[] } {
    const redirects: Redirect[] = [];
    const extraArgs: Word[] = [];
    for (const n of nodes) {
      if (!n) continue;
      if (n.isError || n.isMissing) {
        this.complex('the command does not parse');
        this.scan(n, origin, level);
        continue;
      }
      switch (n.type) {
        case 'file_redirect': {
          const { redirect, destinations } = fileRedirect(n);
          for (const d of destinations) this.scan(d, origin, level);
          for (const d of destinations.slice(1)) if (!this.isDescriptorNumber(d)) extraArgs.push(wordOf(d));
          if (redirect.kind === 'file' && !redirect.target) this.complex('a redirection without a target');
          redirects.push(redirect);
          break;
        }
        case 'herestring_redirect':
          this.scan(n, origin, level);
          redirects.push({ op: '<<<', fd: undefined, kind: 'herestring', target: undefined, output: false });
          break;
        case 'heredoc_redirect': {
          let op = '<<';
          for (let i = 0; i < n.childCount; i++) {
            const c = n.child(i);
            if (!c) continue;
            if (!c.isNamed) {
              if (c.text === '<<' || c.text === '<<-') op = c.text;
              continue;
            }
            if (c.type === 'heredoc_start' || c.type === 'heredoc_end' || c.type === 'heredoc_content') continue;
            if (c.type === 'heredoc_body') this.scan(c, origin, level);
            else if (c.type === 'file_redirect' || c.type === 'herestring_redirect' || c.type === 'heredoc_redirect') {
              const inner = this.redirectsOf([c], origin, level, inherited, false);
              redirects.push(...inner.redirects);
              extraArgs.push(...inner.extraArgs);
            } else this.statement(c, origin, inherited, level);
          }
          redirects.push({ op, fd: undefined, kind: 'heredoc', target: undefined, output: false });
          break;
        }
        default:
          this.complex(`a redirection that is not modelled (${n.type})`);
          this.scan(n, origin, level);
      }
    }
    if (record) this.redirects.push(...redirects);
    return { redirects, extraArgs };
  }
}

const REDIRECTION_TOKENS = new Set(['<', '>', '>>', '>|', '&>', '&>>', '<>', '>&', '<&', '>&-', '<&-', '<<', '<<-', '<<<']);

/** Whether a node holds a redirection operator outside substitutions. */
function hasRedirectionToken(node: Node): boolean {
  for (const c of node.children) {
    if (!c || c.type === 'command_substitution' || c.type === 'process_substitution') continue;
    if (c.type === 'file_redirect' || c.type === 'heredoc_redirect' || c.type === 'herestring_redirect') return true;
    if (!c.isNamed && REDIRECTION_TOKENS.has(c.type)) return true;
    if (hasRedirectionToken(c)) return true;
  }
  return false;
}

/**
 * find's starting points: the words before its expression, past its leading options (-H, -L, -P,
 * -D LIST, -O LEVEL); `.` when there are none. Undefined when one is an expansion or a glob, or
 * when `-files0-from` reads them from a file.
 */
function findRoots(words: readonly Word[]): Word[] | undefined {
  if (words.some((w) => !w.literal || w.value === '-files0-from')) return undefined;
  let i = 0;
  while (i < words.length && /^-([HLP]+|D|O\d*)$/.test(words[i]!.value)) i += words[i]!.value === '-D' ? 2 : 1;
  const roots: Word[] = [];
  for (; i < words.length; i++) {
    const v = words[i]!.value;
    if (v.startsWith('-') || v === '(' || v === '!' || v === ',') break;
    if (words[i]!.glob) return undefined;
    roots.push(words[i]!);
  }
  return roots.length > 0 ? roots : [literalWord('.')];
}

/**
 * A line that may change what bash's globs match: `shopt -s nocaseglob` (`cat .EN?` opens .env),
 * dotglob or a GLOBIGNORE (`cat ?env`), extglob, globstar; BASHOPTS given to a bash the line runs.
 * Named anywhere in the line's text (a nested script's too, whose commands are this line's).
 */
const GLOB_OPTIONS = /shopt|GLOBIGNORE|BASHOPTS/;
/** A whole `shopt -s nullglob` (or failglob): what a glob matches stays; only a pattern matching nothing is passed on otherwise. */
const MATCH_KEEPING_SHOPT = /\bshopt\s+-[su](?:\s+(?:nullglob|failglob))+\s*(?=[;&|\n)]|$)/g;

export function analyseTree(root: Node, src: string, depth: number, nested: NestedAnalyser): BashAnalysis {
  const w = new Walker(src, depth, nested);
  if (root.hasError) w.complex('the command does not parse');
  const lexical = lexicalDifference(root, src);
  if (lexical) w.complex(lexical);
  w.statement(root, 'top', [], 0);
  if (w.homeOnRunner && w.definesFunction) w.complex('HOME or XDG_CONFIG_HOME is given to a command a function of the line may stand for');
  let commands = w.tooComplex === undefined ? w.commands : [...w.commands, ...roughCommands(src)];
  let redirects = w.redirects;
  if (GLOB_OPTIONS.test(src.replace(MATCH_KEEPING_SHOPT, ''))) {
    // What a glob matches is not known once a line may change bash's options for it: each is an expansion.
    const unknown = (x: Word): Word => (x.glob ? { ...x, literal: false } : x);
    const redirect = (r: Redirect): Redirect => (r.target ? { ...r, target: unknown(r.target) } : r);
    commands = commands.map((c) => ({ ...c, argv: c.argv.map(unknown), redirects: c.redirects.map(redirect) }));
    redirects = redirects.map(redirect);
  }
  return { commands, redirects, tooComplex: w.tooComplex, ...(w.tooComplex === undefined && isAndChain(root) ? { andChain: true as const } : {}) };
}

/** Whether the program is a single list whose every operator is `&&` (a subshell around it counts as it). */
function isAndChain(root: Node): boolean {
  const statements = root.namedChildren.filter((c) => c !== null && c.type !== 'comment');
  if (statements.length !== 1) return false;
  let node = statements[0]!;
  while (node.type === 'subshell') {
    const inner = node.namedChildren.filter((c) => c !== null && c.type !== 'comment');
    if (inner.length !== 1) return false;
    node = inner[0]!;
  }
  if (node.type !== 'list') return false;
  const lists: Node[] = [node];
  while (lists.length > 0) {
    const l = lists.pop()!;
    for (const c of l.children) {
      if (!c) continue;
      if (!c.isNamed && c.type !== '&&') return false;
      if (c.type === 'list') lists.push(c);
    }
  }
  return true;
}
