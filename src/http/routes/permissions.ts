/**
 * Permission requests, the dry-run check, and remembered rules:
 *   GET  /permissions/requests        pending and recent requests (read)
 *   POST /permissions/requests/:id    answer one, once (approve)
 *   POST /permissions/check           the decision and its chain, running nothing (read)
 *   GET/POST /permissions/rules, DELETE /permissions/rules/:id   (approve)
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ToolexecError } from '../../errors.js';
import { decide } from '../../permissions/engine.js';
import { SessionPermissionQuery } from '../../permissions/query.js';
import type { PermissionRule } from '../../permissions/types.js';
import { makeContext } from '../../pipeline/context.js';
import { formatIssues } from '../../pipeline/input-errors.js';
import type { Services } from '../../services.js';
import { actorOf } from '../context.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { listingQuery, parseRequest } from '../validate.js';
import { idProblem } from '../../util/text.js';

const IdParams = z.object({ id: z.string().min(1).max(256) });

export const CheckRequest = z.strictObject({
  session_id: z.string().min(1).max(256).optional(),
  name: z.string().min(1).max(512),
  input: z.unknown().optional(),
});

export const RuleCreate = z.strictObject({
  behavior: z.enum(['allow', 'deny', 'ask']),
  rule: z.string().min(1).max(10_000),
  scope: z.enum(['session', 'always']),
  // Stored: an id SQLite would store as another (util/text.ts idProblem) would give the rule to that session after a restart.
  session_id: z
    .string()
    .min(1)
    .max(256)
    .refine((s) => idProblem(s) === undefined, { message: 'holds a lone UTF-16 surrogate, which the database cannot store as sent' })
    .optional(),
});

const RulesQuery = z.object({ session_id: z.string().min(1).max(256).optional() });

export const PermissionRequestsQuery = listingQuery({
  session_id: z.string().min(1).max(256).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});


export function ruleView(r: PermissionRule) {
  return {
    id: r.id,
    source: r.source,
    behavior: r.behavior,
    rule: r.raw,
    tool: r.toolName,
    content: r.content ?? null,
    session_id: r.sessionId ?? null,
    created_at: r.createdAt ?? null,
    created_by: r.createdBy ?? null,
    read_only: r.source !== 'session' && r.source !== 'always',
  };
}

export function permissionRoutes(app: FastifyInstance, svc: Services): void {
  // Pending requests a page at a time (every one of 10,000 waiting was 27 MB in one body), oldest first;
  // the first page adds the most recent answered ones.
  app.get('/permissions/requests', { config: { scope: 'read' } }, async (req) => {
    const q = parseRequest(PermissionRequestsQuery, req.query, 'query');
    const filters = { session_id: q.session_id };
    const afterSeq = decodeCursor(q.cursor, 'requests', filters);
    const page = svc.broker.pendingPage({ sessionId: q.session_id, afterSeq, limit: q.limit });
    const recent = afterSeq === undefined ? svc.broker.recentRequests().filter((r) => q.session_id === undefined || r.session_id === q.session_id) : [];
    return {
      requests: [...page.requests, ...recent],
      pending_count: q.session_id === undefined ? svc.broker.pendingCount : svc.broker.pendingCountIn(q.session_id),
      next_cursor: page.next === undefined ? null : encodeCursor('requests', page.next, filters),
    };
  });

  app.post('/permissions/requests/:id', { config: { scope: 'approve' } }, async (req) => {
    const { id } = parseRequest(IdParams, req.params, 'params');
    const request = svc.broker.respond(id, req.body ?? {}, actorOf(req) ?? 'anonymous');
    return { request };
  });

  app.post('/permissions/check', { config: { scope: 'read' } }, async (req) => {
    const { name, input = {}, session_id } = parseRequest(CheckRequest, req.body, 'body');
    const tool = svc.pool().lookup(name);
    if (!tool) throw new ToolexecError('TOOLEXEC_ERR_TOOL_NOT_FOUND', `No such tool available: ${name}`);
    const parsed = tool.inputSchema.safeParse(input);
    if (!parsed.success) {
      throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', formatIssues(tool.name, parsed.error.issues, input));
    }
    // A session that does not exist yet is judged with the defaults, without creating it.
    const existing = session_id ? svc.sessions.find(session_id) : undefined;
    const mode = existing?.mode ?? svc.config.permissions.defaultMode;
    const session = existing ?? svc.sessions.ephemeral(session_id ?? 'permissions-check');
    const rules = svc.deps.rulesFor(session);
    const ac = new AbortController();
    const ctx = makeContext(svc.deps, session, tool, { executionId: 'dry-run', toolUseId: 'dry-run' }, ac.signal, new SessionPermissionQuery(rules, mode, svc.workspace), svc.log);
    const d = await decide({ tool, input: parsed.data, ctx, mode, rules, hook: undefined });
    const notes: string[] = [];
    if (svc.hooks.matches('PreToolUse', tool.name)) notes.push('PreToolUse hooks match this tool; they are not run in a dry run and may change the decision');
    if (d.behavior === 'ask') {
      if (mode === 'auto' && svc.deps.classifier) notes.push('mode auto: the classifier would be asked first');
      notes.push(
        svc.hub.hasApprover(session.id)
          ? 'an approver is subscribed to this session and would be asked'
          : svc.config.permissions.headless === 'deny'
            ? 'no approver is subscribed: the call would be denied as headless'
            : 'no approver is subscribed: the call would wait for one until the ask timeout',
      );
    }
    return {
      tool: tool.name,
      mode,
      behavior: d.behavior,
      reason: d.reason,
      message: d.message ?? null,
      chain: d.chain,
      notes,
    };
  });

  app.get('/permissions/rules', { config: { scope: 'approve' } }, async (req) => {
    const q = parseRequest(RulesQuery, req.query, 'query');
    return { rules: svc.rules.list(q.session_id).map(ruleView), errors: svc.ruleErrors };
  });

  app.post('/permissions/rules', { config: { scope: 'approve' } }, async (req, reply) => {
    const body = parseRequest(RuleCreate, req.body, 'body');
    const rule = svc.rules.remember({
      behavior: body.behavior,
      rule: body.rule,
      scope: body.scope,
      sessionId: body.session_id,
      createdBy: actorOf(req) ?? undefined,
    });
    return reply.status(201).send({ rule: ruleView(rule) });
  });

  app.delete('/permissions/rules/:id', { config: { scope: 'approve' } }, async (req, reply) => {
    const { id } = parseRequest(IdParams, req.params, 'params');
    svc.rules.revoke(id);
    return reply.status(204).send();
  });
}
