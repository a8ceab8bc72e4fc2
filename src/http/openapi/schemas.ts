/**
 * The shapes of the HTTP API's bodies, as zod schemas: the OpenAPI document
 * is generated from them (openapi/openapi.json), and the conformance test
 * validates real responses against that document.
 */
import { z } from 'zod';
import { ERROR_CODES } from '../../errors.js';
import { REASON_TYPES } from '../../permissions/types.js';
import { AnthropicToolUse, ExecuteRequest, MAX_TOOL_USES_PER_REQUEST, OpenAIFunctionCallItem, OpenAIToolCall } from '../tool-uses.js';

/** The schemas that become components of the OpenAPI document. */
export const api = z.registry<{ id: string; description?: string }>();

const Id = z.string();
const Nullable = <T extends z.ZodType>(t: T) => t.nullable();

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_CODES) as [string, ...string[]]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .register(api, { id: 'Error' });

export const ReasonType = z.enum(REASON_TYPES);
export const Reason = z.object({ type: ReasonType, detail: z.string() }).register(api, { id: 'Reason' });
export const DecisionSummary = z.object({ behavior: z.enum(['allow', 'deny', 'ask']), reason: Reason }).register(api, { id: 'Decision' });
export const ChainStep = z
  .object({
    layer: z.enum(['rules', 'tool', 'mode', 'hooks', 'classifier', 'user']),
    outcome: z.enum(['allow', 'deny', 'ask', 'passthrough', 'skip']),
    detail: z.string(),
  })
  .register(api, { id: 'ChainStep' });
export const ExecutionStatus = z.enum(['queued', 'validating', 'awaiting_permission', 'running', 'succeeded', 'failed', 'denied', 'cancelled']);
export const ErrorClass = z.enum(['validation', 'permission', 'timeout', 'cancelled', 'network', 'not_found', 'io', 'mcp_disconnected', 'tool_error', 'internal']);

const ContentBlock = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), source: z.object({ type: z.literal('base64'), media_type: z.string(), data: z.string() }) }),
  z.object({ type: z.literal('tool_reference'), tool_name: z.string() }),
]);
export const ToolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.union([z.string(), z.array(ContentBlock)]),
    is_error: z.boolean().optional(),
  })
  .register(api, { id: 'ToolResult' });

// ---- tool uses in (documentation of what readToolUses accepts) ----
// Built from the schemas readToolUses checks (src/http/tool-uses.ts), so their
// limits cannot drift apart; `.extend({})` copies rather than registers them.

export const AnthropicToolUseDoc = AnthropicToolUse.extend({}).register(api, { id: 'AnthropicToolUse', description: 'An Anthropic tool_use content block' });
export const OpenAIToolCallDoc = OpenAIToolCall.extend({}).register(api, {
  id: 'OpenAIToolCall',
  description: 'An OpenAI Chat Completions tool call (arguments as a JSON string)',
});
export const OpenAIFunctionCallDoc = OpenAIFunctionCallItem.extend({
  id: z.string().optional().describe('The item id (fc_…), ignored: call_id names the call'),
  status: z.string().optional().describe('Ignored'),
}).register(api, { id: 'OpenAIFunctionCall', description: 'An OpenAI Responses function_call item, as the API returns it' });
const OtherBlock = z.object({ type: z.string() }).loose().meta({ description: 'Any other content block (text, thinking, …): ignored' });
const ToolUseItem = z.union([AnthropicToolUseDoc, OpenAIToolCallDoc, OpenAIFunctionCallDoc, OtherBlock]);

export const ExecuteRequestDoc = z
  .object({
    session_id: ExecuteRequest.shape.session_id.meta({ description: 'The session; a new one is made when absent' }),
    tool_uses: z.union([
      z.array(ToolUseItem).max(MAX_TOOL_USES_PER_REQUEST),
      z.object({ role: z.literal('assistant'), content: z.array(ToolUseItem) }).loose(),
      z.object({ role: z.literal('assistant'), tool_calls: z.array(OpenAIToolCallDoc) }).loose(),
    ]),
    wait: ExecuteRequest.shape.wait.meta({ description: 'false: answer 202 at once; follow over /ws or GET /executions/{id}' }),
  })
  .register(api, { id: 'ExecuteRequest' });

export const ExecutionSummary = z
  .object({
    id: Id,
    session_id: z.string(),
    tool_use_id: z.string(),
    tool: z.string(),
    status: ExecutionStatus,
    decision: Nullable(DecisionSummary),
    duration_ms: Nullable(z.number()),
    error_class: Nullable(ErrorClass),
    result_id: Nullable(z.string()),
    replayed: z.literal(true).optional(),
  })
  .register(api, { id: 'ExecutionSummary' });

export const ExecuteResponse = z
  .object({
    session_id: z.string(),
    tool_results: z.array(ToolResultBlock),
    messages: z
      .array(
        z.union([
          z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }).describe('For an OpenAI Chat Completions tool call'),
          z
            .object({ type: z.literal('function_call_output'), call_id: z.string(), output: z.string() })
            .describe('For an OpenAI Responses function_call item: append it to the next request\'s input'),
        ]),
      )
      .describe('One per call that came in an OpenAI shape, in request order, in the shape of its API (text only: an image is named, not sent)'),
    executions: z.array(ExecutionSummary),
  })
  .register(api, { id: 'ExecuteResponse' });

export const ExecuteAccepted = z.object({ session_id: z.string(), executions: z.array(ExecutionSummary) }).register(api, { id: 'ExecuteAccepted' });

export const ExecutionListItem = z
  .object({
    id: Id,
    session_id: z.string(),
    tool_use_id: z.string(),
    tool: z.string(),
    status: ExecutionStatus,
    decision: Nullable(DecisionSummary),
    error_class: Nullable(ErrorClass),
    is_error: z.boolean(),
    result_id: Nullable(z.string()),
    created_at: z.number(),
    finished_at: Nullable(z.number()),
    duration_ms: Nullable(z.number()),
  })
  .register(api, { id: 'ExecutionListItem' });

export const ExecutionList = z
  .object({
    executions: z.array(ExecutionListItem),
    next_cursor: Nullable(z.string()).meta({
      description:
        'Where the next page starts; null after the last. A page filtered on a finished status or a tool looks at a bounded window of rows, so it may hold fewer executions than limit (even none) and still have a next_cursor. Valid for this listing with the same filters only (limit may change): any other use is a 400',
    }),
  })
  .register(api, { id: 'ExecutionList' });

const HookMessage = z.object({
  event: z.string(),
  hook: z.string(),
  kind: z.string(),
  text: z.string(),
  exitCode: Nullable(z.number()).optional(),
  durationMs: z.number().optional(),
});

export const ExecutionDetail = z
  .object({
    execution: z.object({
      id: Id,
      session_id: z.string(),
      tool_use_id: z.string(),
      tool: z.string(),
      status: ExecutionStatus,
      input: z.unknown(),
      input_digest: z.string(),
      decision: Nullable(
        z.object({ behavior: z.enum(['allow', 'deny', 'ask']), reason: Reason, chain: z.array(ChainStep), actor: Nullable(z.string()) }),
      ),
      timings: z
        .record(z.string(), z.number())
        .meta({ description: 'ms per step: lookup, parse, validate, pre_hooks, permission, call, post_hooks' }),
      hook_messages: z.array(HookMessage),
      error_class: Nullable(ErrorClass),
      is_error: z.boolean(),
      result_id: Nullable(z.string()),
      preview: Nullable(z.string()),
      actor: Nullable(z.string()),
      created_at: z.number(),
      finished_at: Nullable(z.number()),
      duration_ms: Nullable(z.number()),
      audit: z.array(z.object({ id: z.number(), ts: z.number(), behavior: z.string(), reason: z.object({ type: z.string(), detail: z.string() }), actor: Nullable(z.string()) })),
    }),
  })
  .register(api, { id: 'ExecutionDetail' });

export const CancelAccepted = z.object({ execution: z.object({ id: z.string(), status: z.literal('cancelling') }) }).register(api, { id: 'CancelAccepted' });

export const AuditEntry = z
  .object({
    id: z.number(),
    ts: z.number(),
    session_id: z.string(),
    tool_use_id: z.string(),
    execution_id: z.string(),
    tool: z.string(),
    behavior: z.enum(['allow', 'deny', 'ask']),
    reason: Reason,
    actor: Nullable(z.string()),
    input_digest: z.string(),
  })
  .register(api, { id: 'AuditEntry' });
export const AuditList = z
  .object({
    entries: z.array(AuditEntry),
    next_cursor: Nullable(z.string()).meta({
      description:
        'Where the next page starts; null after the last. A page filtered on tool, behavior, reason, since or until looks at a bounded window of rows, so it may hold fewer entries than limit (even none) and still have a next_cursor. Valid for this listing with the same filters only (limit may change): any other use is a 400',
    }),
  })
  .register(api, { id: 'AuditList' });

export const PermissionRequest = z
  .object({
    id: z.string(),
    session_id: z.string(),
    execution_id: z.string(),
    tool_use_id: z.string(),
    tool: z.string(),
    input: z.unknown(),
    input_digest: z.string(),
    summary: z.string(),
    reason: z.object({ type: z.string(), detail: z.string() }),
    message: Nullable(z.string()),
    suggested_rule: z.string().meta({ description: 'The rule remember keeps: exactly this command, path, host, or the tool; empty when no rule covers exactly this call' }),
    status: z.enum(['pending', 'allowed', 'denied', 'expired', 'cancelled', 'headless']),
    created_at: z.number(),
    expires_at: z.number(),
    resolved_at: Nullable(z.number()),
    resolved_by: Nullable(z.string()),
    answer_message: Nullable(z.string()),
    remember: Nullable(z.string()),
  })
  .register(api, { id: 'PermissionRequest' });
export const PermissionRequestList = z
  .object({
    requests: z.array(PermissionRequest).meta({ description: 'A page of pending requests, oldest first; the first page adds the most recent answered ones' }),
    pending_count: z.number().int().meta({ description: 'Requests waiting for an answer (in the session, if one is given)' }),
    next_cursor: Nullable(z.string()).meta({
      description: 'Where the next page of pending requests starts; null after the last. Valid for this listing with the same session_id only (limit may change): any other use is a 400',
    }),
  })
  .register(api, { id: 'PermissionRequestList' });
export const PermissionAnswerDoc = z
  .object({
    decision: z.enum(['allow', 'deny']),
    message: z.string().optional(),
    remember: z.enum(['session', 'always']).optional(),
    rule: z.string().optional().meta({ description: 'The rule to remember; defaults to the request’s suggested_rule, or with an allow and updated_input to the same rule for the updated input (the call that runs)' }),
    updated_input: z.record(z.string(), z.unknown()).optional(),
  })
  .register(api, { id: 'PermissionAnswer' });
export const PermissionAnswered = z.object({ request: PermissionRequest }).register(api, { id: 'PermissionAnswered' });

export const CheckRequestDoc = z
  .object({ session_id: z.string().optional(), name: z.string(), input: z.unknown().optional() })
  .register(api, { id: 'PermissionCheckRequest' });
export const CheckResponse = z
  .object({
    tool: z.string(),
    mode: z.string(),
    behavior: z.enum(['allow', 'deny', 'ask']),
    reason: Reason,
    message: Nullable(z.string()),
    chain: z.array(ChainStep),
    notes: z.array(z.string()),
  })
  .register(api, { id: 'PermissionCheck' });

export const Rule = z
  .object({
    id: z.string(),
    source: z.string(),
    behavior: z.enum(['allow', 'deny', 'ask']),
    rule: z.string(),
    tool: z.string(),
    content: Nullable(z.string()),
    session_id: Nullable(z.string()),
    created_at: Nullable(z.number()),
    created_by: Nullable(z.string()),
    read_only: z.boolean(),
  })
  .register(api, { id: 'Rule' });
export const RuleList = z
  .object({ rules: z.array(Rule), errors: z.array(z.object({ raw: z.string(), source: z.string(), error: z.string() })) })
  .register(api, { id: 'RuleList' });
export const RuleCreateDoc = z
  .object({
    behavior: z.enum(['allow', 'deny', 'ask']),
    rule: z.string(),
    scope: z.enum(['session', 'always']),
    session_id: z.string().optional(),
  })
  .register(api, { id: 'RuleCreate' });
export const RuleCreated = z.object({ rule: Rule }).register(api, { id: 'RuleCreated' });

export const SessionBody = z
  .object({
    session: z.object({
      id: z.string(),
      mode: z.enum(['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions', 'auto']),
      cwd: z.string(),
      todos: z.array(z.unknown()),
      active_calls: z.number(),
      executions: z.number(),
      file_state: z.object({ entries: z.number(), bytes: z.number() }),
      rules: z.number(),
      background_tasks: z
        .array(
          z.object({
            id: z.string(),
            command: z.string(),
            description: z.string().nullable(),
            status: z.enum(['running', 'completed', 'failed', 'killed']),
            exit_code: z.number().nullable(),
            started_at: z.number(),
            ended_at: z.number().nullable(),
            output_bytes: z.number(),
          }),
        )
        .describe('Background Bash tasks (run_in_background) this session started and that are still known: running, or finished and readable with TaskOutput.'),
      created_at: z.number(),
      updated_at: z.number(),
    }),
  })
  .register(api, { id: 'Session' });
export const SessionPatchDoc = z
  .object({ mode: z.enum(['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions', 'auto']) })
  .register(api, { id: 'SessionPatch' });

const JsonSchemaObject = z.record(z.string(), z.unknown());
export const AnthropicToolDef = z
  .object({ name: z.string(), description: z.string(), input_schema: JsonSchemaObject, defer_loading: z.literal(true).optional() })
  .register(api, { id: 'AnthropicTool' });
export const OpenAIToolDef = z
  .object({ type: z.literal('function'), function: z.object({ name: z.string(), description: z.string(), parameters: JsonSchemaObject }) })
  .register(api, { id: 'OpenAITool' });
export const McpToolDef = z
  .object({ name: z.string(), description: z.string(), inputSchema: JsonSchemaObject })
  .register(api, { id: 'McpTool' });
const ToolDef = z.union([AnthropicToolDef, OpenAIToolDef, McpToolDef]);

/** A JSON-RPC 2.0 error, as the MCP endpoint answers transport errors. */
export const JsonRpcError = z
  .object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }), id: z.null() })
  .register(api, { id: 'JsonRpcError' });

export const Catalog = z
  .object({
    tools: z.array(ToolDef),
    deferred_tools: z.array(z.string()),
    tokens: z.object({ full: z.number(), deferred: z.number() }),
    etag: z.string(),
  })
  .register(api, { id: 'Catalog' });

export const Health = z.object({ status: z.literal('ok') }).register(api, { id: 'Health' });

export const McpServer = z
  .object({
    name: z.string(),
    type: z.enum(['stdio', 'http', 'sse']),
    state: z.enum(['connecting', 'connected', 'reconnecting', 'failed', 'closed']),
    tools: z.number(),
    tool_names: z.array(z.string()),
    unusable_tools: z.array(z.object({ name: z.string(), error: z.string() })),
    always_load: z.boolean(),
    last_error: Nullable(z.string()),
    last_error_at: Nullable(z.string()),
    connected_at: Nullable(z.string()),
    attempts: z.number(),
    next_retry_at: Nullable(z.string()),
    server_info: Nullable(z.object({ name: z.string(), version: z.string() }).loose()),
    pid: Nullable(z.number()),
    problems: z.array(z.object({ kind: z.string(), message: z.string(), tools: z.array(z.string()) })),
  })
  .register(api, { id: 'McpServer' });
export const McpServerList = z.object({ servers: z.array(McpServer) }).register(api, { id: 'McpServerList' });

export const ToolSearchResult = z
  .object({
    matches: z.array(z.string()),
    query: z.string(),
    total_deferred_tools: z.number(),
    tools: z.array(ToolDef),
  })
  .register(api, { id: 'ToolSearchResult' });

// Schemas that live beside their routes, registered as components here.
import { ReadinessResponse } from '../routes/health.js';
import { StatsResponse } from '../routes/stats.js';
export const Readiness = ReadinessResponse.register(api, { id: 'Readiness' });
export const Stats = StatsResponse.register(api, { id: 'Stats' });
