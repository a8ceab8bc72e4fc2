/**
 * What an operator is told about the permission rules once the service is
 * built (serve, and tools/check in-process): a rule that does not parse is
 * ignored, and one naming a tool the service does not have (`Reed(./.env)`,
 * `WebFech`) matches nothing. Either may be the deny rule a team relies on.
 */
import type { Services } from '../services.js';

export function ruleWarnings(svc: Services): string[] {
  const out = svc.ruleErrors.map((e) => `permission rule "${e.raw}" (${e.source}) is ignored: ${e.error}`);
  const pool = svc.pool();
  for (const r of svc.rules.list()) {
    // MCP tools come and go with their servers; a rule for one is kept for when it connects.
    if (r.toolName.startsWith('mcp__') || pool.lookup(r.toolName) !== undefined) continue;
    out.push(
      `permission rule "${r.raw}" (${r.source}) names no tool of this service (a typo, or a Claude Code tool toolexec does not provide), so it matches nothing; the tools are ${pool.all
        .filter((t) => t.mcpInfo === undefined)
        .map((t) => t.name)
        .join(', ')} and mcp__server__tool`,
    );
  }
  return out;
}
