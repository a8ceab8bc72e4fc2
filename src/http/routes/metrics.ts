/** GET /metrics: Prometheus text exposition (observability/metrics.ts); open, like the health routes. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function metricsRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/metrics', async (_req, reply) => {
    const text = await svc.observability.metrics.text();
    return reply.header('content-type', svc.observability.metrics.contentType).send(text);
  });
}
