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

/** Whether a host name is this machine's loopback (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHostname(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || h === '::ffff:127.0.0.1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The host name of a Host header (`name:port`, `[v6]:port`). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * Authentication as a route-level onRequest hook, made once per route when it
 * is registered with the scope the route's config names; routes without a
 * scope get none. Reading `req.routeOptions` per request builds a dozen-field
 * object each time, and an async hook costs a promise and a microtask turn:
 * the hook is synchronous (Fastify treats a throw as an async hook's
 * rejection). Must be installed before the routes are registered.
 */
export function installAuth(app: FastifyInstance, auth: Authenticator, allowedHosts: readonly string[] = []): void {
  app.decorate('authenticator', auth);
  // Names the operator vouches for (`server.allowedHosts`), as a reverse proxy on this machine sends them.
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const hostAllowed = (name: string): boolean => isLoopbackHostname(name) || allowed.has(name.toLowerCase());
  const originAllowed = (origin: string): boolean => {
    try {
      return hostAllowed(new URL(origin).hostname);
    } catch {
      return false;
    }
  };
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    const scope = (route.config as FastifyContextConfig | undefined)?.scope;
    if (scope === undefined) return;
    const allowQuery = scope === 'any';
    const hook = (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      // Without tokens the service trusts loopback; a web page elsewhere must not
      // reach it through the browser: not cross-site (Origin), and not by DNS
      // rebinding, whose same-origin requests carry no Origin but the
      // attacker's name in Host.
      if (!auth.enabled) {
        const origin = req.headers.origin;
        if (typeof origin === 'string' && origin !== 'null' && !originAllowed(origin)) throw new ToolexecError('TOOLEXEC_ERR_ORIGIN_FORBIDDEN');
        const host = req.headers.host;
        if (typeof host === 'string' && !hostAllowed(hostnameOf(host))) throw new ToolexecError('TOOLEXEC_ERR_ORIGIN_FORBIDDEN');
      }
      req.principal = auth.check(tokenOf(req, allowQuery), scope, req.raw.socket ?? undefined);
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
