/**
 * What a small file the permission checks read says (a git configuration, a
 * `commondir`, a `.git` file's `gitdir:` line), kept between decisions by the
 * file's identity: device, inode, size, modification and change times. A
 * decision stats the file (once, util/decision-memo.ts) and reads it again
 * only when that identity moved; an edit, a replacement, a delete or a
 * creation all move it (ctime: `touch -r` sets mtime back, never ctime).
 *
 * What is read within a clock tick of the file's last change is not kept: a
 * rewrite of the same size in the same tick would keep the identity, and the
 * old text would be taken for the new (hard-links.ts MODIFIED_LATELY_MS, as the
 * directory listings kept by hard-links.ts and tree-reach.ts).
 */
import fs from 'node:fs';
import { memoFs } from '../util/decision-memo.js';
import { readSmallText } from '../util/read-small-file.js';
import { MODIFIED_LATELY_MS as SETTLED_MS } from './hard-links.js';

/** Files kept per reader, at most (then all are forgotten: a few configuration files are the usual). */
const KEPT_LIMIT = 512;

export class KeptReads<T> {
  private readonly kept = new Map<string, { dev: number; ino: number; size: number; mtimeMs: number; ctimeMs: number; value: T }>();

  /** `parse`: what the text says; `maxBytes`: how much of the file is read. */
  constructor(
    private readonly parse: (text: string) => T,
    private readonly maxBytes: number,
  ) {}

  /**
   * What the regular file (links followed) says, or undefined when there is none there or it cannot be
   * read (as readSmallText would fail on it: missing, not a regular file, not readable).
   */
  get(file: string): { value: T } | undefined {
    let st: fs.Stats | undefined;
    try {
      st = memoFs.stat(file);
    } catch {
      return undefined;
    }
    if (!st?.isFile()) return undefined;
    const k = this.kept.get(file);
    if (k !== undefined && k.dev === st.dev && k.ino === st.ino && k.size === st.size && k.mtimeMs === st.mtimeMs && k.ctimeMs === st.ctimeMs) return { value: k.value };
    let text: string;
    let read: fs.Stats | undefined;
    try {
      text = readSmallText(file, this.maxBytes, false, (at) => (read = at));
    } catch {
      return undefined;
    }
    const value = this.parse(text);
    // Kept under the identity of the file the descriptor read, not of the one stat'ed above: a link (the file's
    // own, or a directory's above it) moved between the two, and back later, would otherwise leave the other
    // file's text kept under this one's identity, and answer for it in every later decision. Only once its
    // times are past the clock's grain, as fstat says after the read: a change made while reading leaves them
    // recent, and nothing is kept.
    if (read !== undefined && Date.now() - Math.max(read.ctimeMs, read.mtimeMs) > SETTLED_MS) {
      if (this.kept.size >= KEPT_LIMIT) this.kept.clear();
      this.kept.set(file, { dev: read.dev, ino: read.ino, size: read.size, mtimeMs: read.mtimeMs, ctimeMs: read.ctimeMs, value });
    }
    return { value };
  }
}
