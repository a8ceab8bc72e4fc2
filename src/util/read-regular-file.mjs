// Reading a file whose contents decide something (git's `commondir`, `.git` files, configs, ignore
// files, the index; a file Grep searches) without letting the file decide how long the read takes:
// opened non-blocking (a FIFO, or a link to one, does not hold the open), and read only when it is a
// regular file, at most `maxBytes`. `fs.readFileSync` on a FIFO blocked the event loop until a
// writer came (every request of the service waited), and on a link to /dev/zero read without end.
// Plain JavaScript (with types in read-regular-file.d.mts) because the Grep worker thread loads its
// importer (grep/file-scan.mjs) directly; the permission checks use it through read-small-file.ts.

import { Buffer } from 'node:buffer';
import fs from 'node:fs';

/**
 * A regular file's bytes (links followed). Throws as fs does (ENOENT…), ENOTREG for anything but a
 * regular file, and EFBIG for one longer than `maxBytes` unless `how` is 'head'. `how`:
 * - 'head': the first `maxBytes` of the size fstat states;
 * - 'whole': the size fstat states;
 * - 'to-end': up to the end whatever fstat states (a /proc file whose stat says 0 may hold
 *   gigabytes), in whole 64 KB blocks past the stated size (some /proc files refuse odd lengths).
 * @param {string} file
 * @param {number} maxBytes
 * @param {'head' | 'whole' | 'to-end'} how
 * @param {(st: fs.Stats) => void} [readAs] told, once the bytes are read, what the descriptor read
 *   (fstat): the identity of the file whose bytes these are, whatever the path leads to by then
 * @returns {Buffer}
 */
export function readRegular(file, maxBytes, how, readAs) {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`not a regular file: ${file}`), { code: 'ENOTREG' });
    if (how !== 'head' && st.size > maxBytes) throw tooLong(file, maxBytes);
    if (how === 'to-end') {
      const all = readToEnd(fd, st.size, file, maxBytes);
      readAs?.(fs.fstatSync(fd));
      return all;
    }
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    let n = 0;
    while (n < buf.length) {
      const got = fs.readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    readAs?.(fs.fstatSync(fd));
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * @param {number} fd
 * @param {number} size what fstat states
 * @param {string} file
 * @param {number} maxBytes
 * @returns {Buffer}
 */
function readToEnd(fd, size, file, maxBytes) {
  /** @type {Buffer[]} */
  const chunks = [];
  let total = 0;
  while (total <= maxBytes) {
    const want = total === 0 && size > 0 ? size + 1 : 64 * 1024;
    const buf = Buffer.allocUnsafe(want);
    const n = fs.readSync(fd, buf, 0, want, total);
    if (n === 0) return Buffer.concat(chunks, total);
    chunks.push(n === want ? buf : buf.subarray(0, n));
    total += n;
  }
  throw tooLong(file, maxBytes);
}

/** @param {string} file @param {number} maxBytes */
function tooLong(file, maxBytes) {
  return Object.assign(new Error(`longer than ${maxBytes} bytes: ${file}`), { code: 'EFBIG' });
}
