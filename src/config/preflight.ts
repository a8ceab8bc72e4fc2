/**
 * What the configuration runs that cannot run: a command hook whose script
 * is missing or not executable, or whose program is not on PATH, hooks under
 * a matcher that is not a valid regular expression, and a stdio MCP server
 * whose command is not there. Such a hook fails at every call
 * with a non-blocking error (exit 126 or 127), so the call goes on as if the
 * policy it holds did not exist; nothing but the execution's hook messages
 * would say so. Found at start, said as warnings: the service still starts
 * (the file may appear later, and a failing hook is Claude Code's behaviour),
 * but the operator reads the problem and the fix before the first call.
 *
 * Only what can be known without running anything is judged: the first
 * simple command of a hook's line, its program and an interpreter's script
 * operand, paths with no variable left in them but `$CLAUDE_PROJECT_DIR`
 * and `$HOME`. A relative path is judged from the workspace root, where a
 * session starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { matcherProblem } from '../hooks/matcher.js';
import { commandWords, INLINE, INTERPRETER } from '../permissions/run-scripts.js';
import type { Config } from './schema.js';

/** Shell builtins and keywords a hook line may start with: never looked up on PATH. */
const BUILTIN = new Set([
  ':', '.', '[', 'alias', 'break', 'builtin', 'case', 'cd', 'command', 'continue', 'declare', 'echo', 'eval', 'exec', 'exit',
  'export', 'false', 'for', 'function', 'if', 'local', 'printf', 'pwd', 'read', 'readonly', 'return', 'set', 'shift', 'source',
  'test', 'trap', 'true', 'type', 'ulimit', 'umask', 'unset', 'until', 'wait', 'while', '{', '(', '!', 'time', 'let', 'shopt',
  'hash', 'getopts', 'jobs', 'kill', 'pushd', 'popd', 'typeset', 'mapfile', 'readarray', 'select', 'coproc', 'times',
]);
/** Interpreter options that take a value (`python3 -W ignore x.py`): the value is not the script. */
const OPTION_WITH_VALUE = new Set(['-W', '-X', '-I', '-r', '--require', '--import', '--loader', '--env-file']);

/** Whether the file at `p`, as `stat` describes it, is a regular file this process may execute. */
function isExecutable(p: string, stat: fs.Stats): boolean {
  if (!stat.isFile()) return false;
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isExecutableFile(p: string): boolean {
  try {
    return isExecutable(p, fs.statSync(p));
  } catch {
    return false;
  }
}

/** Whether a bare program name is found on PATH (the given environment's, else the process's, as children get it). */
function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  for (const dir of (env.PATH ?? process.env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && isExecutableFile(path.join(dir, name))) return true;
  }
  return false;
}

/** Why a program cannot be started, or undefined; `base` resolves a relative path. */
function programProblem(program: string, base: string, env: NodeJS.ProcessEnv): string | undefined {
  if (program.includes('$') || program.includes('`')) return undefined;
  if (!program.includes('/')) return BUILTIN.has(program) || onPath(program, env) ? undefined : `"${program}" is not on PATH`;
  const abs = path.resolve(base, program);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(abs);
  } catch {
    return `${abs} does not exist`;
  }
  if (stat.isDirectory()) return `${abs} is a directory`;
  if (!isExecutable(abs, stat)) return `${abs} is not executable (chmod +x ${abs})`;
  return undefined;
}

/** The script operand of an interpreter (`python3 guard.py`), or undefined. */
function scriptOperand(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (INLINE.has(a)) return undefined;
    if (OPTION_WITH_VALUE.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    return a;
  }
  return undefined;
}

/** Why a hook's line cannot run, or undefined. */
function hookProblem(command: string, root: string, env: NodeJS.ProcessEnv): string | undefined {
  let words = commandWords(command, root);
  // `env A=1 prog`, `A=1 prog`: the program after the assignments.
  if (words[0] === 'env') words = words.slice(1);
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words = words.slice(1);
  const [program, ...args] = words;
  if (program === undefined) return undefined;
  const problem = programProblem(program, root, env);
  if (problem) return problem;
  if (!INTERPRETER.test(path.basename(program))) return undefined;
  const script = scriptOperand(args);
  if (script === undefined || script.includes('$') || script.includes('`')) return undefined;
  const abs = path.resolve(root, script);
  return fs.existsSync(abs) ? undefined : `its script ${abs} does not exist`;
}

/** One warning per hook or stdio MCP server that cannot start, and per matcher that matches nothing. */
export function runnableProblems(config: Config, env: NodeJS.ProcessEnv): string[] {
  const root = config.workspace.root;
  const out: string[] = [];
  if (!config.disableAllHooks) {
    for (const [event, groups] of Object.entries(config.hooks)) {
      for (const g of groups) {
        const bad = matcherProblem(g.matcher);
        if (bad !== undefined) {
          out.push(`hooks: the ${event} matcher "${g.matcher}" is not a valid regular expression (${bad}), so its hooks never run`);
          continue;
        }
        for (const h of g.hooks) {
          if (h.type !== 'command') continue;
          const problem = hookProblem(h.command, root, env);
          if (!problem) continue;
          const matcher = g.matcher === undefined || g.matcher === '' ? '' : ` (matcher "${g.matcher}")`;
          out.push(`hooks: a ${event} hook${matcher} cannot run: ${problem}; every call it matches goes on without it (a non-blocking hook error), so it blocks nothing`);
        }
      }
    }
  }
  for (const [name, s] of Object.entries(config.mcpServers)) {
    if (!('command' in s)) continue;
    const cwd = s.cwd === undefined ? root : path.resolve(root, s.cwd);
    const problem = programProblem(s.command, cwd, env);
    if (problem) out.push(`mcpServers.${name}: the command cannot start: ${problem}; its tools will be missing until it does`);
  }
  return out;
}
