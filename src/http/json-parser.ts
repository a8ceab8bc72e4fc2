/**
 * The JSON body parser: the body size limit is Fastify's; before parsing, a
 * single pass rejects bodies nested deeper than the limit (a deeply nested
 * body costs the parser and every later walk over it), and prototype
 * poisoning keys are refused as Fastify does by default.
 */
import type { FastifyInstance } from 'fastify';
import { ToolexecError } from '../errors.js';

/** Maximum nesting depth of `[` and `{` outside strings. */
export function jsonDepthExceeds(text: string, max: number): boolean {
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

export function installJsonParser(app: FastifyInstance, maxDepth: number): void {
  const defaultParser = app.getDefaultJsonParser('error', 'error');
  // JSON only: any other body is a 415 with a code, not a string a route has to reject.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      done(new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', 'The request body is empty; send a JSON object'), undefined);
      return;
    }
    if (jsonDepthExceeds(text, maxDepth)) {
      done(new ToolexecError('TOOLEXEC_ERR_REQUEST_TOO_DEEP', `The JSON body is nested deeper than ${maxDepth} levels`), undefined);
      return;
    }
    defaultParser(req, text, (err, value) => {
      if (err) {
        done(new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', parses(text) ? POISONED : `The body is not valid JSON: ${err.message}`), undefined);
        return;
      }
      done(null, value);
    });
  });
}
