/**
 * POST/GET/DELETE /mcp (scope execute): the tool pool as an MCP server
 * (mcp/http-endpoint.ts). The endpoint and the MCP SDK behind it are loaded
 * on the first request, not at start-up.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { McpEndpoint } from '../../mcp/http-endpoint.js';
import type { Services } from '../../services.js';

export function mcpRoutes(app: FastifyInstance, svc: Services): void {
  let endpoint: Promise<McpEndpoint> | undefined;
  const load = (): Promise<McpEndpoint> =>
    (endpoint ??= import('../../mcp/http-endpoint.js').then((m) => m.createMcpEndpoint(svc)));
  app.addHook('preClose', async () => {
    if (endpoint) await (await endpoint).close();
  });
  const handle = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => (await load()).handle(req, reply);
  const opts = { config: { scope: 'execute' as const } };
  app.post('/mcp', opts, handle);
  app.get('/mcp', opts, handle);
  app.delete('/mcp', opts, handle);
}
