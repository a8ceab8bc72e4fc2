/**
 * The JavaScript engine: used where rg is not installed (or when the config
 * says `grep.engine: "js"`). The main thread walks (walk.ts: filters and Read
 * deny rules); a worker thread reads and matches (js-worker.mjs), because a
 * JS RegExp backtracks and a pattern like `(a+)+$` on a long line would never
 * return. The main thread watches the worker: one file taking longer than
 * `fileStallMs`, or the whole search longer than `totalMs`, ends the worker
 * and the call with a timeout error; a cancel ends it at once.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ToolError } from '../pipeline/error-class.js';
import type { ShownLine } from './file-scan.mjs';
import type { EngineLimits, HitSink, SearchQuery } from './types.js';
import { compareWalkOrder, walkFiles } from './walk.js';

const WORKER_URL = new URL('./js-worker.mjs', import.meta.url);
const WATCH_INTERVAL_MS = 100;

type WorkerMessage = { type: 'hits'; hits: Array<[number, number, ShownLine[] | undefined]> } | { type: 'done' };

/**
 * `from`: the search goes on from this file (in walk order, it included), as the rg engine asks when rg
 * meets a line too long to report (rg-engine.ts). `files`: these files (in walk order, already filtered
 * and screened for deny rules) are searched instead of the walk's, as the rg engine asks for the files
 * of a multiline search that hold a long line.
 */
export async function searchJs(
  q: SearchQuery,
  sink: HitSink,
  limits: EngineLimits,
  { from, files: given }: { from?: string; files?: readonly string[] } = {},
): Promise<void> {
  const started = performance.now();
  let files = given !== undefined ? [...given] : await walkFiles(q);
  if (from !== undefined) {
    const start = path.relative(q.root, from);
    files = files.filter((f) => compareWalkOrder(path.relative(q.root, f), start) >= 0);
  }
  if (files.length === 0) return;
  const wholeText = q.multiline && q.pattern.canMatchNewline;
  const progress = new SharedArrayBuffer(4);
  const current = new Int32Array(progress);
  const worker = new Worker(WORKER_URL, {
    workerData: {
      files,
      line: q.pattern.jsLine,
      whole: wholeText ? q.pattern.jsText : undefined,
      flags: q.pattern.flags,
      mode: q.mode === 'files_with_matches' ? 'files' : q.mode,
      before: q.before,
      after: q.after,
      progress,
    },
    // The worker needs no more than a search's working set.
    resourceLimits: { maxOldGenerationSizeMb: 512 },
    stdout: false,
    stderr: false,
  });

  await new Promise<void>((resolve, reject) => {
    let settled = false;
    let lastIndex = -1;
    let lastChange = performance.now();
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
      q.signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err) reject(err);
      else resolve();
    };
    const onAbort = (): void => finish(new ToolError('The search was cancelled.', 'cancelled'));
    q.signal.addEventListener('abort', onAbort, { once: true });
    const watch = setInterval(() => {
      const now = performance.now();
      const i = Atomics.load(current, 0);
      if (i !== lastIndex) {
        lastIndex = i;
        lastChange = now;
      } else if (now - lastChange > limits.fileStallMs && i < files.length) {
        finish(
          new ToolError(
            `Grep timed out: searching ${files[i]} took longer than ${limits.fileStallMs / 1000} s. The pattern probably backtracks catastrophically ` +
              '(nested quantifiers such as (a+)+ on a long line); simplify it, or narrow the search with path or glob. ' +
              '(The JavaScript search engine is in use because ripgrep is not available.)',
            'timeout',
          ),
        );
        return;
      }
      if (now - started > limits.totalMs) {
        finish(new ToolError(`Grep timed out after ${limits.totalMs / 1000} s; narrow the search with path, glob or type.`, 'timeout'));
      }
    }, WATCH_INTERVAL_MS);
    watch.unref();
    worker.on('message', (m: WorkerMessage) => {
      if (settled) return;
      if (m.type === 'done') return finish();
      for (const [i, count, lines] of m.hits) {
        if (!sink({ abs: files[i]!, count, lines })) return finish();
      }
    });
    worker.on('error', (e) => finish(new ToolError(`The search failed: ${e.message}`, 'internal')));
    // A worker that ends without saying 'done' (and was not ended by us) failed.
    worker.on('exit', (code) => finish(new ToolError(`The search worker stopped unexpectedly (exit code ${code}).`, 'internal')));
  });
}
