/**
 * GET /results/:id: a persisted result, whole, streamed chunk by chunk from
 * SQLite with its Content-Length; a single `Range: bytes=` range is served as
 * 206 (multiple ranges are answered whole, as RFC 9110 allows), unless an
 * If-Range names another ETag; an If-None-Match holding its ETag gets 304.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ToolexecError } from '../../errors.js';
import type { Services } from '../../services.js';
import { parseRequest } from '../validate.js';

const IdParams = z.object({ id: z.string().min(1).max(256) });

/** [start, end] inclusive, undefined when the header does not apply, or 'unsatisfiable'. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined | 'unsatisfiable' {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const [, a, b] = m;
  if (a === '' && b === '') return undefined;
  let start: number;
  let end: number;
  if (a === '') {
    const n = Number(b);
    if (n === 0) return 'unsatisfiable';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * The Range header to honour: none when an If-Range is not this result's
 * ETag (RFC 9110 §13.1.5: the client's copy is of something else, so it must
 * get the whole; a date never matches, as no Last-Modified is sent).
 */
function rangeHeader(range: string | string[] | undefined, ifRange: string | string[] | undefined, etag: string): string | undefined {
  if (typeof range !== 'string') return undefined;
  if (ifRange !== undefined && (typeof ifRange !== 'string' || ifRange.trim() !== etag)) return undefined;
  return range;
}

export function resultRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/results/:id', { config: { scope: 'read' } }, async (req, reply) => {
    const raw = parseRequest(IdParams, req.params, 'params').id;
    const id = raw.startsWith('result://') ? raw.slice('result://'.length) : raw;
    const meta = svc.results.meta(id);
    // A size that is not one (a damaged row) would go out as a Content-Length no client can read.
    if (!meta || meta.complete !== 1 || !Number.isSafeInteger(meta.total_bytes) || meta.total_bytes < 0) {
      throw new ToolexecError('TOOLEXEC_ERR_RESULT_NOT_FOUND', `No stored result ${id}`);
    }
    const size = meta.total_bytes;
    const etag = `"${meta.id}"`;
    reply.header('accept-ranges', 'bytes');
    reply.header('content-type', meta.media_type);
    reply.header('etag', etag);
    // A stored result never changes: the ETag a client holds is this one or names another result.
    const inm = req.headers['if-none-match'];
    if (typeof inm === 'string' && (inm.trim() === '*' || inm.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`))) {
      return reply.status(304).send();
    }
    const range = parseRange(rangeHeader(req.headers.range, req.headers['if-range'], etag), size);
    if (range === 'unsatisfiable') {
      reply.header('content-range', `bytes */${size}`);
      throw new ToolexecError('TOOLEXEC_ERR_RANGE_NOT_SATISFIABLE', `The result has ${size} bytes`);
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    if (range) {
      reply.status(206);
      reply.header('content-range', `bytes ${start}-${end}/${size}`);
    }
    reply.header('content-length', String(size === 0 ? 0 : end - start + 1));
    if (size === 0) return reply.send('');
    return reply.send(Readable.from(exactly(svc.results.bytes(id, start, end), end - start + 1, id)));
  });
}

/**
 * The chunks, failing if they end before `length` bytes: a result deleted
 * while it is streamed (retention) would otherwise end the response short of
 * its Content-Length, and a keep-alive client would wait for the rest until
 * the socket timed out. Failing the stream closes the connection instead.
 */
function* exactly(chunks: Iterable<Buffer>, length: number, id: string): Generator<Buffer> {
  let sent = 0;
  for (const c of chunks) {
    sent += c.length;
    yield c;
  }
  // Before the first byte this is the answer (a 404: the result went between its row and its chunks); after, the connection is cut.
  if (sent < length) throw new ToolexecError('TOOLEXEC_ERR_RESULT_NOT_FOUND', `The stored result ${id} was deleted while it was being sent (${sent} of ${length} bytes)`);
}
