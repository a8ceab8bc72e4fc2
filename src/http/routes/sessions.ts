/**
 * GET /sessions/:id (read): a session's mode and state.
 * PATCH /sessions/:id (approve): change its mode; never to bypassPermissions
 * unless the configuration allows it. Patching a session that does not exist
 * yet creates it, so a mode can be set before the first call.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PermissionMode } from '../../config/schema.js';
import { ToolexecError } from '../../errors.js';
import type { Session } from '../../sessions/session.js';
import type { Services } from '../../services.js';

const IdParams = z.object({ id: z.string().min(1).max(256) });
export const SessionPatch = z.strictObject({ mode: PermissionMode });

export function sessionView(s: Session, svc: Services) {
  return {
    id: s.id,
    mode: s.mode,
    cwd: s.cwd,
    todos: s.todos,
    active_calls: s.active,
    executions: s.toolUses.size,
    file_state: { entries: s.fileState.size, bytes: s.fileState.totalBytes },
    rules: svc.rules.list(s.id).filter((r) => r.source === 'session').length,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

function invalid(e: z.ZodError): ToolexecError {
  const i = e.issues[0];
  return new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', i ? `${i.path.join('.') || 'body'}: ${i.message}` : 'invalid request');
}

export function sessionRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/sessions/:id', { config: { scope: 'read' } }, async (req) => {
    const p = IdParams.safeParse(req.params);
    if (!p.success) throw invalid(p.error);
    const s = svc.sessions.find(p.data.id);
    if (!s) throw new ToolexecError('TOOLEXEC_ERR_SESSION_NOT_FOUND', `No session ${p.data.id}`);
    return { session: sessionView(s, svc) };
  });

  app.patch('/sessions/:id', { config: { scope: 'approve' } }, async (req) => {
    const p = IdParams.safeParse(req.params);
    if (!p.success) throw invalid(p.error);
    const body = SessionPatch.safeParse(req.body);
    if (!body.success) throw invalid(body.error);
    const perms = svc.config.permissions;
    if (body.data.mode === 'bypassPermissions' && (!perms.allowBypass || perms.disableBypassPermissionsMode === 'disable')) {
      throw new ToolexecError('TOOLEXEC_ERR_SESSION_MODE_FORBIDDEN');
    }
    const s = svc.sessions.get(p.data.id);
    if (s.mode !== body.data.mode) {
      s.mode = body.data.mode;
      // A new mode starts the auto-mode denial count afresh.
      s.classifierDenials = { consecutive: 0, total: 0 };
      s.touch();
    }
    return { session: sessionView(s, svc) };
  });
}
