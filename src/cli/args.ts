/**
 * Argument parsing shared by the commands: node:util's parseArgs in strict
 * mode (an unknown option is a usage error, exit 2), the option groups
 * several commands take, and the JSON argument of `check` and `exec`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError, EXIT_USAGE, oneLine, usageError, type CliIO } from './io.js';

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Parsed {
  values: Values;
  positionals: string[];
  help: boolean;
}

/** Options that load the configuration locally (serve, tools, check). */
export const CONFIG_OPTIONS = {
  config: { type: 'string' },
  'claude-settings': { type: 'string', multiple: true },
  'mcp-config': { type: 'string' },
  workspace: { type: 'string' },
  'data-dir': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/** Options that reach a running service. */
export const REMOTE_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

export const CONFIG_HELP = `  --config FILE            toolexec configuration (default: $TOOLEXEC_CONFIG)
  --claude-settings FILE   a Claude Code settings file (permissions, hooks); repeatable.
                           A .claude/settings.json brings its settings.local.json
  --mcp-config FILE        an .mcp.json file (MCP servers)
  --workspace DIR          the workspace root (default: the configuration's, else .)
  --data-dir DIR           where the service keeps its database`;

export const REMOTE_HELP = `  --url URL                a running service (default: $TOOLEXEC_URL)
  --token TOKEN            its bearer token (default: $TOOLEXEC_TOKEN; prefer the variable:
                           a token on the command line shows in the process list)`;

export function parse(command: string, args: string[], options: ParseArgsOptionsConfig, maxPositionals: number): Parsed {
  let r: { values: Values; positionals: string[] };
  try {
    r = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true }) as {
      values: Values;
      positionals: string[];
    };
  } catch (e) {
    throw usageError(command, oneLine((e as Error).message));
  }
  const help = r.values.help === true;
  if (!help && r.positionals.length > maxPositionals) {
    const extra = r.positionals[maxPositionals]!;
    throw usageError(command, `unexpected argument "${extra}"${'config' in options ? fileOptionHint(extra) : ''}`);
  }
  return { values: r.values, positionals: r.positionals, help };
}

/** A JSON file given where an option was meant (`toolexec serve toolexec.json`): the option that takes it. */
function fileOptionHint(arg: string): string {
  if (!arg.endsWith('.json')) return '';
  const base = path.basename(arg);
  const option = base === '.mcp.json' ? '--mcp-config' : /^settings(\.local)?\.json$/.test(base) ? '--claude-settings' : '--config';
  return `: a file is given with an option, here ${option} ${arg}`;
}

export function str(v: Values, name: string): string | undefined {
  const x = v[name];
  return typeof x === 'string' ? x : undefined;
}

/** A repeatable string option's values. */
export function strs(v: Values, name: string): string[] | undefined {
  const x = v[name];
  if (typeof x === 'string') return [x];
  return Array.isArray(x) ? x.filter((e): e is string => typeof e === 'string') : undefined;
}

export function flag(v: Values, name: string): boolean {
  return v[name] === true;
}

/** A positive integer option, or the default. */
export function intOption(command: string, v: Values, name: string, dflt: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const s = str(v, name);
  if (s === undefined) return dflt;
  const n = Number(s);
  if (!/^\d+$/.test(s.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw usageError(command, `--${name}: expected an integer from ${min} to ${max}, got "${s}"`);
  }
  return n;
}

/** One of a fixed set of values, or the default. */
export function choice<T extends string>(command: string, v: Values, name: string, allowed: readonly T[], dflt: T): T {
  const s = str(v, name);
  if (s === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(s)) {
    throw usageError(command, `--${name}: expected one of ${allowed.join(', ')}, got "${s}"`);
  }
  return s as T;
}

/**
 * A tool input given on the command line: inline JSON, `-` for standard
 * input, or `@file`. It must be a JSON object (tool inputs are objects).
 */
export async function jsonObjectArg(command: string, text: string, io: CliIO): Promise<Record<string, unknown>> {
  let source = 'the input';
  let raw = text;
  if (text === '-') {
    source = 'standard input';
    raw = io.readStdin ? await io.readStdin() : '';
  } else if (text.startsWith('@')) {
    const file = path.resolve(io.cwd, text.slice(1));
    source = file;
    try {
      raw = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(`${command}: ${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, EXIT_USAGE);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw usageError(command, `${source} is not valid JSON: ${oneLine((e as Error).message)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw usageError(command, `${source} must be a JSON object, like '{"file_path":"README.md"}'`);
  }
  return value as Record<string, unknown>;
}

/** Reads all of standard input (for `-`). */
export async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
