// The JS engine's worker thread: searches the files it is given, in order,
// and posts the hits back in batches. It runs apart from the service's event
// loop so that a pattern that backtracks for ever only costs this thread,
// which the main thread terminates when a file takes too long. Before each
// file it stores the file's index in shared memory, so the main thread knows
// which one stalled without any message.

import { parentPort, workerData } from 'node:worker_threads';
import { MAX_FILE_BYTES, decodeText, isBinaryHead, readRegularFile, searchText } from './file-scan.mjs';

/** @type {{ files: string[], line: string, whole: string | undefined, flags: string, mode: 'files' | 'count' | 'content', before: number, after: number, progress: SharedArrayBuffer }} */
const job = workerData;
const spec = {
  line: new RegExp(job.line, job.flags),
  whole: job.whole === undefined ? undefined : new RegExp(job.whole, `${job.flags}g`),
  mode: job.mode,
  before: job.before,
  after: job.after,
};
const current = new Int32Array(job.progress);

/** @param {string} file */
function searchFile(file) {
  // Not regular, or over MAX_FILE_BYTES (also one whose stat size says 0, as /proc/self/pagemap's does): skipped, as rg --max-filesize skips it.
  const buf = readRegularFile(file, MAX_FILE_BYTES);
  if (buf === undefined || isBinaryHead(buf)) return undefined;
  try {
    return searchText(decodeText(buf), spec);
  } catch {
    return undefined;
  }
}

/** @type {Array<[number, number, unknown]>} */
let batch = [];
let lastPost = Date.now();
const flush = () => {
  parentPort?.postMessage({ type: 'hits', hits: batch });
  batch = [];
  lastPost = Date.now();
};
for (let i = 0; i < job.files.length; i++) {
  Atomics.store(current, 0, i);
  const r = searchFile(/** @type {string} */ (job.files[i]));
  if (r) batch.push([i, r.count, r.lines]);
  if (batch.length >= 64 || (batch.length > 0 && Date.now() - lastPost > 50)) flush();
}
Atomics.store(current, 0, job.files.length);
if (batch.length > 0) flush();
parentPort?.postMessage({ type: 'done' });
