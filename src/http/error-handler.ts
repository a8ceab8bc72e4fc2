/**
 * Three kinds of failure, kept apart: the caller's (4xx with a code), ours
 * (5xx, logged with the stack, a body without stack or secret), and the
 * tool's (never here: a `tool_result` with `is_error`).
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
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

/** What Node's HTTP parser reports, for the few errors a client can act on (the rest say the parser's own reason). */
const PARSE_ERRORS: Record<string, string> = {
  HPE_INVALID_METHOD: 'The request line is malformed: unknown method',
  HPE_INVALID_URL: 'The request line is malformed: invalid request target',
  HPE_INVALID_VERSION: 'The request line is malformed: invalid HTTP version',
  HPE_INVALID_CONSTANT: 'The request line is malformed',
  HPE_INVALID_HEADER_TOKEN: 'A header line is malformed (no colon, or a character not allowed in a header name or value)',
  HPE_INVALID_CHUNK_SIZE: 'The chunked body is malformed: invalid chunk size',
  HPE_INVALID_TRANSFER_ENCODING: 'The Transfer-Encoding header is not valid',
  HPE_INVALID_CONTENT_LENGTH: 'The Content-Length header is not valid',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding: chunked are both set; send one',
};

/**
 * The server's 'clientError' (Fastify's `clientErrorHandler`): what Node's
 * HTTP parser refuses before any route runs (a malformed request line, a
 * header with no colon or a control byte, a bad chunk size, Content-Length
 * with Transfer-Encoding, headers past the size limit, a request past
 * requestTimeout) is answered in the contract's error shape, written raw to
 * the socket, which is then closed: after a parse error the stream cannot be
 * trusted for another request. Never throws (it runs in the socket's error
 * event).
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException & { reason?: string }, socket: Socket): void {
  try {
    // A reset, or a socket already gone: nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let e: ToolexecError;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') e = new ToolexecError('TOOLEXEC_ERR_REQUEST_TIMEOUT');
    else if (err.code === 'HPE_HEADER_OVERFLOW') e = new ToolexecError('TOOLEXEC_ERR_REQUEST_HEADERS_TOO_LARGE');
    else {
      const known = err.code ? PARSE_ERRORS[err.code] : undefined;
      const reason = typeof err.reason === 'string' && err.reason.length > 0 && err.reason.length < 200 ? err.reason : undefined;
      e = new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', known ?? `The request is not valid HTTP${reason ? `: ${reason}` : ''}`);
    }
    this.log.debug({ err: { code: err.code, message: err.message } }, `client error ${e.statusCode}`);
    answerRaw(socket, e);
  } catch {
    try {
      socket.destroy();
    } catch {
      /* nothing more to do */
    }
  }
}

/**
 * Writes an error in the contract's shape straight to a socket no response is
 * using, then closes it: for requests refused before (or outside) Fastify's
 * reply, where the stream cannot be trusted for another request.
 */
function answerRaw(socket: Duplex, e: ToolexecError, headers = ''): void {
  // As Node does: answer only when no response is under way on this socket
  // (a response already started would be corrupted by another status line).
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(e.toBody());
    socket.write(
      `HTTP/1.1 ${e.statusCode} ${STATUS_CODES[e.statusCode] ?? 'Error'}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers}connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * The websocket server's 'wsClientError': an upgrade to /ws that passed auth
 * but that the ws library refuses (no or a malformed Sec-WebSocket-Key, an
 * unsupported Sec-WebSocket-Version, a bad subprotocol or extension header).
 * Left to the library, it is answered with a text/html body; here it is a 400
 * TOOLEXEC_ERR_REQUEST_INVALID like every other error, naming the header.
 */
export function wsClientErrorHandler(err: Error, socket: Duplex): void {
  try {
    const e = new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', `The websocket handshake is not valid: ${err.message}`);
    answerRaw(socket, e, /Sec-WebSocket-Version/.test(err.message) ? 'sec-websocket-version: 13, 8\r\n' : '');
  } catch {
    socket.destroy();
  }
}

/**
 * Headers of a body that was never sent. To stream, Fastify copies the
 * route's headers onto the raw response; a stream that fails before its
 * first byte comes here with them still there, and its text/plain
 * Content-Type made the JSON error unsendable (Fastify's own 500 went out
 * instead, in another shape), with the Content-Range of the bytes promised.
 */
const BODY_HEADERS = ['content-type', 'content-length', 'content-range', 'content-encoding', 'etag', 'last-modified'];

/** The service's error handler: every error as `{error:{code,message}}` with its status. */
export function handleError(err: FastifyError | ToolexecError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  // Only a stream's headers are on the raw response (a 416 thrown by a route keeps its Content-Range: bytes */size).
  if (!reply.raw.headersSent && reply.raw.hasHeader('content-type')) {
    for (const h of BODY_HEADERS) {
      reply.removeHeader(h);
      reply.raw.removeHeader(h);
    }
  }
  {
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
      // Fastify says only "Unsupported Media Type"; what a client (curl -d sends a form) needs is the fix.
      const message =
        fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? `The body's Content-Type is ${typeof req.headers['content-type'] === 'string' ? `"${req.headers['content-type'].slice(0, 100)}"` : 'missing'}; send JSON with the header content-type: application/json`
          : fe.message;
      const e = new ToolexecError(mapped, message);
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
  }
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((req, reply) => {
    const e = new ToolexecError('TOOLEXEC_ERR_ROUTE_NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`);
    return reply.status(404).send(e.toBody());
  });
}
