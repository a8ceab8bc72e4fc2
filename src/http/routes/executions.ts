/**
 * GET /executions (filters, cursor), GET /executions/:id (step timings,
 * decision and its chain, hooks' messages, result preview, audit rows),
 * POST /executions/:id/cancel.
 */
import { contentText } from '../../tool/content-text.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ToolexecError } from '../../errors.js';
import type { Call } from '../../pipeline/types.js';
import { TERMINAL_STATUSES } from '../../pipeline/types.js';
import type { Services } from '../../services.js';
import { seqOfId, storedBlock, type ExecutionRow } from '../../storage/executions.js';
import type { ToolResultBlock } from '../../tool/types.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { listingQuery, parseRequest } from '../validate.js';
import { executionBody } from '../../ws/frames.js';
import { maskValue } from '../../observability/logging.js';

export const ExecutionsQuery = listingQuery({
  session_id: z.string().min(1).max(256).optional(),
  status: z.enum(['queued', 'validating', 'awaiting_permission', 'running', 'succeeded', 'failed', 'denied', 'cancelled']).optional(),
  tool: z.string().min(1).max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(200).optional(),
});
const IdParams = z.object({ id: z.string().min(1).max(256) });

/** Characters of the result shown in an execution's detail. */
export const PREVIEW_CHARS = 1000;


function json<T>(s: string | null, fallback: T): T {
  if (s === null) return fallback;
  try {
    return JSON.parse(s) as T;
  } catch {
    return fallback;
  }
}

export function previewOf(block: ToolResultBlock | null): string | null {
  if (!block) return null;
  const text = contentText(block.content);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

/** A row of the list, with the live status of a call still in flight. */
export function listItem(r: ExecutionRow, live: Call | undefined) {
  // A call in flight: its decision as GET /executions/:id shows it (the row may not hold it yet).
  const liveDecision = live && 'decision' in live ? live.decision : undefined;
  const d = liveDecision ?? json<{ behavior: string; reason: { type: string; detail: string } } | null>(r.decision, null);
  return {
    id: r.id,
    session_id: r.session_id,
    tool_use_id: r.tool_use_id,
    tool: r.tool,
    status: live?.status ?? r.status,
    decision: d ? { behavior: d.behavior, reason: d.reason } : null,
    error_class: r.error_class,
    is_error: r.is_error === 1,
    result_id: r.result_id,
    created_at: r.created_at,
    finished_at: r.finished_at,
    duration_ms: r.duration_ms,
  };
}

/** A call in flight, as the list shows it (its row may not be written yet, and holds its first status only). */
function liveItem(call: Call) {
  const d = 'decision' in call ? call.decision : undefined;
  return {
    ...executionBody(call),
    decision: d ? { behavior: d.behavior, reason: d.reason } : null,
    error_class: null,
    is_error: false,
    result_id: null,
    created_at: call.createdAt,
    finished_at: null,
    duration_ms: null,
  };
}

function heldError(id: string): ToolexecError {
  return new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `Execution ${id} ran, but its record is not written yet (the database is not taking writes); retry later`, {
    execution_id: id,
  });
}

export function executionRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/executions', { config: { scope: 'read' } }, async (req) => {
    const { limit, cursor, session_id, status, tool } = parseRequest(ExecutionsQuery, req.query, 'query');
    const filters = { session_id, status, tool };
    const beforeSeq = decodeCursor(cursor, 'executions', filters);
    if (status !== undefined && !TERMINAL_STATUSES.has(status)) {
      // A call in flight: its status lives in the registry (the row says queued until the call ends), and
      // the registry holds every such call (at most server.maxInFlightCalls).
      const live = svc.registry
        .all()
        .map((e) => ({ call: e.call, seq: seqOfId(e.call.id) ?? 0 }))
        .filter(({ call, seq }) => {
          if (call.status !== status || (session_id !== undefined && call.sessionId !== session_id)) return false;
          if (tool !== undefined && ('tool' in call && call.tool ? call.tool.name : call.name) !== tool) return false;
          return beforeSeq === undefined || seq < beforeSeq;
        })
        .sort((a, b) => b.seq - a.seq);
      const page = live.slice(0, limit);
      return {
        executions: page.map((l) => liveItem(l.call)),
        next_cursor: live.length > limit ? encodeCursor('executions', page[page.length - 1]!.seq, filters) : null,
      };
    }
    const page = svc.executions.page({ sessionId: session_id, status, tool, limit, beforeSeq });
    return {
      executions: page.rows.map((r) => listItem(r, svc.registry.get(r.id)?.call)),
      next_cursor: page.next === undefined ? null : encodeCursor('executions', page.next, filters),
    };
  });

  app.get('/executions/:id', { config: { scope: 'read' } }, async (req) => {
    const { id } = parseRequest(IdParams, req.params, 'params');
    const live = svc.registry.get(id)?.call;
    const row = svc.executions.get(id);
    if (!row && !live) {
      // It ran, and its record waits for the database to take writes again (as POST /execute tells a repeat).
      if (svc.executions.isHeld(id)) throw heldError(id);
      throw new ToolexecError('TOOLEXEC_ERR_EXECUTION_NOT_FOUND', `No execution ${id}`);
    }
    if (live && !TERMINAL_STATUSES.has(live.status)) {
      const d = 'decision' in live ? live.decision : undefined;
      // As the row will hold them (pipeline/mask.ts): the decision is masked once taken.
      const mask = svc.results.mask ?? ((text: string) => text);
      return {
        execution: {
          id: live.id,
          session_id: live.sessionId,
          tool_use_id: live.toolUseId,
          tool: 'tool' in live && live.tool ? live.tool.name : live.name,
          status: live.status,
          input: maskValue(live.rawInput ?? null, mask),
          input_digest: live.inputDigest,
          decision: d ? { behavior: d.behavior, reason: d.reason, chain: d.chain, actor: d.actor ?? null } : null,
          timings: live.timings,
          hook_messages: maskValue(live.hookMessages, mask),
          error_class: null,
          is_error: false,
          result_id: null,
          preview: null,
          actor: live.actor,
          created_at: live.createdAt,
          finished_at: null,
          duration_ms: null,
          audit: [],
        },
      };
    }
    const r = row!;
    const d = json<{ behavior: string; reason: { type: string; detail: string }; chain?: unknown[]; actor?: string } | null>(r.decision, null);
    const audit = svc.audit.query({ executionId: r.id, limit: 10 }).map((a) => ({
      id: a.id,
      ts: a.ts,
      behavior: a.behavior,
      reason: { type: a.reason_type, detail: a.reason_detail ?? '' },
      actor: a.actor,
    }));
    return {
      execution: {
        id: r.id,
        session_id: r.session_id,
        tool_use_id: r.tool_use_id,
        tool: r.tool,
        status: r.status,
        input: json<unknown>(r.input, r.input),
        input_digest: r.input_digest,
        decision: d ? { behavior: d.behavior, reason: d.reason, chain: d.chain ?? [], actor: d.actor ?? null } : null,
        timings: json<Record<string, number>>(r.timings, {}),
        hook_messages: json<unknown[]>(r.hook_messages, []),
        error_class: r.error_class,
        is_error: r.is_error === 1,
        result_id: r.result_id,
        preview: previewOf(storedBlock(r) ?? null),
        actor: r.actor,
        created_at: r.created_at,
        finished_at: r.finished_at,
        duration_ms: r.duration_ms,
        audit,
      },
    };
  });

  app.post('/executions/:id/cancel', { config: { scope: 'execute' } }, async (req, reply) => {
    const { id } = parseRequest(IdParams, req.params, 'params');
    if (svc.registry.cancel(id)) return reply.status(202).send({ execution: { id, status: 'cancelling' } });
    const row = svc.executions.get(id);
    if (!row) {
      if (svc.executions.isHeld(id)) throw new ToolexecError('TOOLEXEC_ERR_EXECUTION_NOT_RUNNING', `Execution ${id} has ended; its record is not written yet`);
      throw new ToolexecError('TOOLEXEC_ERR_EXECUTION_NOT_FOUND', `No execution ${id}`);
    }
    throw new ToolexecError(
      'TOOLEXEC_ERR_EXECUTION_NOT_RUNNING',
      `Execution ${id} is not running (its status: ${row.status}); only a queued or running call can be cancelled`,
      { status: row.status },
    );
  });
}
