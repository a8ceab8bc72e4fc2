/**
 * zod → JSON Schema, once per tool, when its schema is first read
 * (build-tool.ts). zod 4's own converter is used (zod-to-json-schema 3.x
 * silently returns `{}` for zod 4 objects); a test checks that every tool's
 * schema lists its properties.
 */
import { z } from 'zod';

const SAFE_MAX = Number.MAX_SAFE_INTEGER;
const SAFE_MIN = Number.MIN_SAFE_INTEGER;

// zod adds ±MAX_SAFE_INTEGER bounds to every integer; they are noise to a model
// and cost tokens in every request.
function strip(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) strip(n);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (o.maximum === SAFE_MAX) delete o.maximum;
  if (o.minimum === SAFE_MIN) delete o.minimum;
  for (const v of Object.values(o)) strip(v);
}

export function toJSONSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  strip(out);
  return out;
}
