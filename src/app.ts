/**
 * buildApp(options) returns a ready Fastify instance and never listens;
 * serve() loads the config and listens. Tests use app.inject(), and a real
 * listening server only for websockets, streaming and timeouts.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';
import { Config, type ConfigInput } from './config/schema.js';
import { ToolexecError } from './errors.js';
import { Authenticator, envToken } from './http/auth.js';
import { installAuth } from './http/context.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling, MAX_PARAM_LENGTH, wsClientErrorHandler } from './http/error-handler.js';
import { installJsonParser } from './http/json-parser.js';
import { lazySchemaCompilers } from './http/schema-compilers.js';
import websocket from '@fastify/websocket';
import { auditRoutes } from './http/routes/audit.js';
import { consoleRoutes } from './http/routes/console.js';
import { docsRoutes } from './http/routes/docs.js';
import { executeRoutes } from './http/routes/execute.js';
import { toolSearchRoutes } from './http/routes/tool-search.js';
import { initBashParser } from './bash/parser.js';
import { executionRoutes } from './http/routes/executions.js';
import { resultRoutes } from './http/routes/results.js';
import { permissionRoutes } from './http/routes/permissions.js';
import { sessionRoutes } from './http/routes/sessions.js';
import { wsRoutes } from './http/routes/ws.js';
import { healthRoutes } from './http/routes/health.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { statsRoutes } from './http/routes/stats.js';
import { lazyRequestLogger, loggerForConfig } from './observability/logging.js';
import { mcpServerRoutes } from './http/routes/mcp-servers.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { toolsRoutes } from './http/routes/tools.js';
import { createServices, type ServiceOptions } from './services.js';

export interface AppOptions extends Omit<ServiceOptions, 'config' | 'logger'> {
  /** The configuration, parsed or not (defaults fill what is missing). */
  config?: Config | ConfigInput;
  /** A pino logger, used as is (the masking of secrets in observability/logging.ts is the built one's), or false for silence (tests). */
  logger?: Logger | false;
  /** Where the app's own logger writes (default stdout); unused when `logger` is given. */
  logStream?: DestinationStream | undefined;
}

/** Largest websocket frame a client may send. */
export const MAX_WS_FRAME_BYTES = 64 * 1024;

export async function buildApp(opts: AppOptions = {}): Promise<FastifyInstance> {
  const config = Config.parse(opts.config ?? {});
  const log = opts.logger === false ? pino({ level: 'silent' }) : (opts.logger ?? loggerForConfig(config, opts.env ?? process.env, opts.logStream));
  // The Bash parser loads its grammar once (~20 ms): before the first call, so
  // that Bash's read-only and concurrency checks are exact from the start.
  await initBashParser();
  const services = createServices({ ...opts, config, logger: log });

  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: config.server.bodyLimitBytes,
    requestTimeout: config.server.requestTimeoutMs,
    connectionTimeout: config.server.connectionTimeoutMs,
    // Node honours requestTimeout only when the server is created with it
    // (setting it afterwards, as Fastify does, leaves slow clients connected),
    // and checks it every connectionsCheckingInterval (30 s by default): a
    // tenth of the timeout cuts slow clients off close to it.
    http: {
      requestTimeout: config.server.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor((config.server.requestTimeoutMs || 30_000) / 10))),
    },
    // Routes check their input with zod: Fastify's ajv and fast-json-stringify load only if a route declares a schema.
    schemaController: { compilersFactory: lazySchemaCompilers },
    genReqId: (req) => {
      const h = req.headers['x-request-id'];
      return typeof h === 'string' && /^[\w.-]{1,128}$/.test(h) ? h : randomUUID();
    },
    // A request's child logger is made when something logs (observability/logging.ts LazyLogger).
    childLoggerFactory: lazyRequestLogger as unknown as NonNullable<FastifyServerOptions['childLoggerFactory']>,
    // Per-request lines only at debug: at info they cost a log write per call on the hot path.
    logController: new LogController({ disableRequestLogging: config.logging.level !== 'debug' && config.logging.level !== 'trace' }),
    // Graceful shutdown drains calls first (serve.ts shutdown()); by the time
    // the server closes, what is left open are idle keep-alives and sockets.
    return503OnClosing: true,
    forceCloseConnections: true,
    // Ids up to 256 characters are valid (zod says so, naming the field); the router's default stops at 100.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    // What Node's HTTP parser refuses before routing, in the contract's error shape too.
    clientErrorHandler,
  });
  app.decorate('toolexec', services);
  // The routes as registered, for the OpenAPI check (scripts/openapi.mjs).
  const routeList: Array<{ method: string; url: string }> = [];
  app.decorate('routeList', routeList);
  app.addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) if (m !== 'HEAD') routeList.push({ method: m.toLowerCase(), url: r.url });
  });
  // First: its onRequest hook marks upgrade requests, so that a websocket
  // refused by a later hook (auth, shutdown) still has its socket closed.
  // A connection's frames one per turn of the event loop (allowSynchronousEvents false): by default ws
  // handles every frame of a socket read at once, and one client sending small frames as fast as it could
  // (4,000 in a turn; 300,000 invalid ones held the loop for 6.3 s) kept every other request, /healthz
  // included, waiting. The socket is paused meanwhile, so what waits stays in the kernel, not here.
  await app.register(websocket, { options: { maxPayload: MAX_WS_FRAME_BYTES, allowSynchronousEvents: false } });
  app.websocketServer.on('wsClientError', wsClientErrorHandler);
  installJsonParser(app, config.server.maxJsonDepth);
  installErrorHandling(app);
  // Synchronous (a throw is an error as in an async hook): an async hook costs a promise and a microtask turn per request.
  app.addHook('onRequest', (req, _reply, done) => {
    // Probes keep answering: /healthz alive, /readyz not ready.
    if (services.closing) {
      const q = req.url.indexOf('?');
      const path = q === -1 ? req.url : req.url.slice(0, q);
      if (path !== '/healthz' && path !== '/readyz') throw new ToolexecError('TOOLEXEC_ERR_SHUTTING_DOWN');
    }
    done();
  });
  installAuth(app, new Authenticator(config.server.tokens, envToken(opts.env)), config.server.allowedHosts);
  if (config.server.rateLimit) {
    // Per token (per address for anonymous callers), after authentication; open routes are not limited.
    await app.register((await import('@fastify/rate-limit')).default, {
      global: true,
      hook: 'preHandler',
      max: config.server.rateLimit.max,
      timeWindow: config.server.rateLimit.timeWindowMs,
      keyGenerator: (req) => (req.principal && req.principal.name !== 'anonymous' ? `token:${req.principal.name}` : `ip:${req.ip}`),
      allowList: (req) => req.routeOptions.config?.scope === undefined,
      errorResponseBuilder: (_req, ctx) =>
        new ToolexecError('TOOLEXEC_ERR_RATE_LIMITED', `Rate limit exceeded: at most ${ctx.max} requests per ${ctx.after === undefined ? 'window' : 'window; retry in ' + ctx.after}`),
    });
  }

  healthRoutes(app, services);
  metricsRoutes(app, services);
  statsRoutes(app, services);
  docsRoutes(app);
  toolsRoutes(app, services);
  executeRoutes(app, services);
  toolSearchRoutes(app, services);
  executionRoutes(app, services);
  resultRoutes(app, services);
  auditRoutes(app, services);
  permissionRoutes(app, services);
  sessionRoutes(app, services);
  wsRoutes(app, services);
  mcpServerRoutes(app, services, services.mcp);
  mcpRoutes(app, services);
  consoleRoutes(app);

  app.addHook('onClose', async () => {
    await services.close();
  });
  await app.ready();
  return app;
}
