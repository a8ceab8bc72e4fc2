/**
 * Three kinds of failure, kept apart: the caller's (4xx with a code), ours
 * (5xx, logged with the stack, a body without stack or secret), and the
 * tool's (never here: a `tool_result` with `is_error`).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ToolexecError } from '../errors.js';

const FASTIFY_CODES: Record<string, ConstructorParameters<typeof ToolexecError>[0]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'TOOLEXEC_ERR_REQUEST_BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'TOOLEXEC_ERR_REQUEST_INVALID',
  FST_ERR_CTP_INVALID_JSON_BODY: 'TOOLEXEC_ERR_REQUEST_INVALID',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'TOOLEXEC_ERR_REQUEST_INVALID',
  FST_ERR_VALIDATION: 'TOOLEXEC_ERR_REQUEST_INVALID',
  FST_ERR_BAD_URL: 'TOOLEXEC_ERR_REQUEST_INVALID',
  FST_ERR_ASYNC_CONSTRAINT: 'TOOLEXEC_ERR_REQUEST_INVALID',
};

/** Longest path parameter (decoded) the router matches; ids are validated to far less, with a message naming the field. */
export const MAX_PARAM_LENGTH = 1024;

/**
 * Fastify's `frameworkErrors`: what the router rejects before any route or
 * error handler runs (a malformed percent-encoding, an over-long path
 * parameter) answered with a code like every other error, not Fastify's own body.
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const e =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`)
      : new ToolexecError(FASTIFY_CODES[err.code] ?? 'TOOLEXEC_ERR_REQUEST_INVALID', err.message);
  void reply.status(e.statusCode).send(e.toBody());
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ToolexecError | Error, req, reply) => {
    if (err instanceof ToolexecError) {
      if (err.statusCode >= 500) req.log.error({ err }, err.message);
      if (err.code === 'TOOLEXEC_ERR_RATE_LIMITED' || err.code === 'TOOLEXEC_ERR_OVERLOADED' || err.code === 'TOOLEXEC_ERR_SHUTTING_DOWN') {
        if (!reply.hasHeader('retry-after')) reply.header('retry-after', '1');
      }
      return reply.status(err.statusCode).send(err.toBody());
    }
    const fe = err as FastifyError;
    const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
    if (mapped) {
      const e = new ToolexecError(mapped, fe.message);
      return reply.status(e.statusCode).send(e.toBody());
    }
    // The database refusing a write (full, read-only, I/O) is not the caller's
    // fault, nor a bug: 503 with a code, and /readyz says the same.
    if (typeof fe.code === 'string' && fe.code.startsWith('SQLITE_') && !fe.code.startsWith('SQLITE_CONSTRAINT')) {
      req.log.error({ err }, 'storage failure');
      const e = new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `The database did not take the write (${fe.code}); retry later`);
      reply.header('retry-after', '5');
      return reply.status(503).send(e.toBody());
    }
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      if (fe.statusCode === 429) {
        const e = new ToolexecError('TOOLEXEC_ERR_RATE_LIMITED', fe.message);
        return reply.status(429).send(e.toBody());
      }
      const e = new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', fe.message);
      return reply.status(fe.statusCode).send(e.toBody());
    }
    req.log.error({ err }, 'unhandled error');
    const e = new ToolexecError('TOOLEXEC_ERR_INTERNAL');
    return reply.status(500).send(e.toBody());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new ToolexecError('TOOLEXEC_ERR_ROUTE_NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`);
    return reply.status(404).send(e.toBody());
  });
}
