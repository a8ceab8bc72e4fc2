/**
 * A fetched body as text for the model: HTML converted to Markdown with
 * turndown (scripts, styles and other non-content elements dropped), other
 * text decoded with its charset (from the header, or for HTML a `<meta
 * charset>`; UTF-8 otherwise).
 */
import { TextDecoder } from 'node:util';
import type TurndownService from 'turndown';
import { isHtmlType } from './http-get.js';

// Loaded on the first HTML page rather than at start-up (turndown and its
// DOM parser cost ~100 ms to import).
let turndown: Promise<TurndownService> | undefined;
function getTurndown(): Promise<TurndownService> {
  turndown ??= import('turndown').then(({ default: Turndown }) => {
    const t = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
    t.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'head']);
    return t;
  });
  return turndown;
}

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

export async function bodyToText(
  body: Buffer,
  mediaType: string,
  charset: string | undefined,
): Promise<{ text: string; title: string | undefined; converted: boolean }> {
  const html = isHtmlType(mediaType);
  const text = decoderFor(charset ?? (html ? metaCharset(body) : undefined)).decode(body);
  if (!html) return { text, title: undefined, converted: false };
  return { text: (await getTurndown()).turndown(text).trim(), title: titleOf(text), converted: true };
}
