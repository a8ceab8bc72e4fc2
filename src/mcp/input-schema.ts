/**
 * An MCP tool's input JSON Schema, compiled once with ajv when the tool is
 * listed, and wrapped as the zod schema the contract requires: step 2 of the
 * pipeline runs the compiled validator, and ajv's errors come back as zod
 * issues with paths, so the model reads "The required parameter `a` is
 * missing" exactly as for a built-in tool.
 *
 * The schema comes from a server, so it is bounded before ajv sees it: at
 * most MAX_SCHEMA_CHARS of JSON and MAX_SCHEMA_DEPTH levels; a compile error
 * (unresolvable $ref, unknown dialect construct) makes the tool unusable and
 * reported, never a crash. Regular expressions from the schema that nest
 * quantifiers (catastrophic backtracking) are not run here: the server still
 * validates its own input, and toolexec's event loop is not a hostile
 * schema's to block.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import type { ToolInput } from '../tool/types.js';
import { isPlainObject } from '../util/object.js';

export const MAX_SCHEMA_CHARS = 128 * 1024;
export const MAX_SCHEMA_DEPTH = 32;
/** Issues reported per failed parse; past this the model gets the first ones. */
const MAX_ISSUES = 20;
const MAX_PATTERN_CHARS = 2000;
const BRACES = /^\{(\d+)(,(\d*))?\}/;

export type CompiledSchema =
  | { ok: true; jsonSchema: Record<string, unknown>; validate: ValidateFunction; zod: z.ZodType<ToolInput> }
  | { ok: false; error: string };

function depthExceeds(v: unknown, max: number, depth = 0): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (depth >= max) return true;
  if (Array.isArray(v)) return v.some((x) => depthExceeds(x, max, depth + 1));
  for (const x of Object.values(v as Record<string, unknown>)) if (depthExceeds(x, max, depth + 1)) return true;
  return false;
}

/**
 * Whether a pattern nests quantifiers ((a+)+, (\w*)*, (x{2,})+): the shape
 * that backtracks exponentially. A scan, not a parser: escapes and character
 * classes are skipped, groups are tracked on a stack.
 */
export function isRiskyPattern(p: string): boolean {
  if (p.length > MAX_PATTERN_CHARS) return true;
  const stack: boolean[] = [];
  let lastGroupQuantified = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      if (/[1-9k]/.test(p[i + 1] ?? '')) return true; // backreferences
      i++;
      lastGroupQuantified = false;
      continue;
    }
    if (c === '[') {
      for (i++; i < p.length && p[i] !== ']'; i++) if (p[i] === '\\') i++;
      lastGroupQuantified = false;
      continue;
    }
    if (c === '(') {
      stack.push(false);
      lastGroupQuantified = false;
      continue;
    }
    if (c === ')') {
      const inner = stack.pop() ?? false;
      lastGroupQuantified = inner;
      if (inner && stack.length > 0) stack[stack.length - 1] = true;
      continue;
    }
    let quant = c === '*' || c === '+';
    if (c === '{') {
      const m = BRACES.exec(p.slice(i, i + 24));
      // {n,} and {n,m} with m > 1 repeat; {0,1} and {1} do not.
      if (m) quant = m[2] === undefined ? Number(m[1]) > 1 : m[3] === '' || Number(m[3]) > 1;
    }
    if (quant) {
      if (lastGroupQuantified) return true;
      if (stack.length > 0) stack[stack.length - 1] = true;
    }
    if (c !== '?') lastGroupQuantified = false;
  }
  return false;
}

const ACCEPT_ALL = { test: () => true };

/** ajv's RegExp engine: risky patterns are not run; patterns JS rejects in unicode mode are retried without it. */
const safeRegExp = Object.assign(
  (pattern: string, flags: string): { test(s: string): boolean } => {
    if (isRiskyPattern(pattern)) return ACCEPT_ALL;
    try {
      return new RegExp(pattern, flags);
    } catch {
      try {
        return new RegExp(pattern, flags.replace('u', ''));
      } catch {
        // A dialect JS cannot read (PCRE named groups, …): the server checks it.
        return ACCEPT_ALL;
      }
    }
  },
  { code: 'toolexecSafeRegExp' },
);

const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateSchema: false,
  validateFormats: false,
  // Two tools declaring the same $id must not collide in a shared instance.
  addUsedSchema: false,
  logger: false,
  code: { regExp: safeRegExp },
};

/** One compiler per listing: its caches are dropped with it when the server's tools are listed again. */
export class SchemaCompiler {
  private draft7: Ajv | undefined;
  private draft2020: Ajv2020 | undefined;

  private engineFor(schema: Record<string, unknown>): Ajv | Ajv2020 {
    const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
    if (/draft-0[4-7]/.test(dialect)) return (this.draft7 ??= new Ajv(AJV_OPTIONS));
    return (this.draft2020 ??= new Ajv2020(AJV_OPTIONS));
  }

  compile(raw: unknown): CompiledSchema {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, error: 'its inputSchema is not a JSON object' };
    let text: string;
    try {
      text = JSON.stringify(raw);
    } catch {
      return { ok: false, error: 'its inputSchema cannot be serialised' };
    }
    if (text.length > MAX_SCHEMA_CHARS) {
      return { ok: false, error: `its inputSchema is ${text.length} characters of JSON; at most ${MAX_SCHEMA_CHARS} are accepted` };
    }
    if (depthExceeds(raw, MAX_SCHEMA_DEPTH)) return { ok: false, error: `its inputSchema is nested deeper than ${MAX_SCHEMA_DEPTH} levels` };
    // A private copy: the server's object is not ours to keep, and ajv may annotate what it compiles.
    const schema = JSON.parse(text) as Record<string, unknown>;
    if (schema.type !== undefined && schema.type !== 'object') {
      return { ok: false, error: `its inputSchema describes ${JSON.stringify(schema.type)}, not an object` };
    }
    let validate: ValidateFunction;
    try {
      const forAjv = { ...schema };
      delete forAjv.$schema;
      validate = this.engineFor(schema).compile(forAjv);
    } catch (e) {
      return { ok: false, error: `its inputSchema does not compile: ${(e as Error).message.slice(0, 300)}` };
    }
    const jsonSchema = schema.type === undefined ? { type: 'object', ...schema } : schema;
    return { ok: true, jsonSchema, validate, zod: zodForValidator(validate) };
  }
}

/** A JSON pointer as a path of keys and indices, read against the value it points into. */
function pathOf(pointer: string, root: unknown): (string | number)[] {
  if (pointer === '') return [];
  const out: (string | number)[] = [];
  let cur: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur) && /^\d+$/.test(key)) {
      out.push(Number(key));
      cur = cur[Number(key)];
    } else {
      out.push(key);
      cur = isPlainObject(cur) ? cur[key] : undefined;
    }
  }
  return out;
}

function expectedOf(e: ErrorObject): string {
  const t = (e.params as { type?: unknown }).type;
  if (Array.isArray(t)) return t.join(' | ');
  return typeof t === 'string' ? t : 'value';
}

function propertyType(e: ErrorObject, prop: string): string {
  const props = (e.parentSchema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
  const t = props?.[prop]?.type;
  if (Array.isArray(t)) return t.join(' | ');
  return typeof t === 'string' ? t : 'value';
}

type Issue = Parameters<z.core.$RefinementCtx['addIssue']>[0];

/** ajv errors as zod issues, in the codes step 2's formatter words for a model. */
export function issuesOf(errors: readonly ErrorObject[], input: unknown): Issue[] {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (issues.length >= MAX_ISSUES) break;
    const path = pathOf(e.instancePath, input);
    let issue: Issue;
    if (e.keyword === 'required') {
      const prop = String((e.params as { missingProperty?: unknown }).missingProperty);
      issue = { code: 'invalid_type', expected: propertyType(e, prop), path: [...path, prop], message: `must have required property '${prop}'` } as Issue;
    } else if (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties') {
      const p = e.params as { additionalProperty?: unknown; unevaluatedProperty?: unknown };
      const key = String(p.additionalProperty ?? p.unevaluatedProperty);
      issue = { code: 'unrecognized_keys', keys: [key], path, message: `unexpected property '${key}'` } as Issue;
    } else if (e.keyword === 'type') {
      issue = { code: 'invalid_type', expected: expectedOf(e), path, message: e.message ?? 'wrong type' } as Issue;
    } else {
      issue = { code: 'custom', path, message: e.message ?? `fails ${e.keyword}` } as Issue;
    }
    // anyOf branches repeat the same complaint; once is enough.
    const key = JSON.stringify([(issue as { code: string }).code, path, (issue as { message?: string }).message]);
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

export function zodForValidator(validate: ValidateFunction): z.ZodType<ToolInput> {
  return z
    .custom<ToolInput>(isPlainObject, { message: 'The input must be a JSON object' })
    .superRefine((value, ctx) => {
      if (validate(value)) return;
      for (const issue of issuesOf(validate.errors ?? [], value)) ctx.addIssue(issue);
    });
}
