/**
 * The OpenAPI 3.1 document, generated from the route table below and the zod
 * schemas in schemas.ts. `npm run openapi:check` regenerates it and fails when
 * the committed openapi/openapi.json differs, or when a route the app
 * registers is not in this table (or the other way round).
 */
import { z } from 'zod';
import { ToolsQuery } from '../routes/tools.js';
import { ToolSearchQuery } from '../routes/tool-search.js';
import { ExecutionsQuery } from '../routes/executions.js';
import { AuditQuery } from '../routes/audit.js';
import { PermissionRequestsQuery } from '../routes/permissions.js';
import * as S from './schemas.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface RouteDoc {
  method: Method;
  /** Fastify style: /executions/:id */
  path: string;
  /** Scope the route needs; null = open; 'any' = any valid token. */
  scope: 'execute' | 'read' | 'approve' | 'admin' | 'any' | null;
  summary: string;
  description?: string;
  tag: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
}

const idParam = (what: string) => ({ description: `The ${what}'s id` });

const err = (description: string) => ({ description, schema: S.ErrorBody });
const STD_ERRORS = { 400: err('Malformed request'), 401: err('No token, or an invalid one'), 403: err('The token lacks the scope') };
/**
 * What any request with a body may be answered (Fastify reads a body on POST,
 * PATCH and DELETE whatever the route): added to every such route by
 * buildOpenApi() unless the route documents these statuses itself (/mcp does,
 * as JSON-RPC errors).
 */
export const BODY_ERRORS = {
  413: err('The body is larger than server.bodyLimitBytes'),
  415: err('The body is not application/json, its charset is not UTF-8, or it has a Content-Encoding (bodies are not decompressed)'),
};
const BODY_METHODS: ReadonlySet<Method> = new Set(['post', 'patch', 'delete']);
/** What every route but the probes may be answered once a graceful shutdown has begun (app.ts). */
const SHUTDOWN_ERROR = { 503: err('Shutting down: new requests are refused while running calls finish') };
/** What every route that needs a token may be answered when server.rateLimit is set (per token). */
const RATE_LIMITED = { 429: err('Rate limited (server.rateLimit): too many requests from this token in the window') };
const rpcErr = (description: string) => ({ description: `${description} (JSON-RPC error)`, schema: S.JsonRpcError });

/** What /mcp answers as the MCP SDK's transport does, beyond 400 and 404: JSON-RPC errors too. */
function mcpExtraErrors(method: 'get' | 'post' | 'delete'): RouteDoc['responses'] {
  const out: RouteDoc['responses'] = {};
  if (method === 'post') out[406] = rpcErr('Accept lacks application/json or text/event-stream');
  if (method === 'get') {
    out[406] = rpcErr('Accept lacks text/event-stream');
    out[409] = rpcErr('The session already has its server-to-client stream open');
  } else {
    out[413] = rpcErr('The body is larger than server.bodyLimitBytes');
    out[415] = rpcErr('The body is not application/json, its charset is not UTF-8, or it has a Content-Encoding');
  }
  return out;
}

export const ROUTE_DOCS: RouteDoc[] = [
  {
    method: 'get',
    path: '/tools',
    scope: 'execute',
    tag: 'tools',
    summary: 'The tool catalog',
    description:
      'Built-in tools first, then MCP tools, each sorted by name. Deferred tools are listed by name only unless deferred=include. ' +
      'The body is byte-identical for the same configuration; its ETag answers If-None-Match with 304.',
    query: ToolsQuery,
    responses: { 200: { description: 'The catalog', schema: S.Catalog }, 304: { description: 'Not modified' }, ...STD_ERRORS },
  },
  {
    method: 'get',
    path: '/tools/search',
    scope: 'execute',
    tag: 'tools',
    summary: 'What the ToolSearch tool returns: deferred tools matching a query, with their definitions',
    description: 'q takes select:A,B, an exact name, an mcp__server prefix, or keywords (+term = required).',
    query: ToolSearchQuery,
    responses: { 200: { description: 'The matches', schema: S.ToolSearchResult }, ...STD_ERRORS },
  },
  {
    method: 'post',
    path: '/execute',
    scope: 'execute',
    tag: 'execution',
    summary: 'Run a batch of tool uses',
    description:
      'Takes Anthropic tool_use blocks, OpenAI Chat Completions tool calls, OpenAI Responses function_call items, or a whole assistant message or content array. Answers tool_result blocks in request order (and, for OpenAI-shaped calls, messages in their API\'s shape). ' +
      'A tool failure is a tool_result with is_error, never an HTTP error. A repeated (session_id, tool_use id) is not run twice: the first outcome is returned, marked replayed. ' +
      'The repeat must be the same call (tool and input, key order aside): an id already used for another call of the session is refused with 409, and nothing of the request runs.',
    body: S.ExecuteRequestDoc,
    responses: {
      200: { description: 'The results', schema: S.ExecuteResponse },
      202: { description: 'Accepted (wait: false)', schema: S.ExecuteAccepted },
      ...STD_ERRORS,
      409: err('A tool_use id already names another call of this session (TOOLEXEC_ERR_TOOL_USE_ID_REUSED)'),
      429: err('Rate limited'),
      503: err('Overloaded, shutting down, or the database is not writable; retry after Retry-After'),
    },
  },
  {
    method: 'get',
    path: '/executions',
    scope: 'read',
    tag: 'execution',
    summary: 'List executions, newest first',
    query: ExecutionsQuery,
    responses: { 200: { description: 'A page', schema: S.ExecutionList }, ...STD_ERRORS },
  },
  {
    method: 'get',
    path: '/executions/:id',
    scope: 'read',
    tag: 'execution',
    summary: 'One execution: step timings, decision and its chain, hooks’ messages, result preview',
    responses: {
      200: { description: 'The execution', schema: S.ExecutionDetail },
      ...STD_ERRORS,
      404: err('No such execution'),
      503: err('It ran, but its record is not written yet (the database is not taking writes), or shutting down; retry later'),
    },
  },
  {
    method: 'post',
    path: '/executions/:id/cancel',
    scope: 'execute',
    tag: 'execution',
    summary: 'Abort a running call',
    responses: {
      202: { description: 'Cancelling', schema: S.CancelAccepted },
      ...STD_ERRORS,
      404: err('No such execution'),
      409: err('The execution is not running'),
    },
  },
  {
    method: 'get',
    path: '/results/:id',
    scope: 'read',
    tag: 'execution',
    summary: 'A persisted large result, whole (Range supported)',
    responses: {
      200: { description: 'The result', contentType: 'text/plain' },
      206: { description: 'A byte range of the result (whole, as 200, when If-Range names another ETag)', contentType: 'text/plain' },
      304: { description: 'Not modified: If-None-Match holds its ETag' },
      ...STD_ERRORS,
      404: err('No such result'),
      416: err('Range not satisfiable'),
    },
  },
  {
    method: 'get',
    path: '/audit',
    scope: 'read',
    tag: 'audit',
    summary: 'Permission decisions, newest first',
    query: AuditQuery,
    responses: { 200: { description: 'A page', schema: S.AuditList }, ...STD_ERRORS },
  },
  {
    method: 'get',
    path: '/permissions/requests',
    scope: 'read',
    tag: 'permissions',
    summary: 'Pending and recent permission requests',
    query: PermissionRequestsQuery,
    responses: { 200: { description: 'The requests', schema: S.PermissionRequestList }, ...STD_ERRORS },
  },
  {
    method: 'post',
    path: '/permissions/requests/:id',
    scope: 'approve',
    tag: 'permissions',
    summary: 'Answer a permission request (once)',
    body: S.PermissionAnswerDoc,
    responses: {
      200: { description: 'Answered', schema: S.PermissionAnswered },
      ...STD_ERRORS,
      400: err('Malformed answer, or an updated_input the tool cannot take (the request stays pending)'),
      404: err('No such request'),
      409: err('Already answered or expired'),
    },
  },
  {
    method: 'post',
    path: '/permissions/check',
    scope: 'read',
    tag: 'permissions',
    summary: 'Dry run: the decision and the chain of reasons, running nothing',
    body: S.CheckRequestDoc,
    responses: { 200: { description: 'The decision', schema: S.CheckResponse }, ...STD_ERRORS, 404: err('No such tool') },
  },
  {
    method: 'get',
    path: '/permissions/rules',
    scope: 'approve',
    tag: 'permissions',
    summary: 'Rules with their source (configured ones are read-only)',
    query: z.object({ session_id: z.string().optional() }),
    responses: { 200: { description: 'The rules', schema: S.RuleList }, ...STD_ERRORS },
  },
  {
    method: 'post',
    path: '/permissions/rules',
    scope: 'approve',
    tag: 'permissions',
    summary: 'Remember a rule for a session or always',
    body: S.RuleCreateDoc,
    responses: { 201: { description: 'Created', schema: S.RuleCreated }, ...STD_ERRORS },
  },
  {
    method: 'delete',
    path: '/permissions/rules/:id',
    scope: 'approve',
    tag: 'permissions',
    summary: 'Revoke a remembered rule',
    responses: { 204: { description: 'Revoked' }, ...STD_ERRORS, 404: err('No such rule'), 409: err('A configured rule') },
  },
  {
    method: 'get',
    path: '/sessions/:id',
    scope: 'read',
    tag: 'sessions',
    summary: 'A session’s mode and state',
    responses: { 200: { description: 'The session', schema: S.SessionBody }, ...STD_ERRORS, 404: err('No such session') },
  },
  {
    method: 'patch',
    path: '/sessions/:id',
    scope: 'approve',
    tag: 'sessions',
    summary: 'Change a session’s mode (bypassPermissions only when the configuration allows it)',
    body: S.SessionPatchDoc,
    responses: { 200: { description: 'The session', schema: S.SessionBody }, ...STD_ERRORS },
  },
  {
    method: 'get',
    path: '/mcp/servers',
    scope: 'read',
    tag: 'mcp',
    summary: 'Each configured MCP server: state, tool count, unusable tools, last error, name problems',
    responses: { 200: { description: 'The servers', schema: S.McpServerList }, ...STD_ERRORS },
  },
  {
    method: 'get',
    path: '/mcp/servers/:name',
    scope: 'read',
    tag: 'mcp',
    summary: 'One configured MCP server',
    responses: { 200: { description: 'The server', schema: S.McpServer }, ...STD_ERRORS, 404: err('No such server') },
  },
  ...(['post', 'get', 'delete'] as const).map(
    (method): RouteDoc => ({
      method,
      path: '/mcp',
      scope: 'execute',
      tag: 'mcp',
      summary: 'The tool pool as an MCP server (Streamable HTTP)',
      description:
        'The Model Context Protocol over Streamable HTTP (JSON-RPC 2.0): POST carries requests (initialize, tools/list, tools/call), GET opens the server-to-client stream, DELETE ends the session. ' +
        'tools/call runs through the same pipeline as POST /execute; the MCP session is the toolexec session unless _meta.session_id names one.',
      responses: {
        200: { description: 'A JSON-RPC answer (application/json or text/event-stream)', contentType: 'application/json' },
        202: { description: 'A notification or response accepted' },
        400: rpcErr('No session id, a body that is not JSON (-32700 Parse error), or a request the transport refuses'),
        401: err('No token, or an invalid one'),
        403: err('The token lacks the scope'),
        404: rpcErr('Unknown MCP session'),
        ...mcpExtraErrors(method),
      },
    }),
  ),
  {
    method: 'get',
    path: '/healthz',
    scope: null,
    tag: 'operations',
    summary: 'Liveness',
    responses: { 200: { description: 'Alive', schema: S.Health } },
  },
  {
    method: 'get',
    path: '/readyz',
    scope: null,
    tag: 'operations',
    summary: 'Readiness: the database takes writes; MCP servers marked required are connected',
    responses: {
      200: { description: 'Ready', schema: S.Readiness },
      503: { description: 'Not ready (the body says which check failed), or shutting down', schema: S.Readiness },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    scope: null,
    tag: 'operations',
    summary: 'Prometheus metrics',
    responses: { 200: { description: 'The Prometheus text format', contentType: 'text/plain' } },
  },
  {
    method: 'get',
    path: '/stats',
    scope: 'read',
    tag: 'operations',
    summary: 'Per tool: calls, errors by class, p50/p95 durations; decisions by reason',
    responses: { 200: { description: 'The statistics', schema: S.Stats }, ...STD_ERRORS },
  },
  {
    method: 'get',
    path: '/ws',
    scope: 'any',
    tag: 'events',
    summary: 'Websocket: execution events and permission requests',
    description:
      'Upgrade to a websocket. Token in the Authorization header or ?token=. Client frames: subscribe, unsubscribe, permission.respond, cancel, ping. ' +
      'Server frames: hello, execution.started, execution.progress, execution.finished, permission.request, permission.resolved, ack, pong, error.',
    responses: { 101: { description: 'Switching protocols' }, 400: err('Not a websocket upgrade request'), 401: err('No token, or an invalid one') },
  },
  {
    method: 'get',
    path: '/openapi.json',
    scope: null,
    tag: 'operations',
    summary: 'This document',
    responses: { 200: { description: 'The OpenAPI document', contentType: 'application/json' } },
  },
  {
    method: 'get',
    path: '/docs',
    scope: null,
    tag: 'operations',
    summary: 'Interactive API documentation',
    responses: { 200: { description: 'An HTML page', contentType: 'text/html' } },
  },
  {
    method: 'get',
    path: '/console',
    scope: null,
    tag: 'operations',
    summary: 'The web console: permission requests, live executions, the audit log, statistics and MCP servers',
    description:
      'A page (its scripts and styles under /console/assets/) served with a Content-Security-Policy that allows only this origin. ' +
      'It holds no data: it asks for a token when the service has tokens and sends it with each API call (Authorization: Bearer) and to /ws (?token=).',
    responses: { 200: { description: 'An HTML page', contentType: 'text/html' }, 304: { description: 'Not modified (ETag)' } },
  },
];

/** /executions/:id → /executions/{id} */
export function openApiPath(p: string): string {
  return p.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function clean(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function inline(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const ref = S.api.get(schema)?.id;
  if (ref) return { $ref: `#/components/schemas/${ref}` };
  return clean(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>);
}

export const API_VERSION = '1.0.0';

export function buildOpenApi(): Record<string, unknown> {
  const components = z.toJSONSchema(S.api, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
  }) as { schemas: Record<string, Record<string, unknown>> };
  const schemas: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(components.schemas).sort(([a], [b]) => (a < b ? -1 : 1))) schemas[k] = clean(v);

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTE_DOCS) {
    const p = openApiPath(r.path);
    const parameters: unknown[] = [];
    for (const m of r.path.matchAll(/:([A-Za-z_]+)/g)) {
      parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' }, ...idParam(r.tag.replace(/s$/, '')) });
    }
    if (r.query) {
      const js = inline(r.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(js.properties ?? {})) {
        parameters.push({ name, in: 'query', required: (js.required ?? []).includes(name), schema });
      }
    }
    const responses: Record<string, unknown> = {};
    // Statuses any such route may answer, unless the route documents them itself.
    const all: RouteDoc['responses'] = {};
    if (BODY_METHODS.has(r.method)) Object.assign(all, BODY_ERRORS);
    if (r.scope !== null) Object.assign(all, RATE_LIMITED);
    if (r.path !== '/healthz' && r.path !== '/readyz') Object.assign(all, SHUTDOWN_ERROR);
    Object.assign(all, r.responses);
    for (const [status, resp] of Object.entries(all).sort(([a], [b]) => Number(a) - Number(b))) {
      const content = resp.schema
        ? { 'application/json': { schema: inline(resp.schema, 'output') } }
        : resp.contentType
          ? { [resp.contentType]: { schema: resp.contentType === 'application/json' ? { type: 'object' } : { type: 'string' } } }
          : undefined;
      responses[status] = content ? { description: resp.description, content } : { description: resp.description };
    }
    const op: Record<string, unknown> = {
      operationId: `${r.method}${p.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: inline(r.body, 'input') } } } } : {}),
      responses,
      security: r.scope === null ? [] : [{ bearer: [] }],
      ...(r.scope !== null ? { 'x-scope': r.scope } : {}),
    };
    paths[p] = { ...(paths[p] ?? {}), [r.method]: op };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'toolexec',
      version: API_VERSION,
      description: 'Executes AI agents’ tool calls the way Claude Code does, over HTTP. Errors: {"error": {"code": "TOOLEXEC_ERR_…", "message": "…"}}.',
    },
    servers: [{ url: 'http://127.0.0.1:8787' }],
    tags: [...new Set(ROUTE_DOCS.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A token from server.tokens or TOOLEXEC_TOKEN' } },
    },
  };
}

/** The document as committed: stable key order, two-space indent, final newline. */
export function openApiText(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}
