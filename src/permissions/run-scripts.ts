/**
 * The scripts toolexec itself runs: command hooks (`./hooks/check.sh`,
 * `python3 "$CLAUDE_PROJECT_DIR"/tools/guard.py`) and stdio MCP servers
 * (`node ./mcp/server.js`). They run with the service's rights, outside any
 * sandbox, and a PreToolUse hook is a policy the agent is held to: an agent
 * that could rewrite one in acceptEdits mode (or create the one a hook names
 * but that does not exist yet) would run its own code there, or lift the
 * policy. So writing them is a protected change, as writing `.claude/` or
 * `.git/` is: it always asks a person (permissions/filesystem.ts,
 * permissions/bash-rules.ts).
 *
 * A relative path is relative to where it runs: a hook to the session's
 * working directory (any directory of the workspace), a stdio server to its
 * `cwd`. A relative hook path therefore stands for that path below any
 * directory of the workspace.
 */
import os from 'node:os';
import path from 'node:path';
import type { HooksConfig, McpServerConfig } from '../config/schema.js';

export interface RunScripts {
  /** Absolute paths. */
  absolute: string[];
  /** Paths relative to any working directory (normalised, no leading `./`). */
  relative: string[];
}

/** Programs whose first operand is the script they run (also judged in permissions/bash-paths.ts). */
export const INTERPRETER =
  /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|deno|bun|tsx|ts-node|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|wish|Rscript|R|julia|bash|sh|dash|zsh|ksh|mksh|fish|csh|tcsh)$/;
/** Options after which an interpreter runs code from its arguments rather than a file. */
export const INLINE: ReadonlySet<string> = new Set(['-c', '-e', '--eval', '-p', '--print', '-m']);

/** Shell words up to the first operator, quotes removed; `$CLAUDE_PROJECT_DIR`, `$HOME` and `~` expanded. */
export function commandWords(command: string, projectDir: string): string[] {
  return commandSegments(command, projectDir)[0] ?? [];
}

/** The words of each simple command of a command line (split at `;`, `|`, `&`, `<`, `>`, parentheses). */
export function commandSegments(command: string, projectDir: string): string[][] {
  const segments: string[][] = [];
  let words: string[] = [];
  let cur = '';
  let has = false;
  let outputTarget = false;
  let i = 0;
  const s = command
    .replace(/\$\{CLAUDE_PROJECT_DIR\}|\$CLAUDE_PROJECT_DIR\b/g, projectDir)
    .replace(/\$\{HOME\}|\$HOME\b/g, os.homedir());
  while (i < s.length) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1) break;
      cur += s.slice(i + 1, end);
      has = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length) i++;
        cur += s[i];
        i++;
      }
      has = true;
      i++;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[i + 1];
      has = true;
      i += 2;
    } else if (/\s/.test(c) || ';|&<>()'.includes(c)) {
      // What an output redirection names is a file the hook writes, not code it runs.
      if (has) {
        if (outputTarget) outputTarget = false;
        else words.push(cur);
      }
      cur = '';
      has = false;
      if (';|&<>()'.includes(c) && words.length > 0) {
        segments.push(tilde(words));
        words = [];
      }
      if (c === '>') outputTarget = true;
      i++;
    } else {
      cur += c;
      has = true;
      i++;
    }
  }
  if (has && !outputTarget) words.push(cur);
  if (words.length > 0) segments.push(tilde(words));
  return segments;
}

function tilde(words: readonly string[]): string[] {
  return words.map((w) => (w === '~' || w.startsWith('~/') ? os.homedir() + w.slice(1) : w));
}

/** Names a hook's code may be in, beside its script: files of the usual script languages, and make files. */
const SCRIPT_NAME = /\.(sh|bash|zsh|py|pyw|js|mjs|cjs|ts|mts|cts|tsx|jsx|rb|pl|pm|php|lua|tcl|r|jl|ps1|mk|awk|sed)$|(^|\/)(Makefile|makefile|GNUmakefile)$/;
/**
 * Names of the files that decide what a hook does without being code to the
 * shell: configuration and policy files (`--config .eslintrc.json`, `guard.py
 * policy.yaml`; an ESLint or Babel configuration can load code).
 */
const CONFIG_NAME = /\.(json|jsonc|json5|ya?ml|toml|ini|cfg|conf|rego|cue)$|^\.[\w-]*rc(\.[\w]+)?$/;

/**
 * Every file a hook command may run, beyond the script of scriptOf: a hook
 * is any shell line (`cd hooks && ./guard.sh`, `sh -c './x.sh'`, `bash -e
 * ./x.sh`, `node --import ./a.mjs ./b.mjs`, `npx tsx ./h.ts`, `make -f
 * hooks.mk`), so every word of it that names a path (holds a `/`) or a file
 * of a script language is taken, option values (`--import=./a.mjs`) and
 * shell `-c` strings included. Taking a word that is no script only makes
 * writing a file of that name ask.
 */
function hookScripts(command: string, projectDir: string, depth = 0): string[] {
  const out: string[] = [];
  for (const words of commandSegments(command, projectDir)) {
    out.push(...scriptOf(words));
    // What tee names is a file the hook writes (as an output redirection's target), not code it runs.
    const writes = path.basename(words[0] ?? '') === 'tee';
    for (const [k, w] of words.entries()) {
      if (writes && k > 0) continue;
      // A shell's `-c` string is a command line of its own.
      if (depth < 3 && k > 0 && /^-[a-z]*c$/.test(words[k - 1]!) && /(^|\/)(ba|z|k|mk|da)?sh$/.test(path.basename(words[0]!))) out.push(...hookScripts(w, projectDir, depth + 1));
      const v = w.startsWith('-') && w.includes('=') ? w.slice(w.indexOf('=') + 1) : w;
      if (v.includes('/') || SCRIPT_NAME.test(v) || CONFIG_NAME.test(v)) out.push(v);
      // `python3 -m pkg.mod` runs pkg/mod.py (or pkg/mod/__main__.py).
      if (k > 0 && words[k - 1] === '-m' && /^python/.test(path.basename(words[0]!)) && /^[\w.]+$/.test(w)) out.push(`${w.replaceAll('.', '/')}.py`, `${w.replaceAll('.', '/')}/__main__.py`);
    }
  }
  return out;
}

/** The script a command runs: its program when that is a path, or an interpreter's script operand. */
function scriptOf(words: readonly string[]): string[] {
  const out: string[] = [];
  const [program, ...args] = words;
  if (program === undefined) return out;
  // `env VAR=x prog …`: the program after the assignments.
  if (path.basename(program) === 'env') return scriptOf(args.filter((a, i) => !(a.includes('=') && args.slice(0, i).every((b) => b.includes('=')))));
  if (program.includes('/')) out.push(program);
  if (INTERPRETER.test(path.basename(program))) {
    for (const a of args) {
      if (INLINE.has(a)) break;
      if (a.startsWith('-')) continue;
      out.push(a);
      break;
    }
  }
  return out;
}

function add(out: RunScripts, p: string, base: string | undefined): void {
  // Devices (`2>/dev/null`) are not scripts: taking them would make every `> /dev/null` ask.
  if (p === '' || p.includes('$') || /^\/(dev|proc)\//.test(p)) return;
  if (path.isAbsolute(p)) out.absolute.push(path.normalize(p));
  else if (base !== undefined) out.absolute.push(path.resolve(base, p));
  else out.relative.push(path.normalize(p));
}

/** The scripts configured hooks and stdio MCP servers run (`root`: the workspace root, `$CLAUDE_PROJECT_DIR`). */
export function scriptsRunByService(hooks: HooksConfig, mcpServers: Readonly<Record<string, McpServerConfig>>, root: string): RunScripts {
  const out: RunScripts = { absolute: [], relative: [] };
  for (const groups of Object.values(hooks)) {
    for (const g of groups) {
      for (const h of g.hooks) {
        if (h.type !== 'command') continue;
        for (const p of hookScripts(h.command, root)) add(out, p, undefined);
      }
    }
  }
  for (const s of Object.values(mcpServers)) {
    if (!('command' in s)) continue;
    const cwd = s.cwd === undefined ? root : path.resolve(root, s.cwd);
    for (const p of scriptOf([s.command, ...s.args])) add(out, p, cwd);
  }
  // The project directory itself (`cd "$CLAUDE_PROJECT_DIR" && …`, `prettier --write "$CLAUDE_PROJECT_DIR"`)
  // is where every hook runs, not a script: it holds the scripts there are, judged as such.
  out.absolute = [...new Set(out.absolute)].filter((p) => p !== path.resolve(root));
  out.relative = [...new Set(out.relative.filter((p) => p !== '.' && !p.startsWith('..')))];
  return out;
}
