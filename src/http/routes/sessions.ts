/**
 * GET /sessions/:id (read): a session's mode and state, with its background tasks.
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
import { parseRequest } from '../validate.js';
import { maskValue } from '../../observability/logging.js';

const IdParams = z.object({ id: z.string().min(1).max(256) });
export const SessionPatch = z.strictObject({ mode: PermissionMode });

export function sessionView(s: Session, svc: Services) {
  // Its todos and background commands are the model's text, shown with the service's secrets masked (pipeline/mask.ts).
  const view = {
    id: s.id,
    mode: s.mode,
    cwd: s.cwd,
    todos: s.todos,
    active_calls: s.active,
    executions: s.toolUses.size,
    file_state: { entries: s.fileState.size, bytes: s.fileState.totalBytes },
    rules: svc.rules.list(s.id).filter((r) => r.source === 'session').length,
    background_tasks: (svc.tasks?.list(s.id) ?? []).map((t) => ({
      id: t.id,
      command: t.command,
      description: t.description ?? null,
      status: t.status,
      exit_code: t.exitCode,
      started_at: t.startedAt,
      ended_at: t.endedAt ?? null,
      output_bytes: t.bytesWritten,
    })),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
  return svc.results.mask ? maskValue(view, svc.results.mask) : view;
}


export function sessionRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/sessions/:id', { config: { scope: 'read' } }, async (req) => {
    const { id } = parseRequest(IdParams, req.params, 'params');
    if (!svc.sessions.find(id)) throw new ToolexecError('TOOLEXEC_ERR_SESSION_NOT_FOUND', `No session ${id}`);
    // Its count of executions once its history is read.
    return { session: sessionView(await svc.sessions.ready(id), svc) };
  });

  app.patch('/sessions/:id', { config: { scope: 'approve' } }, async (req) => {
    const { id } = parseRequest(IdParams, req.params, 'params');
    const body = parseRequest(SessionPatch, req.body, 'body');
    const perms = svc.config.permissions;
    // The refusal names the switch that holds it, so that an operator knows what to change (or that
    // a settings file forbids it whatever allowBypass says).
    if (body.mode === 'bypassPermissions' && perms.disableBypassPermissionsMode === 'disable') {
      throw new ToolexecError(
        'TOOLEXEC_ERR_SESSION_MODE_FORBIDDEN',
        'bypassPermissions is not allowed: permissions.disableBypassPermissionsMode is "disable" (in the configuration or a Claude Code settings file), which forbids it whatever allowBypass says',
      );
    }
    if (body.mode === 'bypassPermissions' && !perms.allowBypass) {
      throw new ToolexecError(
        'TOOLEXEC_ERR_SESSION_MODE_FORBIDDEN',
        'bypassPermissions is not allowed by the configuration: set permissions.allowBypass to true to allow it',
      );
    }
    // The mode applies at once, also while a long history is still being read (the view waits for it).
    const s = svc.sessions.get(id);
    if (s.mode !== body.mode) {
      s.mode = body.mode;
      // A new mode starts the auto-mode denial count afresh.
      s.classifierDenials = { consecutive: 0, total: 0 };
      s.touch();
    }
    return { session: sessionView(s.toolUses.loaded ? s : await svc.sessions.ready(id), svc) };
  });
}
