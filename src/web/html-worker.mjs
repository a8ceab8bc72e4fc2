// WebFetch's HTML conversion, in a worker thread: turndown (and its DOM
// parser) and the title's RegExp take time that grows faster than the page
// (50,000 nested <div>s: 30 s, then a stack overflow), so they run here,
// where the main thread can end them, and never on the service's event loop.
// Posts {ok: true, text, title} or {ok: false, message}.

import { parentPort, workerData } from 'node:worker_threads';
import Turndown from 'turndown';

/** @param {string} html */
function titleOf(html) {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const t = m?.[1]?.replace(/\s+/g, ' ').trim();
  return t ? t : undefined;
}

/** @type {{ html: string }} */
const job = workerData;
try {
  const t = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
  t.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'head']);
  parentPort?.postMessage({ ok: true, text: t.turndown(job.html).trim(), title: titleOf(job.html) });
} catch (e) {
  parentPort?.postMessage({ ok: false, message: e instanceof Error ? e.message : String(e) });
}
