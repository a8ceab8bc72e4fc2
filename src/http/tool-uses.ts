/**
 * The tool uses a request carries, in the shapes agents produce: Anthropic
 * `tool_use` blocks, OpenAI Chat Completions tool calls, OpenAI Responses
 * `function_call` items, a whole assistant `content` array (non-tool blocks
 * ignored), or a whole assistant message. A malformed envelope is the
 * caller's fault (400); a malformed tool input is the model's, and becomes
 * an `is_error` result.
 */
import { z } from 'zod';
import { ToolexecError } from '../errors.js';
import type { ToolUse } from '../pipeline/types.js';
import type { ContentBlock, ToolResultBlock } from '../tool/types.js';

export const MAX_TOOL_USES_PER_REQUEST = 256;

const Id = z.string().min(1).max(512);
const Name = z.string().min(1).max(512);

export const AnthropicToolUse = z.object({
  type: z.literal('tool_use'),
  id: Id,
  name: Name,
  input: z.unknown(),
});
export type AnthropicToolUse = z.infer<typeof AnthropicToolUse>;

export const OpenAIToolCall = z.object({
  id: Id,
  type: z.literal('function').optional(),
  function: z.object({ name: Name, arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional() }),
});
export type OpenAIToolCall = z.infer<typeof OpenAIToolCall>;

export const OpenAIFunctionCallItem = z.object({
  type: z.literal('function_call'),
  call_id: Id,
  name: Name,
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
});

export const ExecuteRequest = z.object({
  session_id: z.string().min(1).max(256).optional(),
  tool_uses: z.unknown(),
  wait: z.boolean().optional(),
});
export type ExecuteRequest = z.infer<typeof ExecuteRequest>;

function invalid(message: string): ToolexecError {
  return new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', message);
}

function firstIssue(e: z.ZodError): string {
  const i = e.issues[0];
  if (!i) return 'invalid';
  return `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`;
}

function parseArguments(args: string | Record<string, unknown> | undefined): { input: unknown; inputError?: string } {
  if (args === undefined) return { input: {} };
  if (typeof args !== 'string') return { input: args };
  if (args.trim() === '') return { input: {} };
  try {
    return { input: JSON.parse(args) };
  } catch (e) {
    return { input: args, inputError: `The arguments are not valid JSON: ${(e as Error).message}` };
  }
}

/** Reads `tool_uses` into ToolUse objects, or throws a 400. */
export function readToolUses(raw: unknown): ToolUse[] {
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  else if (raw !== null && typeof raw === 'object') {
    const m = raw as { content?: unknown; tool_calls?: unknown };
    if (Array.isArray(m.content)) items = m.content;
    else if (Array.isArray(m.tool_calls)) items = m.tool_calls;
    else throw invalid('tool_uses must be an array of tool_use blocks or tool calls, or an assistant message');
  } else {
    throw invalid('tool_uses must be an array of tool_use blocks or tool calls, or an assistant message');
  }
  if (items.length > MAX_TOOL_USES_PER_REQUEST) {
    throw invalid(`tool_uses holds ${items.length} items; at most ${MAX_TOOL_USES_PER_REQUEST} per request`);
  }
  const out: ToolUse[] = [];
  items.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw invalid(`tool_uses[${i}] must be an object`);
    }
    const o = item as Record<string, unknown>;
    if (o.type === 'tool_use') {
      const r = AnthropicToolUse.safeParse(o);
      if (!r.success) throw invalid(`tool_uses[${i}] is not a valid tool_use block: ${firstIssue(r.error)}`);
      out.push({ id: r.data.id, name: r.data.name, input: r.data.input, format: 'anthropic' });
      return;
    }
    if (o.type === 'function_call') {
      const r = OpenAIFunctionCallItem.safeParse(o);
      if (!r.success) throw invalid(`tool_uses[${i}] is not a valid function_call item: ${firstIssue(r.error)}`);
      const a = parseArguments(r.data.arguments);
      out.push({ id: r.data.call_id, name: r.data.name, input: a.input, inputError: a.inputError, format: 'openai' });
      return;
    }
    if ('function' in o) {
      const r = OpenAIToolCall.safeParse(o);
      if (!r.success) throw invalid(`tool_uses[${i}] is not a valid OpenAI tool call: ${firstIssue(r.error)}`);
      const a = parseArguments(r.data.function.arguments);
      out.push({ id: r.data.id, name: r.data.function.name, input: a.input, inputError: a.inputError, format: 'openai' });
      return;
    }
    if (typeof o.type === 'string') return; // text, thinking, … blocks of a content array
    throw invalid(`tool_uses[${i}] is neither a tool_use block nor an OpenAI tool call`);
  });
  return out;
}

/** An OpenAI `tool` message for a result (text only: tool messages carry no images). */
export function toOpenAIMessage(block: ToolResultBlock): { role: 'tool'; tool_call_id: string; content: string } {
  const content =
    typeof block.content === 'string'
      ? block.content
      : block.content
          // tool_reference blocks mean nothing to an OpenAI model; ToolSearch's text block carries the definitions.
          .filter((b: ContentBlock) => b.type !== 'tool_reference')
          .map((b: ContentBlock) => (b.type === 'text' ? b.text : b.type === 'image' ? `[image ${b.source.media_type}]` : `[${b.type}]`))
          .join('\n');
  return { role: 'tool', tool_call_id: block.tool_use_id, content };
}
