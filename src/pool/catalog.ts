/**
 * The catalog GET /tools serves, in Anthropic, OpenAI or MCP shape. Deferred
 * tools appear by name only (`deferred_tools`) unless `deferred=include`.
 * Built once per (pool, format, view) and cached with its ETag, a digest of the
 * body: the same configuration yields byte-identical bytes and the same ETag,
 * which keeps a model provider's prompt cache warm.
 */
import { createHash } from 'node:crypto';
import type { PermissionMode } from '../config/schema.js';
import type { AnyTool } from '../tool/types.js';
import { isDeferred, TOOL_SEARCH_NAME, type ToolPool } from './pool.js';
import { estimateTokensOfChars } from './tokens.js';

export type CatalogFormat = 'anthropic' | 'openai' | 'mcp';

export interface Catalog {
  /** The serialised body, ready to send. */
  json: string;
  etag: string;
}

export function toolDefinition(t: AnyTool, format: CatalogFormat, deferred: boolean): Record<string, unknown> {
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name: t.name, description: t.description, parameters: t.inputJSONSchema } };
    case 'mcp':
      return { name: t.name, description: t.description, inputSchema: t.inputJSONSchema };
    default:
      return deferred
        ? { name: t.name, description: t.description, input_schema: t.inputJSONSchema, defer_loading: true }
        : { name: t.name, description: t.description, input_schema: t.inputJSONSchema };
  }
}

export function buildCatalog(tools: readonly AnyTool[], format: CatalogFormat, includeDeferred: boolean): Catalog {
  const loaded: Record<string, unknown>[] = [];
  const deferredNames: string[] = [];
  // Token figures: everything loaded up front (no ToolSearch needed) against
  // what is sent with deferral (loaded definitions plus the deferred names).
  let fullChars = 0;
  let deferredChars = 0;
  for (const t of tools) {
    const d = isDeferred(t);
    const plain = JSON.stringify(toolDefinition(t, format, false));
    if (t.name !== TOOL_SEARCH_NAME) fullChars += plain.length;
    if (d) deferredChars += t.name.length + 1;
    else deferredChars += plain.length;
    if (d && !includeDeferred) deferredNames.push(t.name);
    else loaded.push(toolDefinition(t, format, d));
  }
  const content = {
    tools: loaded,
    deferred_tools: deferredNames,
    tokens: { full: estimateTokensOfChars(fullChars), deferred: estimateTokensOfChars(deferredChars) },
  };
  const etag = `"${createHash('sha256').update(JSON.stringify(content)).digest('base64url').slice(0, 27)}"`;
  return { json: JSON.stringify({ ...content, etag }), etag };
}

export class CatalogCache {
  private readonly cache = new Map<string, Catalog>();
  constructor(readonly pool: ToolPool) {}

  get(format: CatalogFormat, mode: PermissionMode, includeDeferred: boolean): Catalog {
    const key = `${format}|${mode === 'plan' || mode === 'dontAsk' ? mode : 'all'}|${includeDeferred ? 1 : 0}`;
    let c = this.cache.get(key);
    if (!c) {
      c = buildCatalog(this.pool.view(mode), format, includeDeferred);
      this.cache.set(key, c);
    }
    return c;
  }
}
