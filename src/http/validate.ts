/**
 * Validation at the HTTP boundary: a request part parsed with its zod schema,
 * or a 400 TOOLEXEC_ERR_REQUEST_INVALID naming the first field at fault.
 */
import type { z } from 'zod';
import { ToolexecError } from '../errors.js';

export function invalidRequest(e: z.ZodError, what: string): ToolexecError {
  const i = e.issues[0];
  return new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', i ? `${i.path.join('.') || what}: ${i.message}` : `invalid ${what}`);
}

/** `value` parsed by `schema`, or a 400 that names the field (`what` when the whole part is wrong). */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, what: 'query' | 'body' | 'params'): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidRequest(r.error, what);
  return r.data;
}
