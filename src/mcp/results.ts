/**
 * MCP results and `tool_result` blocks, both ways.
 *
 * Client side (an MCP tool's answer → the contract's output): text goes
 * through the call's output sink, so text past the MCP output limit (and past
 * the persist threshold) is stored in SQLite and previewed with a
 * result:// line; images become Anthropic image blocks; structuredContent
 * becomes a JSON text block when the server sent no content at all; resources and
 * resource links become text lines as Claude Code words them; `isError` makes
 * the block an error.
 *
 * Server side (toolexec's `tool_result` → an MCP CallToolResult): text and
 * image blocks map back; other block types become text.
 */
import { ContentBlockSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { formatPersisted, type OutputSink } from '../results/output-sink.js';
import type { ContentBlock, ImageBlock, ToolResultBlock } from '../tool/types.js';

/** Claude Code's MAX_MCP_OUTPUT_TOKENS (25,000) at 4 characters a token. */
export const MAX_MCP_OUTPUT_CHARS = 25_000 * 4;
/** The model provider's limit for one image (5 MB), as base64 characters. */
export const MAX_IMAGE_BASE64_CHARS = Math.ceil((5 * 1024 * 1024 * 4) / 3);

const MODEL_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** What an MCP tool's call returns as its output. */
export interface McpOutput {
  content: string | ContentBlock[];
  isError: boolean;
}

type McpContent = CallToolResult['content'][number];

/**
 * A tools/call result with its envelope checked and its content items not
 * yet: each item is checked on its own (readCallResult), so that one item of
 * a type this client does not know, or one broken image, is left out with a
 * note instead of the whole answer being refused.
 */
export const CallResultEnvelope = z.looseObject({
  content: z.array(z.unknown()).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

function itemNote(raw: unknown, issue: { path: PropertyKey[]; message: string } | undefined): string {
  const type = (raw as { type?: unknown } | null)?.type;
  const known = typeof type === 'string' && ['text', 'image', 'audio', 'resource_link', 'resource'].includes(type);
  if (!known) return `[content of type ${typeof type === 'string' ? JSON.stringify(type.slice(0, 100)) : 'unknown'} omitted: not an MCP content type]`;
  const why = issue ? `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}` : 'invalid';
  return `[${type} content omitted: it is not valid MCP content (${why})]`;
}

/** The result as the SDK types it, each invalid content item replaced by a text note. */
export function readCallResult(envelope: z.infer<typeof CallResultEnvelope>): CallToolResult {
  const content = envelope.content.map((raw): McpContent => {
    const r = ContentBlockSchema.safeParse(raw);
    return r.success ? r.data : { type: 'text', text: itemNote(raw, r.error.issues[0]) };
  });
  return { ...envelope, content } as CallToolResult;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The model image type the bytes' signature shows, if any. */
function sniffImage(head: Buffer): string | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  const ascii = head.toString('latin1');
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'image/gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/**
 * An image block the model provider will take, or a note. The data must be
 * base64 of an image of an accepted type: anything else would make the
 * provider refuse every later request of the conversation that carries it.
 * The type is taken from the bytes, since providers refuse a declared type
 * that does not match them.
 */
function imageOrNote(data: string, mimeType: string, what: string): ContentBlock {
  if (!MODEL_IMAGE_TYPES.has(mimeType)) return { type: 'text', text: `[${what} of type ${mimeType} omitted: the model accepts only JPEG, PNG, GIF and WebP images]` };
  if (data.length > MAX_IMAGE_BASE64_CHARS) return { type: 'text', text: `[${what} omitted: ${data.length} base64 characters is more than the 5 MB an image may have]` };
  const clean = /\s/.test(data) ? data.replace(/\s+/g, '') : data;
  const padded = clean.length % 4 === 0 || clean.endsWith('=') ? clean : clean + '='.repeat(4 - (clean.length % 4));
  if (padded.length % 4 !== 0 || !BASE64.test(padded)) return { type: 'text', text: `[${what} omitted: its data is not valid base64]` };
  const actual = sniffImage(Buffer.from(padded.slice(0, 24), 'base64'));
  if (!actual) return { type: 'text', text: `[${what} omitted: its data is not a JPEG, PNG, GIF or WebP image]` };
  return { type: 'image', source: { type: 'base64', media_type: actual, data: padded } } satisfies ImageBlock;
}

/** One MCP content item as text or an image block. */
function mapItem(item: McpContent, serverName: string): ContentBlock {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text };
    case 'image':
      return imageOrNote(item.data, item.mimeType, 'image');
    case 'audio':
      return { type: 'text', text: `[audio of type ${item.mimeType} omitted: ${item.data.length} base64 characters]` };
    case 'resource_link':
      return { type: 'text', text: `[Resource link: ${item.name}] ${item.uri}${item.description ? ` (${item.description})` : ''}` };
    case 'resource': {
      const r = item.resource;
      const prefix = `[Resource from ${serverName} at ${r.uri}] `;
      if ('text' in r && typeof r.text === 'string') return { type: 'text', text: prefix + r.text };
      const mime = r.mimeType ?? 'application/octet-stream';
      if ('blob' in r && typeof r.blob === 'string' && mime.startsWith('image/')) return imageOrNote(r.blob, mime, `image resource ${r.uri}`);
      return { type: 'text', text: `${prefix}(binary content of type ${mime} omitted)` };
    }
    default:
      return { type: 'text', text: `[content of type ${String((item as { type?: unknown }).type)} omitted]` };
  }
}

/**
 * Maps a CallToolResult, streaming its text into `sink`. Text blocks are
 * joined with newlines; when the sink stays in memory the blocks keep their
 * order, and when it spilled the model gets the preview first, then the
 * images.
 */
export function mapCallResult(result: CallToolResult, sink: OutputSink, serverName: string): { output: McpOutput; resultId: string | undefined } {
  const blocks: ContentBlock[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  let wroteText = false;
  for (const item of content) {
    const b = mapItem(item, serverName);
    if (b.type === 'text') {
      if (wroteText) sink.write('\n');
      sink.write(b.text);
      wroteText = true;
    }
    blocks.push(b);
  }
  // structuredContent restates content for programs (the MCP spec asks servers to mirror it in a text
  // block): it speaks to the model only when content says nothing. Beside an image it is that image
  // again (server-filesystem's read_media_file sends {content: [the image]}), its base64 as text.
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    let json: string;
    try {
      json = JSON.stringify(result.structuredContent, null, 2) ?? '';
    } catch {
      json = '"<unserialisable structuredContent>"';
    }
    sink.write(json);
    blocks.push({ type: 'text', text: json });
  }
  const isError = result.isError === true;
  const done = sink.finish();
  if (done.kind === 'persisted') {
    const text = formatPersisted(done);
    const others = blocks.filter((b) => b.type !== 'text');
    return { output: { content: others.length === 0 ? text : [{ type: 'text', text }, ...others], isError }, resultId: done.id };
  }
  if (blocks.every((b) => b.type === 'text')) return { output: { content: done.text, isError }, resultId: undefined };
  return { output: { content: blocks, isError }, resultId: undefined };
}

export function outputToBlock(output: McpOutput, toolUseId: string): ToolResultBlock {
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: toolUseId, content: output.content };
  if (output.isError) block.is_error = true;
  return block;
}

/** A `tool_result` block as an MCP CallToolResult. */
export function blockToCallResult(block: ToolResultBlock, meta?: Record<string, unknown>): CallToolResult {
  const content: CallToolResult['content'] = [];
  if (typeof block.content === 'string') content.push({ type: 'text', text: block.content });
  else {
    for (const b of block.content) {
      if (b.type === 'text') content.push({ type: 'text', text: b.text });
      else if (b.type === 'image') content.push({ type: 'image', data: b.source.data, mimeType: b.source.media_type });
      else if (b.type === 'tool_reference') content.push({ type: 'text', text: `Tool reference: ${b.tool_name}` });
    }
  }
  const out: CallToolResult = { content };
  if (block.is_error) out.isError = true;
  if (meta) out._meta = meta;
  return out;
}
