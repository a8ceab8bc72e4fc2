/**
 * Params of the requests toolexec's MCP server handles, checked before the
 * SDK sees them. The SDK parses a request with its zod schema inside the
 * handler wrapper and, when that fails, answers -32603 Internal error with
 * the ZodError's JSON dump as the message; a caller's bad params are
 * -32602 Invalid params in JSON-RPC, and the message should say what to fix.
 */
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '../util/object.js';

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

const SCHEMAS: Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }> = {
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
};

/** Why a request's params are not valid for its method, in words; undefined when they are (or the method is not ours to check). */
export function invalidRequestParams(message: unknown): string | undefined {
  if (!isPlainObject(message) || typeof message.method !== 'string' || message.id === undefined) return undefined;
  const { method, params } = message;
  if (params !== undefined && !isPlainObject(params)) return `${method}: params must be an object, not ${kind(params)}`;
  if (method === 'tools/call') {
    if (params === undefined) return 'tools/call: params is required: {"name": <tool name>, "arguments": {…}}';
    if (typeof params.name !== 'string') return `tools/call: params.name must be a string (the tool's name), not ${kind(params.name)}`;
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) {
      return `tools/call: params.arguments must be an object of the tool's arguments, not ${kind(params.arguments)}`;
    }
    if (params._meta !== undefined && !isPlainObject(params._meta)) return `tools/call: params._meta must be an object, not ${kind(params._meta)}`;
  }
  const schema = SCHEMAS[method];
  if (!schema) return undefined;
  const r = schema.safeParse(message);
  if (r.success || !r.error) return undefined;
  const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join('.') || '(message)'}: ${i.message}`);
  return `${method}: invalid params: ${issues.join('; ')}`;
}
