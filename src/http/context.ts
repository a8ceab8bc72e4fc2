/**
 * Request-scoped typing: each route names the scope it needs in its config;
 * the auth hook puts the caller's principal on the request.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Scope } from '../config/schema.js';
import type { Services } from '../services.js';
import { ToolexecError } from '../errors.js';
import { Authenticator, tokenOf, type Principal } from './auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs; undefined = open (health, metrics). */
    scope?: Scope | 'any';
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    toolexec: Services;
    authenticator: Authenticator;
    routeList: Array<{ method: string; url: string }>;
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Whether an Origin header names a loopback host (a page served by this machine). */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

export function installAuth(app: FastifyInstance, auth: Authenticator): void {
  app.decorate('authenticator', auth);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    const scope = req.routeOptions.config?.scope;
    if (scope === undefined) return;
    // Without tokens the service trusts loopback; a web page elsewhere must not
    // reach it through the browser (DNS rebinding, cross-site requests).
    const origin = req.headers.origin;
    if (!auth.enabled && typeof origin === 'string' && origin !== 'null' && !isLoopbackOrigin(origin)) {
      throw new ToolexecError('TOOLEXEC_ERR_ORIGIN_FORBIDDEN');
    }
    const token = tokenOf(req, scope === 'any');
    req.principal = auth.check(token, scope);
  });
}

/** The name the audit log records for the caller. */
export function actorOf(req: FastifyRequest): string | null {
  return req.principal && req.principal.name !== 'anonymous' ? req.principal.name : null;
}
