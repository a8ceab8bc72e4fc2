/**
 * Validation at the HTTP boundary: a request part parsed with its zod schema,
 * or a 400 TOOLEXEC_ERR_REQUEST_INVALID naming the first field at fault.
 */
import { z } from 'zod';
import { ToolexecError } from '../errors.js';

/**
 * A zod issue in words a client acts on: zod's "Invalid input: expected
 * string, received undefined" (or "expected nonoptional" for a field of any
 * type) says that the field is missing, so it says "required".
 */
export function issueText(i: z.core.$ZodIssue): string {
  const m = i.message.replace(/^(Invalid input|Invalid option):\s*/, '');
  if (/received undefined$/.test(m)) {
    const expected = /^expected (\w+),/.exec(m)?.[1];
    return expected === undefined || expected === 'nonoptional' ? 'required' : `required (a ${expected})`;
  }
  return m;
}

export function invalidRequest(e: z.ZodError, what: string): ToolexecError {
  const i = e.issues[0];
  return new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', i ? `${i.path.join('.') || what}: ${issueText(i)}` : `invalid ${what}`);
}

/** `value` parsed by `schema`, or a 400 that names the field (`what` when the whole part is wrong). */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, what: 'query' | 'body' | 'params'): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidRequest(r.error, what);
  return r.data;
}

/**
 * The query of a listing with filters: a parameter it does not know is a 400
 * naming the ones it takes. Ignored, a filter another listing has (`since` on
 * GET /executions) or a misspelt one (`sesion_id`) answered the whole,
 * unfiltered history as if it were the filtered one.
 */
export function listingQuery<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys' ? `unknown parameter${iss.keys.length > 1 ? 's' : ''} ${iss.keys.join(', ')}; this listing takes ${known}` : undefined,
  });
}
