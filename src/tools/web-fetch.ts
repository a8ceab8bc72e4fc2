/**
 * WebFetch: fetches a URL and returns its content as text — HTML as Markdown.
 * Claude Code runs a small model over the page with the caller's `prompt`;
 * toolexec runs no model, so it returns the converted content with the
 * prompt restated, and the calling model answers the prompt itself.
 *
 * Guards (src/web/): http and https only; no credentials in URLs; no
 * loopback, private or link-local addresses unless
 * `webFetch.allowPrivateNetwork`; a size cap (`webFetch.maxBytes`) and a time
 * cap (`webFetch.timeoutMs`); a redirect to another host is reported, not
 * followed; binary content is refused. Permission: `WebFetch(domain:host)`
 * rules (domain-rules.ts), deny over ask over allow.
 */
import { z } from 'zod';
import { ToolError } from '../pipeline/error-class.js';
import { messages } from '../permissions/messages.js';
import { formatSize } from '../results/output-sink.js';
import { buildTool } from '../tool/build-tool.js';
import type { PermissionResult, ToolResult, ValidationResult } from '../tool/types.js';
import { firstMatchingRule, hostOfUrl, hostsOfUrl } from '../web/domain-rules.js';
import { guardedGet } from '../web/http-get.js';
import { bodyToText } from '../web/to-text.js';
import { loadPrompt } from './prompt.js';
import { sliceWhole } from '../util/text.js';

export const MAX_URL_LENGTH = 2000;
/** Characters of converted content returned at most (Claude Code's MAX_MARKDOWN_LENGTH). */
export const MAX_CONTENT_CHARS = 100_000;

export const WebFetchInput = z.strictObject({
  url: z.string().describe('The URL to fetch content from'),
  prompt: z.string().describe('The prompt to run on the fetched content'),
});
export type WebFetchInput = z.infer<typeof WebFetchInput>;

export type WebFetchOutput =
  | { type: 'redirect'; url: string; redirectUrl: string; status: number; statusText: string; prompt: string }
  | {
      type: 'content';
      url: string;
      finalUrl: string;
      status: number;
      statusText: string;
      mediaType: string;
      bytes: number;
      converted: boolean;
      title: string | undefined;
      content: string;
      totalChars: number;
      prompt: string;
    };

function checkUrl(raw: string): { ok: true; url: URL } | { ok: false; message: string; code: number } {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, message: `The URL is longer than ${MAX_URL_LENGTH} characters.`, code: 1 };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: `Invalid URL: ${JSON.stringify(raw)}. Give a full URL such as https://example.com/page.`, code: 2 };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: `WebFetch fetches http and https URLs only, not ${url.protocol}`, code: 3 };
  }
  if (url.username || url.password) {
    return { ok: false, message: 'URLs with a user name or password are not supported.', code: 4 };
  }
  return { ok: true, url };
}

function describe(out: Extract<WebFetchOutput, { type: 'content' }>): string {
  const kind = out.converted ? `${out.mediaType} converted to Markdown` : out.mediaType || 'text';
  const from = out.finalUrl !== out.url ? ` (redirected from ${out.url})` : '';
  return `Fetched ${out.finalUrl}${from} (${out.status} ${out.statusText}, ${kind}, ${formatSize(out.bytes)})`.replace(' ,', ',');
}

export const webFetchTool = buildTool({
  name: 'WebFetch',
  searchHint: 'fetch a web page or URL and read its content as markdown',
  description: loadPrompt(new URL('./web-fetch.md', import.meta.url)),
  inputSchema: WebFetchInput,
  maxResultSizeChars: 100_000,
  shouldDefer: true,
  mayBeReadOnly: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  validateInput: async (input): Promise<ValidationResult> => {
    const r = checkUrl(input.url);
    return r.ok ? { ok: true } : r;
  },
  checkPermissions: async (input, ctx): Promise<PermissionResult> => {
    const r = checkUrl(input.url);
    if (!r.ok) return { behavior: 'deny', message: r.message, type: 'tool', detail: 'invalid URL' };
    const host = hostOfUrl(r.url);
    // Deny and ask rules see every name of where the request goes; an allow rule only its host.
    const hosts = hostsOfUrl(r.url);
    const deny = firstMatchingRule(ctx.permissions.contentRules('WebFetch', 'deny'), hosts);
    if (deny) return { behavior: 'deny', message: `WebFetch denied access to domain:${host}.`, type: 'rule', detail: deny.raw };
    const ask = firstMatchingRule(ctx.permissions.contentRules('WebFetch', 'ask'), hosts);
    if (ask) return { behavior: 'ask', message: messages.notGranted('WebFetch'), type: 'rule', detail: ask.raw };
    const allow = firstMatchingRule(ctx.permissions.contentRules('WebFetch', 'allow'), host);
    if (allow) return { behavior: 'allow', type: 'rule', detail: allow.raw };
    return { behavior: 'passthrough', message: `WebFetch wants to fetch from ${host} (rule: WebFetch(domain:${host}))` };
  },
  call: async (input, ctx): Promise<ToolResult<WebFetchOutput>> => {
    const checked = checkUrl(input.url);
    if (!checked.ok) throw new ToolError(checked.message, 'validation');
    const cfg = ctx.config.webFetch;
    const r = await guardedGet(checked.url, { maxBytes: cfg.maxBytes, timeoutMs: cfg.timeoutMs, allowPrivateNetwork: cfg.allowPrivateNetwork }, ctx.signal);
    if (r.kind === 'redirect') {
      const data: WebFetchOutput = { type: 'redirect', url: r.from.href, redirectUrl: r.to.href, status: r.status, statusText: r.statusText, prompt: input.prompt };
      return { data };
    }
    const { text, title, converted } = await bodyToText(r.body, r.mediaType, r.charset, ctx.signal);
    const data: WebFetchOutput = {
      type: 'content',
      url: checked.url.href,
      finalUrl: r.url.href,
      status: r.status,
      statusText: r.statusText,
      mediaType: r.mediaType,
      bytes: r.body.length,
      converted,
      title,
      content: sliceWhole(text, MAX_CONTENT_CHARS),
      totalChars: text.length,
      prompt: input.prompt,
    };
    return { data };
  },
  renderToolUseMessage: (input) => `WebFetch(${input.url})`,
  getToolUseSummary: (input) => input.url,
  renderToolResultMessage: (out) =>
    out.type === 'redirect' ? `Redirects to ${out.redirectUrl}` : `Fetched ${formatSize(out.bytes)} (${out.status} ${out.statusText})`,
  toAutoClassifierInput: (input) => input.url,
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    if (out.type === 'redirect') {
      const text =
        'REDIRECT DETECTED: The URL redirects to a different host.\n\n' +
        `Original URL: ${out.url}\nRedirect URL: ${out.redirectUrl}\nStatus: ${out.status} ${out.statusText}\n\n` +
        'WebFetch does not follow redirects to another host on its own. To complete your request, fetch the redirect URL with WebFetch again:\n' +
        `- url: ${JSON.stringify(out.redirectUrl)}\n- prompt: ${JSON.stringify(out.prompt)}`;
      return { type: 'tool_result', tool_use_id: toolUseId, content: text };
    }
    const head =
      `${describe(out)}\n` +
      (out.title ? `Title: ${out.title}\n` : '') +
      `Prompt: ${out.prompt}\n` +
      '(No model runs over fetched content here: the content follows, for you to answer the prompt from.)\n\n';
    const body = out.content.length > 0 ? out.content : '(The response has no text content.)';
    const cut = out.totalChars > out.content.length ? `\n\n[Content truncated: the first ${out.content.length.toLocaleString('en-US')} of ${out.totalChars.toLocaleString('en-US')} characters are shown.]` : '';
    return { type: 'tool_result', tool_use_id: toolUseId, content: head + body + cut };
  },
});
