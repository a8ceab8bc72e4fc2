/**
 * Request-scoped typing: each route names the scope it needs in its config;
 * the auth hook puts the caller's principal on the request.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
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

/**
 * Authentication as a route-level onRequest hook, made once per route when it
 * is registered with the scope the route's config names; routes without a
 * scope get none. Reading `req.routeOptions` per request builds a dozen-field
 * object each time, and an async hook costs a promise and a microtask turn:
 * the hook is synchronous (Fastify treats a throw as an async hook's
 * rejection). Must be installed before the routes are registered.
 */
export function installAuth(app: FastifyInstance, auth: Authenticator): void {
  app.decorate('authenticator', auth);
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    const scope = (route.config as FastifyContextConfig | undefined)?.scope;
    if (scope === undefined) return;
    const allowQuery = scope === 'any';
    const hook = (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      // Without tokens the service trusts loopback; a web page elsewhere must not
      // reach it through the browser (DNS rebinding, cross-site requests).
      const origin = req.headers.origin;
      if (!auth.enabled && typeof origin === 'string' && origin !== 'null' && !isLoopbackOrigin(origin)) {
        throw new ToolexecError('TOOLEXEC_ERR_ORIGIN_FORBIDDEN');
      }
      req.principal = auth.check(tokenOf(req, allowQuery), scope);
      done();
    };
    // First among the route's own hooks, as the global hook it replaces was.
    const own = route.onRequest;
    route.onRequest = own === undefined ? [hook] : [hook, ...(Array.isArray(own) ? own : [own])];
  });
}

/** The name the audit log records for the caller. */
export function actorOf(req: FastifyRequest): string | null {
  return req.principal && req.principal.name !== 'anonymous' ? req.principal.name : null;
}
