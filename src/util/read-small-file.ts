/**
 * Reading a small file the permission checks look at (git's `commondir`, `.git` files, configs,
 * ignore files, the index) without letting the file decide how long the read takes: opened
 * non-blocking (a FIFO, or a link to one, does not hold the open), and read only when it is a
 * regular file, at most `maxBytes`. `fs.readFileSync` on a FIFO blocked the event loop until a
 * writer came (every request of the service waited), and on a link to /dev/zero read without end.
 */
import fs from 'node:fs';

/**
 * The first `maxBytes` of a regular file (links followed); throws (ENOENT…, ENOTREG for anything but a
 * regular file) as fs does. `whole`: a longer file throws EFBIG instead of being cut.
 */
export function readSmallFile(file: string, maxBytes: number, whole = false): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`not a regular file: ${file}`), { code: 'ENOTREG' });
    if (whole && st.size > maxBytes) throw Object.assign(new Error(`longer than ${maxBytes} bytes: ${file}`), { code: 'EFBIG' });
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    let n = 0;
    while (n < buf.length) {
      const got = fs.readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** readSmallFile as UTF-8 text. */
export function readSmallText(file: string, maxBytes: number, whole = false): string {
  return readSmallFile(file, maxBytes, whole).toString('utf8');
}
