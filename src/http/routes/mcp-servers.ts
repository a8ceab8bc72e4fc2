/**
 * GET /mcp/servers: each configured MCP server's state, tool count, unusable
 * tools, last error, and the pool's problems that involve it (name clashes,
 * tools shadowing a built-in, over-long names). GET /mcp/servers/:name: one.
 */
import type { FastifyInstance } from 'fastify';
import { ToolexecError } from '../../errors.js';
import type { McpManager, ServerStatus } from '../../mcp/manager.js';
import type { PoolProblem } from '../../pool/pool.js';
import type { Services } from '../../services.js';

export interface ServerReport extends ServerStatus {
  problems: Array<Pick<PoolProblem, 'kind' | 'message' | 'tools'>>;
}

function report(s: ServerStatus, problems: readonly PoolProblem[]): ServerReport {
  return {
    ...s,
    problems: problems.filter((p) => p.servers.includes(s.name)).map((p) => ({ kind: p.kind, message: p.message, tools: p.tools })),
  };
}

export function mcpServerRoutes(app: FastifyInstance, svc: Services, manager: McpManager): void {
  app.get('/mcp/servers', { config: { scope: 'read' } }, async () => {
    const problems = svc.pool().problems;
    return { servers: manager.status().map((s) => report(s, problems)) };
  });

  app.get<{ Params: { name: string } }>('/mcp/servers/:name', { config: { scope: 'read' } }, async (req) => {
    const s = manager.status().find((x) => x.name === req.params.name);
    if (!s) throw new ToolexecError('TOOLEXEC_ERR_MCP_SERVER_NOT_FOUND', `No MCP server named "${req.params.name}" is configured`);
    return report(s, svc.pool().problems);
  });
}
