/**
 * GET /healthz: alive (200 while the process serves, shutdown included).
 * GET /readyz: whether to send this instance traffic (observability/
 * readiness.ts): 200 when ready, 503 with the failing checks otherwise
 * (`shutting_down` once a graceful shutdown has begun). Both open.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../services.js';

/** The body of /readyz (200 and 503), for the OpenAPI document and the tests. */
export const ReadinessResponse = z.strictObject({
  status: z.enum(['ready', 'not_ready']),
  checks: z.strictObject({
    database: z.string().describe('"ok", or why the database does not take writes'),
    mcp: z.strictObject({
      total: z.number(),
      connected: z.number(),
      servers: z.record(z.string(), z.enum(['connecting', 'connected', 'reconnecting', 'failed', 'closed'])),
      required: z.array(z.string()).describe('Servers configured required: true; only these gate readiness'),
    }),
  }),
  failing: z.array(z.string()).optional().describe('The checks that fail: "database", "mcp:<server>", "shutting_down"'),
});

export function healthRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    const r = svc.observability.readiness.check();
    if (svc.closing) {
      return reply.status(503).send({ ...r.body, status: 'not_ready', failing: [...(r.body.failing ?? []), 'shutting_down'] });
    }
    return reply.status(r.ready ? 200 : 503).send(r.body);
  });
}
