/** GET /audit: permission decisions, filterable, paginated by cursor. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../services.js';
import type { AuditRow } from '../../storage/audit.js';
import { decodeCursor, encodeCursor, parseTime } from '../cursor.js';
import { listingQuery, parseRequest } from '../validate.js';
import { REASON_TYPES } from '../../permissions/types.js';

export const AuditQuery = listingQuery({
  session_id: z.string().min(1).max(256).optional(),
  tool: z.string().min(1).max(512).optional(),
  behavior: z.enum(['allow', 'deny', 'ask']).optional(),
  reason: z.enum(REASON_TYPES).optional(),
  since: z.string().max(64).optional(),
  until: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

export function auditEntry(a: AuditRow) {
  return {
    id: a.id,
    ts: a.ts,
    session_id: a.session_id,
    tool_use_id: a.tool_use_id,
    execution_id: a.execution_id,
    tool: a.tool,
    behavior: a.behavior,
    reason: { type: a.reason_type, detail: a.reason_detail ?? '' },
    actor: a.actor,
    input_digest: a.input_digest,
  };
}

export function auditRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/audit', { config: { scope: 'read' } }, async (req) => {
    const q = parseRequest(AuditQuery, req.query, 'query');
    const { limit } = q;
    const since = parseTime(q.since, 'since');
    const until = parseTime(q.until, 'until');
    const filters = { session_id: q.session_id, tool: q.tool, behavior: q.behavior, reason: q.reason, since, until };
    const page = svc.audit.page({
      sessionId: q.session_id,
      tool: q.tool,
      behavior: q.behavior,
      reason: q.reason,
      since,
      until,
      beforeId: decodeCursor(q.cursor, 'audit', filters),
      limit,
    });
    return { entries: page.rows.map(auditEntry), next_cursor: page.next === undefined ? null : encodeCursor('audit', page.next, filters) };
  });
}
