/** GET /tools (the catalog, with ETag) and GET /tools/search. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { parseRequest } from '../validate.js';

export const ToolsQuery = z.object({
  format: z.enum(['anthropic', 'openai', 'mcp']).default('anthropic'),
  session_id: z.string().min(1).max(256).optional(),
  deferred: z.enum(['include', 'exclude']).optional(),
});


export function toolsRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/tools', { config: { scope: 'execute' } }, async (req, reply) => {
    const q = parseRequest(ToolsQuery, req.query, 'query');
    const session = q.session_id ? svc.sessions.find(q.session_id) : undefined;
    const mode = session?.mode ?? svc.config.permissions.defaultMode;
    const catalog = svc.catalogs().get(q.format, mode, q.deferred === 'include');
    reply.header('etag', catalog.etag);
    reply.header('cache-control', 'no-cache');
    const inm = req.headers['if-none-match'];
    if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === catalog.etag || t.trim() === `W/${catalog.etag}`)) {
      return reply.status(304).send();
    }
    reply.type('application/json; charset=utf-8');
    return reply.send(catalog.json);
  });
}
