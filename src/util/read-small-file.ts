/**
 * Reading a small file the permission checks look at (git's `commondir`, `.git` files, configs,
 * ignore files, the index) without blocking nor without end: util/read-regular-file.mjs, which the
 * Grep engines share.
 */
import type fs from 'node:fs';
import { readRegular } from './read-regular-file.mjs';

/**
 * The first `maxBytes` of a regular file (links followed); throws (ENOENT…, ENOTREG for anything but a
 * regular file) as fs does. `whole`: a longer file throws EFBIG instead of being cut. `readAs`: told the
 * fstat of the file read, once read (read-regular-file.mjs).
 */
export function readSmallFile(file: string, maxBytes: number, whole = false, readAs?: (st: fs.Stats) => void): Buffer {
  return readRegular(file, maxBytes, whole ? 'whole' : 'head', readAs);
}

/** readSmallFile as UTF-8 text. */
export function readSmallText(file: string, maxBytes: number, whole = false, readAs?: (st: fs.Stats) => void): string {
  return readSmallFile(file, maxBytes, whole, readAs).toString('utf8');
}
