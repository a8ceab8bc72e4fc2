/**
 * A fetched body as text for the model: HTML converted to Markdown with
 * turndown (scripts, styles and other non-content elements dropped), other
 * text decoded with its charset (from the header, or for HTML a `<meta
 * charset>`; UTF-8 otherwise).
 */
import { TextDecoder } from 'node:util';
import TurndownService from 'turndown';
import { isHtmlType } from './http-get.js';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'head']);

function decoderFor(label: string | undefined): TextDecoder {
  if (label) {
    try {
      return new TextDecoder(label);
    } catch {
      /* an unknown label: UTF-8 */
    }
  }
  return new TextDecoder('utf-8');
}

function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  return /<meta[^>]*charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1]?.toLowerCase();
}

function titleOf(html: string): string | undefined {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const t = m?.[1]?.replace(/\s+/g, ' ').trim();
  return t ? t : undefined;
}

export function bodyToText(body: Buffer, mediaType: string, charset: string | undefined): { text: string; title: string | undefined; converted: boolean } {
  const html = isHtmlType(mediaType);
  const text = decoderFor(charset ?? (html ? metaCharset(body) : undefined)).decode(body);
  if (!html) return { text, title: undefined, converted: false };
  return { text: turndown.turndown(text).trim(), title: titleOf(text), converted: true };
}
