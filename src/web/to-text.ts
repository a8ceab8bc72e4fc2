/**
 * A fetched body as text for the model: HTML converted to Markdown with
 * turndown (scripts, styles and other non-content elements dropped), other
 * text decoded with its charset (from the header, or for HTML a `<meta
 * charset>`; UTF-8 otherwise). The conversion runs in a worker thread
 * (html-worker.mjs) with a time limit.
 */
import { TextDecoder } from 'node:util';
import { Worker } from 'node:worker_threads';
import { ToolError } from '../pipeline/error-class.js';
import { isHtmlType } from './http-get.js';

/** How long converting one page's HTML may take. */
export const HTML_CONVERT_TIMEOUT_MS = 15_000;
const WORKER_URL = new URL('./html-worker.mjs', import.meta.url);

/**
 * HTML to Markdown (turndown) and the page's title, in a worker thread that
 * is ended after `timeoutMs` or on cancel: the conversion's time grows
 * faster than the page, and on the event loop a hostile page of deeply
 * nested elements would hold every other call (and /healthz) for minutes.
 */
function convertHtml(html: string, timeoutMs: number, signal?: AbortSignal): Promise<{ text: string; title: string | undefined }> {
  const worker = new Worker(WORKER_URL, { workerData: { html }, resourceLimits: { maxOldGenerationSizeMb: 512 }, stdout: false, stderr: false });
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, out?: { text: string; title: string | undefined }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err) reject(err);
      else resolve(out!);
    };
    const onAbort = (): void => finish(Object.assign(new Error('The fetch was cancelled'), { name: 'AbortError' }));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => finish(new ToolError(`WebFetch could not convert the page's HTML to text within ${timeoutMs / 1000} s (it is too large or too deeply nested).`, 'timeout')),
      timeoutMs,
    );
    timer.unref();
    worker.on('message', (m: { ok: true; text: string; title: string | undefined } | { ok: false; message: string }) =>
      m.ok
        ? finish(undefined, { text: m.text, title: m.title })
        : finish(new ToolError(`WebFetch could not convert the page's HTML to text: ${m.message}`, 'tool_error')),
    );
    worker.on('error', (e) => finish(new ToolError(`WebFetch could not convert the page's HTML to text: ${e.message}`, 'tool_error')));
    worker.on('exit', (code) => finish(new ToolError(`The HTML conversion stopped unexpectedly (exit code ${code}).`, 'internal')));
  });
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

export async function bodyToText(
  body: Buffer,
  mediaType: string,
  charset: string | undefined,
  signal?: AbortSignal,
  timeoutMs = HTML_CONVERT_TIMEOUT_MS,
): Promise<{ text: string; title: string | undefined; converted: boolean }> {
  const html = isHtmlType(mediaType);
  const text = decoderFor(charset ?? (html ? metaCharset(body) : undefined)).decode(body);
  if (!html) return { text, title: undefined, converted: false };
  return { ...(await convertHtml(text, timeoutMs, signal)), converted: true };
}
