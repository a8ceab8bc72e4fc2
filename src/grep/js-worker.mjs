// The JS engine's worker thread: searches the files it is given, in order,
// and posts the hits back in batches. It runs apart from the service's event
// loop so that a pattern that backtracks for ever only costs this thread,
// which the main thread terminates when a file takes too long. Before each
// file it stores the file's index in shared memory, so the main thread knows
// which one stalled without any message.

import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { MAX_FILE_BYTES, decodeText, isBinaryHead, searchText } from './file-scan.mjs';

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

/**
 * The bytes of an open file, or undefined once past MAX_FILE_BYTES (skipped,
 * as rg --max-filesize skips it): a file whose stat size says 0 but holds
 * gigabytes (/proc/self/pagemap) is not read without end. Past the stated
 * size it reads whole 64 KB blocks (some /proc files refuse odd lengths).
 * @param {number} fd
 * @param {number} size
 */
function readBounded(fd, size) {
  /** @type {Buffer[]} */
  const chunks = [];
  let total = 0;
  while (total <= MAX_FILE_BYTES) {
    const want = total === 0 && size > 0 ? size + 1 : 64 * 1024;
    const buf = Buffer.allocUnsafe(want);
    const n = fs.readSync(fd, buf, 0, want, total);
    if (n === 0) return Buffer.concat(chunks, total);
    chunks.push(n === want ? buf : buf.subarray(0, n));
    total += n;
  }
  return undefined;
}

/** @param {string} file */
function searchFile(file) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return undefined;
    const buf = readBounded(fd, st.size);
    if (buf === undefined || isBinaryHead(buf)) return undefined;
    return searchText(decodeText(buf), spec);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
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
