/**
 * `${VAR}` and `${VAR:-default}` in an MCP server's command, args, env, cwd,
 * url and headers, as Claude Code expands `.mcp.json`. Expansion happens at
 * connect time, so a reconnect sees the environment of that moment.
 *
 * Variables are read from the environment child processes get (the service's
 * own minus its secrets): a configuration cannot pass toolexec's own token on
 * to an MCP server by naming it. A variable that is unset and has no default
 * is an error for that server (it does not connect), never an empty string.
 */
import type { McpServerConfig } from '../config/schema.js';

const VAR = /\$\{([^}:]+)(?::-([^}]*))?\}/g;

export interface Expanded<T> {
  value: T;
  /** Variables that were unset and had no default. */
  missing: string[];
}

export function expandString(s: string, env: NodeJS.ProcessEnv, missing: string[]): string {
  if (!s.includes('${')) return s;
  return s.replace(VAR, (whole, name: string, def: string | undefined) => {
    const v = env[name];
    if (v !== undefined) return v;
    if (def !== undefined) return def;
    if (!missing.includes(name)) missing.push(name);
    return whole;
  });
}

function expandRecord(r: Record<string, string> | undefined, env: NodeJS.ProcessEnv, missing: string[]): Record<string, string> | undefined {
  if (!r) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = expandString(v, env, missing);
  return out;
}

/** The server's configuration with every variable expanded. */
export function expandServerConfig(cfg: McpServerConfig, env: NodeJS.ProcessEnv): Expanded<McpServerConfig> {
  const missing: string[] = [];
  if ('command' in cfg) {
    const value: McpServerConfig = {
      ...cfg,
      command: expandString(cfg.command, env, missing),
      args: cfg.args.map((a) => expandString(a, env, missing)),
      env: expandRecord(cfg.env, env, missing),
      cwd: cfg.cwd === undefined ? undefined : expandString(cfg.cwd, env, missing),
    };
    return { value, missing };
  }
  const value: McpServerConfig = {
    ...cfg,
    url: expandString(cfg.url, env, missing),
    headers: expandRecord(cfg.headers, env, missing),
  };
  return { value, missing };
}
