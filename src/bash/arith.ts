/**
 * Arithmetic and variable names, where bash evaluates text as code.
 *
 * In an arithmetic context (`$((…))`, `$[…]`, `((…))`, `for ((…))`, `let`,
 * `[[ a -eq b ]]`, an indexed array's subscript, `${s:off:len}`, a variable
 * with the integer attribute) a bare name's *value* is evaluated again as an
 * arithmetic expression, and an array subscript in that value runs command
 * substitutions: `x='a[$(rm f)]'; (( x ))` runs `rm f`. The value is not
 * known before the command runs, so only arithmetic made of integer
 * constants and operators is modelled; anything that refers to a variable is
 * not.
 */

/** Expansions whose value is always an integer: `$#`, `$?`, `$$`, `$!`, `${#name}`. */
const INTEGER_PARAMS = /\$\{#[A-Za-z_][A-Za-z0-9_]*\}|\$\{#\}|\$[#?$!]/g;
/** Integer constants: decimal, octal, `0x…`, `base#digits`. */
const INTEGER = /(?<![A-Za-z0-9_@#])(?:0[xX][0-9a-fA-F]+|[0-9]+#[0-9A-Za-z@_]+|[0-9]+)(?![A-Za-z0-9_@#])/g;
const OPERATORS_ONLY = /^[0-9\s+\-*/%<>=!&|^~?:(),]*$/;

/** Whether arithmetic text holds only integer constants and operators (no name, no expansion that could hold one). */
export function isConstantArithmetic(text: string): boolean {
  const s = text.replace(INTEGER_PARAMS, ' 0 ').replace(INTEGER, ' 0 ');
  return OPERATORS_ONLY.test(s);
}

/** A subscript that is not evaluated as a variable reference: `@`, `*` or constant arithmetic. */
export function isConstantSubscript(sub: string): boolean {
  const t = sub.trim();
  return t === '@' || t === '*' || isConstantArithmetic(t);
}

/**
 * Variables from whose value bash runs code or decides what runs: a shell
 * started later sources BASH_ENV / ENV, prompts and PS4 (xtrace) undergo
 * command substitution, SHELLOPTS / BASHOPTS turn on options in child shells,
 * BASH_LOADABLES_PATH is where `enable -f` loads builtins from, and CDPATH
 * moves a relative `cd` somewhere the path checks cannot see.
 */
export const CODE_VARIABLES: ReadonlySet<string> = new Set([
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'SHELLOPTS',
  'BASHOPTS',
  'BASH_LOADABLES_PATH',
  'CDPATH',
]);

/**
 * Variables whose value a program started later runs as a command, or loads
 * code or configuration from: git's pager, editor, ssh, diff, askpass, proxy
 * and configuration variables (GIT_CONFIG_KEY_n too; HOME and XDG_CONFIG_HOME,
 * where git and others find their user configuration), the pagers and editors
 * other programs start, less's input preprocessor, the dynamic loader's
 * preloads, interpreters' startup options. `GIT_PAGER='cat .env' git -p log`
 * prints a file no argument names.
 */
// CURL_HOME and WGETRC name the .curlrc/.wgetrc that may upload any file, ZDOTDIR zsh's startup
// files, DOCKER_CONFIG docker's credential helpers, KUBECONFIG kubectl's exec plugins and
// AWS_CONFIG_FILE the aws CLI's credential_process: each a file that runs a program or names a file.
// TAR_OPTIONS, MANOPT and ZIPOPT are options read before the line's (`--to-command=…`, `-P …`, `-TT …`),
// RSYNC_RSH and RSYNC_CONNECT_PROG the command rsync connects through (command-strings.ts).
const PROGRAM_VARIABLE =
  /^(GIT_(PAGER|EDITOR|SEQUENCE_EDITOR|SSH|SSH_COMMAND|EXTERNAL_DIFF|ASKPASS|PROXY_COMMAND|EXEC_PATH|CONFIG|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|DIR|COMMON_DIR|WORK_TREE|TEMPLATE_DIR|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES)|HOME|XDG_CONFIG_HOME|PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|LESSKEY|LESSKEYIN|SSH_ASKPASS|SUDO_ASKPASS|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|BROWSER|CURL_HOME|WGETRC|ZDOTDIR|DOCKER_CONFIG|KUBECONFIG|AWS_CONFIG_FILE|TAR_OPTIONS|RSYNC_RSH|RSYNC_CONNECT_PROG|CVS_RSH|MANOPT|ZIPOPT)$/;

/**
 * Variables that say where programs find their user configuration: git's aliases, hooks and pager
 * ($XDG_CONFIG_HOME/git/config, ordinary files the Write tool writes), curl's .curlrc (an upload of
 * any file), less's lesskey (LESSOPEN), python's user site (.pth files run at startup), ssh's and
 * docker's plugins, and more.
 */
export const HOME_VARIABLES: ReadonlySet<string> = new Set(['HOME', 'XDG_CONFIG_HOME']);

/**
 * Programs that run the project's own code by design, whatever their user configuration says:
 * package scripts (npm, yarn, pnpm, which also obey the project's .npmrc or .yarnrc.yml),
 * Makefiles, cargo's build scripts, test runners' configuration files, and interpreters (a script,
 * or code given on the line, which bypassPermissions runs). A user configuration a line points
 * them at (`HOME=/tmp npm test`) gives them nothing they lack, so it is no reason to ask; for git,
 * curl, less and the rest, which run no code of the project's, it is (README, "What it does not do":
 * what a program's own code opens is beyond any check).
 */
export const PROJECT_CODE_RUNNERS: ReadonlySet<string> = new Set([
  'npm', 'npx', 'pnpm', 'pnpx', 'yarn', 'node', 'bun', 'bunx', 'deno', 'tsx', 'ts-node', 'jest', 'vitest', 'mocha',
  'python', 'python3', 'pytest', 'tox', 'nox', 'make', 'gmake', 'cargo', 'ruby', 'rake', 'bundle', 'rspec', 'perl', 'php', 'composer',
]);

/** Pagers and editors that read and run nothing (`GIT_EDITOR=true git rebase --continue`, `GIT_PAGER=cat`). */
const INERT_PROGRAM = new Set(['', 'cat', 'true', 'false', ':', 'less', 'less -R', 'less -FRX', 'more']);
const PAGER_OR_EDITOR = /^(GIT_(PAGER|EDITOR|SEQUENCE_EDITOR)|PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL)$/;

/**
 * node options that load nothing, read no file, write no file and open no port: heap and stack
 * sizes, warnings and traces printed to stderr, source maps, flags that turn a built-in feature on
 * or off. Not `--openssl-legacy-provider` (it loads a shared object from where OPENSSL_MODULES says), `--require`/`-r`, `--import`, `--loader`, `--experimental-loader`, `--env-file`
 * (which reads .env into the environment), `--inspect*`, `--redirect-warnings`, `--report-*`,
 * `--openssl-config`, `--use-env-proxy` nor anything else node takes: an unknown flag asks.
 */
const HARMLESS_NODE_OPTION =
  /^(--max-old-space-size=\d+|--max-semi-space-size=\d+|--stack-trace-limit=\d+|--max-http-header-size=\d+|--trace-warnings|--trace-deprecation|--trace-uncaught|--trace-exit|--trace-sync-io|--no-warnings|--no-deprecation|--throw-deprecation|--pending-deprecation|--enable-source-maps|--expose-gc|--experimental-vm-modules|--unhandled-rejections=(strict|warn|none|throw|warn-with-error-code)|--dns-result-order=(ipv4first|ipv6first|verbatim))$/;

/**
 * Whether a NODE_OPTIONS value holds only HARMLESS_NODE_OPTION flags (`--max-old-space-size=4096
 * --trace-warnings`). node splits the value at spaces and takes `"` and `\` as quoting: a value
 * with any character but letters, digits, `=`, `-`, `_`, `.`, `:`, `,` and spaces is not judged.
 */
function harmlessNodeOptions(value: string): boolean {
  if (!/^[A-Za-z0-9=_.:, -]*$/.test(value)) return false;
  return value.split(' ').every((t) => t === '' || HARMLESS_NODE_OPTION.test(t));
}

/** Whether giving `name` this value (undefined: not known) may make a later program run or load something. */
export function isProgramVariable(name: string, value: string | undefined): boolean {
  if (!PROGRAM_VARIABLE.test(name)) return false;
  if (name === 'NODE_OPTIONS' && value !== undefined && harmlessNodeOptions(value)) return false;
  return !(value !== undefined && PAGER_OR_EDITOR.test(name) && INERT_PROGRAM.has(value.trim()));
}

/** Variables with the integer attribute from the start: a value assigned to them is evaluated as arithmetic. */
export const INTEGER_VARIABLES: ReadonlySet<string> = new Set(['RANDOM', 'SRANDOM', 'OPTIND', 'HISTCMD']);

/** `name[subscript]…` split: the name, the subscript (when there is one) and the rest. */
export function splitName(text: string): { name: string; subscript: string | undefined; rest: string } | undefined {
  const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text);
  if (!m) return undefined;
  const name = m[0];
  if (text[name.length] !== '[') return { name, subscript: undefined, rest: text.slice(name.length) };
  const close = text.indexOf(']', name.length);
  if (close === -1) return { name, subscript: text.slice(name.length + 1), rest: '' };
  return { name, subscript: text.slice(name.length + 1, close), rest: text.slice(close + 1) };
}
