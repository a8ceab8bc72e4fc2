/**
 * POST/GET/DELETE /mcp (scope execute): the tool pool as an MCP server
 * (mcp/http-endpoint.ts). The endpoint and the MCP SDK behind it are loaded
 * on the first request, not at start-up.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ToolexecError } from '../../errors.js';
import type { McpEndpoint } from '../../mcp/http-endpoint.js';
import type { Services } from '../../services.js';
import { handleError } from '../error-handler.js';
import { isBodyError } from '../json-parser.js';

/**
 * A body that cannot be read (too large, not JSON, not UTF-8, compressed) is
 * answered as the MCP SDK's transport answers it, a JSON-RPC error with id
 * null: 400 -32700 Parse error, 413 and 415 -32000. Everything else (auth,
 * shutdown, rate limit) keeps the service's error shape.
 */
function mcpErrorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!isBodyError(err)) return handleError(err, req, reply);
  const status = err instanceof ToolexecError ? err.statusCode : (err as FastifyError).statusCode ?? 400;
  const message = status === 400 ? `Parse error: ${err.message}` : err.message;
  return reply.status(status).send({ jsonrpc: '2.0', error: { code: status === 400 ? -32700 : -32000, message }, id: null });
}

export function mcpRoutes(app: FastifyInstance, svc: Services): void {
  let endpoint: Promise<McpEndpoint> | undefined;
  const load = (): Promise<McpEndpoint> =>
    (endpoint ??= import('../../mcp/http-endpoint.js').then((m) => m.createMcpEndpoint(svc)));
  app.addHook('preClose', async () => {
    if (endpoint) await (await endpoint).close();
  });
  const handle = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => (await load()).handle(req, reply);
  const opts = { config: { scope: 'execute' as const }, errorHandler: mcpErrorHandler };
  app.post('/mcp', opts, handle);
  app.get('/mcp', opts, handle);
  app.delete('/mcp', opts, handle);
}
