/**
 * One MCP tool as a tool of the contract: named `mcp__{server}__{tool}`, its
 * input checked against the server's JSON Schema (compiled once), its
 * annotations mapped (readOnlyHint → read-only and concurrency-safe,
 * destructiveHint → destructive), deferred unless the server is configured
 * `alwaysLoad` or the tool carries `_meta["anthropic/alwaysLoad"]`. Progress
 * notifications become the call's progress; the call's AbortSignal cancels
 * the request (the SDK sends notifications/cancelled).
 *
 * The tool's own permission opinion is `passthrough`, as for Claude Code's
 * MCP tools: rules (`mcp__srv`, `mcp__srv__tool`), modes and approvers decide.
 */
import { contentText } from '../tool/content-text.js';
import type { Tool as McpToolDef, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { mcpToolName } from '../pool/mcp-names.js';
import { buildTool, summariseInput } from '../tool/build-tool.js';
import type { AnyTool, OnProgress, ToolInput } from '../tool/types.js';
import type { CompiledSchema } from './input-schema.js';
import { mapCallResult, MAX_MCP_OUTPUT_CHARS, outputToBlock, type McpOutput } from './results.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Claude Code's MAX_MCP_DESCRIPTION_LENGTH. */
export const MAX_MCP_DESCRIPTION_CHARS = 2048;
const MAX_SEARCH_HINT_CHARS = 200;

/** What a tool needs from its server's connection. */
export interface McpCaller {
  readonly serverName: string;
  call(tool: string, args: ToolInput, signal: AbortSignal, onProgress: OnProgress): Promise<CallToolResult>;
}

const annotationsByTool = new WeakMap<AnyTool, ToolAnnotations>();

/** The annotations the server gave a tool (toolexec's MCP server passes them on). */
export function mcpAnnotationsOf(tool: AnyTool): ToolAnnotations | undefined {
  return annotationsByTool.get(tool);
}

function truncateDescription(d: string): string {
  return d.length > MAX_MCP_DESCRIPTION_CHARS ? `${d.slice(0, MAX_MCP_DESCRIPTION_CHARS)}… [truncated]` : d;
}

export function buildMcpTool(
  def: McpToolDef,
  schema: Extract<CompiledSchema, { ok: true }>,
  caller: McpCaller,
  opts: { alwaysLoad: boolean },
): AnyTool {
  const annotations = def.annotations ?? {};
  const meta = (def._meta ?? {}) as Record<string, unknown>;
  const readOnly = annotations.readOnlyHint === true;
  const destructive = annotations.destructiveHint === true;
  const hint = meta['anthropic/searchHint'];
  const serverName = caller.serverName;
  const toolName = def.name;
  const tool = buildTool({
    name: mcpToolName(serverName, toolName),
    description: truncateDescription(def.description ?? def.title ?? annotations.title ?? ''),
    searchHint: typeof hint === 'string' && hint.length > 0 ? hint.slice(0, MAX_SEARCH_HINT_CHARS) : undefined,
    inputSchema: schema.zod,
    inputJSONSchema: schema.jsonSchema,
    maxResultSizeChars: MAX_MCP_OUTPUT_CHARS,
    shouldDefer: true,
    alwaysLoad: opts.alwaysLoad || meta['anthropic/alwaysLoad'] === true,
    mayBeReadOnly: readOnly,
    mcpInfo: { serverName, toolName },
    isConcurrencySafe: () => readOnly,
    isReadOnly: () => readOnly,
    isDestructive: () => destructive,
    toAutoClassifierInput: (input: ToolInput) => `${toolName} ${summariseInput(input, 1000)}`,
    renderToolResultMessage: (output: McpOutput) =>
      summariseInput(contentText(output.content)),
    mapToolResultToToolResultBlockParam: outputToBlock,
    call: async (input, ctx, _canUseTool, _parent, onProgress) => {
      const result = await caller.call(toolName, input, ctx.signal, onProgress);
      const { output, resultId } = mapCallResult(result, ctx.createOutput(), serverName);
      return { data: output, resultId, errorClass: output.isError ? 'tool_error' : undefined };
    },
  });
  annotationsByTool.set(tool, annotations);
  return tool;
}
