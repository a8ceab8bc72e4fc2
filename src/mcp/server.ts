/**
 * toolexec's tool pool as an MCP server: tools/list and tools/call, through
 * the same pipeline as POST /execute.
 *
 * Listing: every tool of the session's mode-aware view is listed with its
 * full schema, deferred ones included, because an MCP client has no other way
 * to learn a schema (ToolSearch answers with `tool_reference` blocks, which
 * MCP has no content type for). Deferral travels as hints in `_meta`, in the
 * keys Claude Code reads from MCP servers: a tool toolexec would not defer
 * carries `"anthropic/alwaysLoad": true`, so a Claude Code client defers
 * exactly what toolexec defers; `"anthropic/searchHint"` carries the hint.
 *
 * Calling: the toolexec session is `_meta.session_id` of the request when
 * given, else the MCP session id; `_meta.tool_use_id` makes a call
 * idempotent as on POST /execute (a repeat returns the first outcome), else
 * each call gets a fresh id. Progress reaches the client as
 * notifications/progress when it sent a progressToken; the result carries the
 * execution's id, status and error class in `_meta["toolexec/execution"]`.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, McpError, type CallToolResult, type ListToolsResult, type Tool as McpToolDef } from '@modelcontextprotocol/sdk/types.js';
import { isToolexecError, type ToolexecError } from '../errors.js';
import { isDeferred, type ToolPool } from '../pool/pool.js';
import type { PermissionMode } from '../config/schema.js';
import type { Services } from '../services.js';
import type { AnyTool } from '../tool/types.js';
import { mcpAnnotationsOf } from './mcp-tool.js';
import { blockToCallResult } from './results.js';
import { idProblem } from '../util/text.js';

const MAX_ID_CHARS = 256;

export interface ProgressNote {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

export interface CallContext {
  /** The MCP session, the default toolexec session. */
  mcpSessionId: string;
  actor: string | null;
  signal: AbortSignal;
  /** Set when the client asked for progress. */
  onProgress?: ((p: ProgressNote) => void) | undefined;
}

function metaString(meta: unknown, key: string): string | undefined {
  if (meta === null || typeof meta !== 'object') return undefined;
  const v = (meta as Record<string, unknown>)[key];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function definition(t: AnyTool): McpToolDef {
  const def: McpToolDef = { name: t.name, description: t.description, inputSchema: t.inputJSONSchema as McpToolDef['inputSchema'] };
  const annotations = mcpAnnotationsOf(t);
  if (annotations && Object.keys(annotations).length > 0) def.annotations = annotations;
  const meta: Record<string, unknown> = {};
  if (!isDeferred(t)) meta['anthropic/alwaysLoad'] = true;
  if (t.searchHint) meta['anthropic/searchHint'] = t.searchHint;
  if (Object.keys(meta).length > 0) def._meta = meta;
  return def;
}

export class PoolMcpServer {
  /** Listings per pool and view; a new pool (MCP tools changed) starts afresh. */
  private listings = new WeakMap<ToolPool, Map<string, ListToolsResult>>();

  constructor(private readonly svc: Services) {}

  /** The toolexec session a request runs in. */
  sessionIdFor(meta: unknown, mcpSessionId: string): string {
    const s = metaString(meta, 'session_id') ?? mcpSessionId;
    if (s.length > MAX_ID_CHARS) throw new McpError(ErrorCode.InvalidParams, `_meta.session_id is longer than ${MAX_ID_CHARS} characters`);
    const issue = idProblem(s);
    if (issue !== undefined) throw new McpError(ErrorCode.InvalidParams, `_meta.session_id ${issue}`);
    return s;
  }

  listTools(meta: unknown, mcpSessionId: string): ListToolsResult {
    const mode: PermissionMode = this.svc.sessions.get(this.sessionIdFor(meta, mcpSessionId)).mode;
    const pool = this.svc.pool();
    let byView = this.listings.get(pool);
    if (!byView) {
      byView = new Map();
      this.listings.set(pool, byView);
    }
    const key = mode === 'plan' || mode === 'dontAsk' ? mode : 'all';
    let listing = byView.get(key);
    if (!listing) {
      listing = { tools: pool.view(mode).map(definition) };
      byView.set(key, listing);
    }
    return listing;
  }

  async callTool(params: { name: string; arguments?: Record<string, unknown> | undefined; _meta?: unknown }, ctx: CallContext): Promise<CallToolResult> {
    try {
      return await this.runCall(params, ctx);
    } catch (e) {
      throw isToolexecError(e) ? asMcpError(e) : e;
    }
  }

  private async runCall(params: { name: string; arguments?: Record<string, unknown> | undefined; _meta?: unknown }, ctx: CallContext): Promise<CallToolResult> {
    const sessionId = this.sessionIdFor(params._meta, ctx.mcpSessionId);
    const toolUseId = metaString(params._meta, 'tool_use_id') ?? `mcp_${randomUUID().replace(/-/g, '')}`;
    if (toolUseId.length > MAX_ID_CHARS) throw new McpError(ErrorCode.InvalidParams, `_meta.tool_use_id is longer than ${MAX_ID_CHARS} characters`);
    const issue = idProblem(toolUseId);
    if (issue !== undefined) throw new McpError(ErrorCode.InvalidParams, `_meta.tool_use_id ${issue}`);
    const session = await this.svc.sessions.ready(sessionId);
    const use = { id: toolUseId, name: params.name, input: params.arguments ?? {}, format: 'anthropic' as const };
    const [item] = this.svc.executor.start(session, [use], ctx.actor, ctx.signal);
    if (!item) throw new McpError(ErrorCode.InternalError, 'the call was not started');

    let unsubscribe: (() => void) | undefined;
    if (ctx.onProgress && !item.replayed) {
      const send = ctx.onProgress;
      let count = 0;
      unsubscribe = this.svc.registry.subscribe((e) => {
        if (e.type !== 'execution.progress' || e.call.id !== item.executionId) return;
        // MCP progress must grow; a tool that reports only messages still counts up.
        count = typeof e.progress.progress === 'number' && e.progress.progress > count ? e.progress.progress : count + 1;
        send({ progress: count, total: e.progress.total, message: e.progress.message });
      });
    }
    try {
      const { block, summary } = await item.done;
      return blockToCallResult(block, {
        'toolexec/execution': {
          id: summary.id,
          session_id: summary.session_id,
          tool_use_id: summary.tool_use_id,
          status: summary.status,
          error_class: summary.error_class,
          result_id: summary.result_id,
          ...(summary.replayed ? { replayed: true } : {}),
        },
      });
    } finally {
      unsubscribe?.();
    }
  }
}

/**
 * A refusal of the call as a JSON-RPC error: the caller's fault (a 4xx, such
 * as a _meta.tool_use_id reused for another call) is Invalid params, ours or
 * the moment's (overloaded, storage) Internal error; data carries the code
 * and details an HTTP caller reads in the error envelope. Thrown as it was,
 * the SDK made every one of them -32603 without its code.
 */
function asMcpError(e: ToolexecError): McpError {
  const data = e.details === undefined ? { code: e.code, status: e.statusCode } : { code: e.code, status: e.statusCode, details: e.details };
  return new McpError(e.statusCode < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, e.message, data);
}
