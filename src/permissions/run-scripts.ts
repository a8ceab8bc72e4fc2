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
const INLINE = new Set(['-c', '-e', '--eval', '-p', '--print', '-m']);

/** Shell words up to the first operator, quotes removed; `$CLAUDE_PROJECT_DIR` and `~` expanded. */
export function commandWords(command: string, projectDir: string): string[] {
  const words: string[] = [];
  let cur = '';
  let has = false;
  let i = 0;
  const s = command.replace(/\$\{CLAUDE_PROJECT_DIR\}|\$CLAUDE_PROJECT_DIR\b/g, projectDir);
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
      if (has) words.push(cur);
      cur = '';
      has = false;
      if (';|&<>()'.includes(c)) return words;
      i++;
    } else {
      cur += c;
      has = true;
      i++;
    }
  }
  if (has) words.push(cur);
  return words.map((w) => (w === '~' || w.startsWith('~/') ? os.homedir() + w.slice(1) : w));
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
  if (p === '' || p.includes('$')) return;
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
        for (const p of scriptOf(commandWords(h.command, root))) add(out, p, undefined);
      }
    }
  }
  for (const s of Object.values(mcpServers)) {
    if (!('command' in s)) continue;
    const cwd = s.cwd === undefined ? root : path.resolve(root, s.cwd);
    for (const p of scriptOf([s.command, ...s.args])) add(out, p, cwd);
  }
  out.absolute = [...new Set(out.absolute)];
  out.relative = [...new Set(out.relative.filter((p) => p !== '.' && !p.startsWith('..')))];
  return out;
}
