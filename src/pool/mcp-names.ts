/**
 * MCP tool names as Claude Code forms them: `mcp__{server}__{tool}` with every
 * character outside [A-Za-z0-9_-] replaced by `_` (the API's name pattern is
 * ^[a-zA-Z0-9_-]{1,64}$).
 */
const OUTSIDE = /[^a-zA-Z0-9_-]/g;

export const MAX_TOOL_NAME_LENGTH = 64;

export function normalizeNameForMCP(name: string): string {
  return name.replace(OUTSIDE, '_');
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${normalizeNameForMCP(server)}__${normalizeNameForMCP(tool)}`;
}

