/**
 * What an operator is told about the permission rules once the service is
 * built (serve, and tools/check in-process): a rule that does not parse is
 * ignored, and one naming a tool the service does not have (`Reed(./.env)`,
 * `WebFech`) matches nothing. Either may be the deny rule a team relies on.
 */
import { mcpServerOfRule } from '../permissions/rule-index.js';
import type { PermissionRule } from '../permissions/types.js';
import { normalizeNameForMCP } from '../pool/mcp-names.js';
import type { Services } from '../services.js';

/**
 * Why an `mcp__…` rule can match nothing whatever connects, or undefined. Rules are matched against
 * tool names as Claude Code forms them (`mcp__{server}__{tool}`, each part with every character
 * outside [A-Za-z0-9_-] made `_`), split at the first `__` after `mcp__`; a rule naming a configured
 * server by its raw name (`mcp__github.com`), a server-wide rule for a server whose name holds `__`,
 * and an MCP rule with content all match nothing, and may be the deny rule a team relies on.
 * A rule for a server not configured is kept quiet: it may be for one added later.
 */
function mcpRuleProblem(r: PermissionRule, servers: readonly string[]): string | undefined {
  if (r.content !== undefined) {
    return `is a rule with content, which MCP tools do not take (only mcp__server, mcp__server__* and mcp__server__tool match), so it matches nothing`;
  }
  const parsed = mcpServerOfRule(r.toolName);
  if (parsed === undefined) return undefined;
  const normalized = servers.map(normalizeNameForMCP);
  if (!normalized.includes(parsed.server)) {
    const raw = servers.find((s) => s === parsed.server || normalizeNameForMCP(s) === normalizeNameForMCP(parsed.server));
    if (raw !== undefined && normalizeNameForMCP(raw) !== parsed.server) {
      const rest = r.toolName.slice(`mcp__${parsed.server}`.length);
      return `names the MCP server "${raw}" as written, but its tools are named mcp__${normalizeNameForMCP(raw)}__…, so it matches nothing; write mcp__${normalizeNameForMCP(raw)}${rest}`;
    }
  }
  // `mcp__a__b` (or `mcp__a__b__*`) meant for the server `a__b` parses as the tool `b` of server `a`.
  const body = r.toolName.slice(5).replace(/__\*$/, '');
  const split = normalized.find((s) => s.includes('__') && s === body);
  if (split !== undefined) {
    return `is meant for every tool of the MCP server "${split}", but a server name holding "__" cannot be matched by a server-wide rule (mcp__${split} reads as the tool ${split.slice(split.indexOf('__') + 2)} of the server ${split.slice(0, split.indexOf('__'))}), so it matches nothing; rename the server, or name each tool`;
  }
  return undefined;
}

/** `servers`: the MCP servers configured, connected or not (`check --no-mcp` builds the service without them). */
export function ruleWarnings(svc: Services, servers: readonly string[] = Object.keys(svc.config.mcpServers)): string[] {
  const out = svc.ruleErrors.map((e) => `permission rule "${e.raw}" (${e.source}) is ignored: ${e.error}`);
  const pool = svc.pool();
  for (const r of svc.rules.list()) {
    if (r.toolName.startsWith('mcp__')) {
      // MCP tools come and go with their servers; a rule for one is kept for when it connects, unless it can never match.
      const why = mcpRuleProblem(r, servers);
      if (why !== undefined) out.push(`permission rule "${r.raw}" (${r.source}) ${why}`);
      continue;
    }
    if (pool.lookup(r.toolName) !== undefined) continue;
    out.push(
      `permission rule "${r.raw}" (${r.source}) names no tool of this service (a typo, or a Claude Code tool toolexec does not provide), so it matches nothing; the tools are ${pool.all
        .filter((t) => t.mcpInfo === undefined)
        .map((t) => t.name)
        .join(', ')} and mcp__server__tool`,
    );
  }
  return out;
}
