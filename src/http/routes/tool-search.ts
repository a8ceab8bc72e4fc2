/**
 * GET /tools/search?q=&max_results=&format=&session_id= (scope execute): what
 * the ToolSearch tool returns — the matching deferred tools of the session's
 * catalog view — with their definitions in the requested catalog format
 * (anthropic by default, openai, mcp).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toolDefinition } from '../../pool/catalog.js';
import type { Services } from '../../services.js';
import { parseRequest } from '../validate.js';
import { DEFAULT_MAX_RESULTS, searchTools } from '../../tools/tool-search.js';

export const ToolSearchQuery = z.object({
  q: z.string().min(1, 'q (the query) is required').max(1000),
  max_results: z.coerce.number().int().positive().max(100).default(DEFAULT_MAX_RESULTS),
  format: z.enum(['anthropic', 'openai', 'mcp']).default('anthropic'),
  session_id: z.string().min(1).max(256).optional(),
});

export function toolSearchRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/tools/search', { config: { scope: 'execute' } }, async (req) => {
    const { q, max_results, format, session_id } = parseRequest(ToolSearchQuery, req.query, 'query');
    const session = session_id ? svc.sessions.find(session_id) : undefined;
    const mode = session?.mode ?? svc.config.permissions.defaultMode;
    const { matches, totalDeferred } = searchTools(svc.pool().view(mode), q, max_results);
    return {
      matches: matches.map((t) => t.name),
      query: q,
      total_deferred_tools: totalDeferred,
      tools: matches.map((t) => toolDefinition(t, format, false)),
    };
  });
}
