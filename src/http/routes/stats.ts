/**
 * GET /stats: per tool, calls, statuses, errors by class and duration
 * percentiles; permission decisions by reason type and behaviour. Read from
 * running aggregates (observability/call-stats.ts): the cost is the number of
 * tools, never the size of the history.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../services.js';

const Counts = z.record(z.string(), z.number());
const Ms = z.number().nullable();

/** The body, for the OpenAPI document and the tests. */
export const StatsResponse = z.strictObject({
  since: z.string().describe('When the statistics began (they survive restarts)'),
  resolution: z.string().describe('How exact the durations are'),
  totals: z.strictObject({ calls: z.number(), errors: z.number() }),
  tools: z.record(
    z.string(),
    z.strictObject({
      calls: z.number(),
      statuses: Counts.describe('Calls per status'),
      errors: Counts.describe('Failed, denied and cancelled calls per error class'),
      duration_ms: z.strictObject({ p50: Ms, p95: Ms, p99: Ms, mean: Ms, min: Ms, max: Ms }),
    }),
  ),
  decisions: z.record(z.string(), Counts).describe('Permission decisions: reason type → behaviour → count'),
});

export function statsRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/stats', { config: { scope: 'read' } }, async () => svc.observability.statsBody());
}
