/**
 * The JSON body parser: the body size limit is Fastify's; before parsing, a
 * single pass rejects bodies nested deeper than the limit (a deeply nested
 * body costs the parser and every later walk over it), and prototype
 * poisoning keys are refused as Fastify does by default.
 *
 * Bodies are UTF-8 JSON as RFC 8259 asks, and nothing else: toolexec does not
 * decompress, so a body with a Content-Encoding other than identity is a 415
 * before it is read (it was read as text and called "not valid JSON", or, for
 * an encoding the bytes did not follow, parsed as if the header were absent);
 * a charset other than UTF-8 is a 415 too rather than a silent UTF-8 decoding
 * of, say, UTF-16; and bytes that are not valid UTF-8 are a 400, not U+FFFD
 * substituted into ids, paths and commands.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ToolexecError } from '../errors.js';

/**
 * Whether the text holds more than `max` opening brackets in all, strings
 * included. Each level of nesting opens with one, so a text with no more
 * than `max` of them cannot be nested deeper; indexOf finds them far faster
 * than a loop over every character walks the text (a 120-character
 * /execute body 0.23-0.41 µs against 1.4-3.1 µs, a 66 KB Write body 4-15 µs
 * against 710-820 µs).
 */
function bracketsExceed(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return true;
  return false;
}

/** Maximum nesting depth of `[` and `{` outside strings. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  if (!bracketsExceed(text, max)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** What a body that is valid JSON but holds a prototype-poisoning key is told. */
export const POISONED =
  'The body holds a "__proto__" key, or a "constructor" key with a "prototype" inside, which is refused against prototype pollution; rename that key';

/** Whether the text is JSON at all (asked only once the safe parser has refused it). */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Marks an error as the body's (read, decoded or parsed), for routes that answer those in their own protocol (/mcp: JSON-RPC). */
const BODY_ERROR = Symbol('toolexec.bodyError');

function bodyError(code: 'TOOLEXEC_ERR_REQUEST_INVALID' | 'TOOLEXEC_ERR_REQUEST_TOO_DEEP' | 'TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA', message: string): ToolexecError {
  return Object.assign(new ToolexecError(code, message), { [BODY_ERROR]: true });
}

/** Whether an error is about the request body: ours from this parser, or Fastify's while reading it (size, media type, length). */
export function isBodyError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { [BODY_ERROR]?: boolean })[BODY_ERROR] === true) return true;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('FST_ERR_CTP_');
}

function hasBody(req: FastifyRequest): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/** The charset parameter of a Content-Type, lower-cased and unquoted, if any. */
export function charsetOf(contentType: string): string | undefined {
  const m = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType);
  return m ? m[2]!.toLowerCase() : undefined;
}

/** Why a body cannot be read as sent (its encoding or charset), or undefined. */
export function bodyEncodingError(req: FastifyRequest): ToolexecError | undefined {
  if (!hasBody(req)) return undefined;
  const enc = req.headers['content-encoding'];
  if (enc !== undefined) {
    const codings = enc
      .split(',')
      .map((c) => c.trim().toLowerCase())
      .filter((c) => c.length > 0);
    const other = codings.find((c) => c !== 'identity');
    if (other !== undefined) {
      return bodyError('TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA',
        `Content-Encoding "${other.slice(0, 64)}" is not supported: toolexec does not decompress request bodies; send the JSON uncompressed (or Content-Encoding: identity)`,
      );
    }
  }
  const ct = req.headers['content-type'];
  const charset = typeof ct === 'string' ? charsetOf(ct) : undefined;
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return bodyError('TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA',
      `The body's charset is "${charset.slice(0, 64)}"; JSON bodies must be UTF-8 (send charset=utf-8, or no charset)`,
    );
  }
  return undefined;
}

export function installJsonParser(app: FastifyInstance, maxDepth: number): void {
  const defaultParser = app.getDefaultJsonParser('error', 'error');
  // Before the body is read: a compressed or non-UTF-8 body is refused whole, not parsed as garbage.
  app.addHook('preParsing', (req, _reply, payload, done) => {
    const e = bodyEncodingError(req);
    if (e) done(e);
    else done(null, payload);
  });
  // JSON only: any other body is a 415 with a code, not a string a route has to reject.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const buf = body as Buffer;
    if (!isUtf8(buf)) {
      done(bodyError('TOOLEXEC_ERR_REQUEST_INVALID', 'The body is not valid UTF-8; JSON bodies must be UTF-8'), undefined);
      return;
    }
    const text = buf.toString('utf8');
    if (text.length === 0) {
      done(bodyError('TOOLEXEC_ERR_REQUEST_INVALID', 'The request body is empty; send a JSON object'), undefined);
      return;
    }
    if (jsonDepthExceeds(text, maxDepth)) {
      done(bodyError('TOOLEXEC_ERR_REQUEST_TOO_DEEP', `The JSON body is nested deeper than ${maxDepth} levels`), undefined);
      return;
    }
    defaultParser(req, text, (err, value) => {
      if (err) {
        done(bodyError('TOOLEXEC_ERR_REQUEST_INVALID', parses(text) ? POISONED : `The body is not valid JSON: ${err.message}`), undefined);
        return;
      }
      done(null, value);
    });
  });
}
