/**
 * Turns either engine's hits into Claude Code's Grep output, so the text a
 * model reads does not depend on the engine:
 *
 * - content: `path:N:line` for matching lines, `path-N-line` for context
 *   (`path:line` / `path-line` without -n), and `--` between groups that are
 *   not adjacent (also between files) when context was asked for;
 * - files_with_matches: `Found N files` then the paths, newest first (ties in
 *   walk order);
 * - count: `path:N` then `Found M total occurrences across N files.`
 *
 * `head_limit` (default 250; 0 = no limit) and `offset` apply to output lines
 * (content, separators included), paths, or count lines. Paths are relative
 * to the session's directory when inside it, absolute otherwise. The text is
 * streamed into the call's output sink, so an unlimited content search keeps
 * memory bounded (past the persist threshold it goes to the result store).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { OutputSink } from '../results/output-sink.js';
import type { FileHit, HitSink, OutputMode } from './types.js';
import { compareWalkOrder } from './walk.js';

export const DEFAULT_HEAD_LIMIT = 250;

export interface CollectOptions {
  mode: OutputMode;
  /** undefined = default; 0 = unlimited. */
  headLimit: number | undefined;
  offset: number;
  showLineNumbers: boolean;
  context: boolean;
  /** The search root (walk order of paths). */
  root: string;
  /** The session's directory, canonical (display paths). */
  cwd: string;
}

export interface CollectResult {
  numFiles: number;
  numLines: number;
  numMatches: number;
  appliedLimit: number | undefined;
  appliedOffset: number | undefined;
  /** Claude Code's `filenames`: the paths shown (files_with_matches, count); [] in content mode, as in Claude Code. */
  filenames: string[];
  /** count: Claude Code's `content`, the `path:N` lines shown. */
  countLines: string | undefined;
  /** content: characters at the end of the text that are notes, not lines (No matches found, the pagination line). */
  trailerChars: number;
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

export class Collector {
  private readonly limit: number;
  private written = 0;
  private seen = 0;
  private truncated = false;
  private prev: { abs: string; n: number } | undefined;
  private readonly files: string[] = [];
  private readonly counts: Array<[string, number]> = [];
  private readonly contentFiles = new Set<string>();

  constructor(
    private readonly opts: CollectOptions,
    private readonly out: OutputSink,
  ) {
    this.limit = opts.headLimit === 0 ? Number.POSITIVE_INFINITY : (opts.headLimit ?? DEFAULT_HEAD_LIMIT);
  }

  display(abs: string): string {
    const rel = path.relative(this.opts.cwd, abs);
    return rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel) ? abs : rel;
  }

  readonly sink: HitSink = (hit: FileHit): boolean => {
    switch (this.opts.mode) {
      case 'files_with_matches':
        this.files.push(hit.abs);
        return true;
      case 'count':
        this.counts.push([hit.abs, hit.count]);
        return true;
      default:
        return this.content(hit);
    }
  };

  private line(text: string): boolean {
    const i = this.seen++;
    if (i < this.opts.offset) return true;
    if (i - this.opts.offset >= this.limit) {
      this.truncated = true;
      return false;
    }
    this.out.write(this.written === 0 ? text : `\n${text}`);
    this.written++;
    return true;
  }

  private content(hit: FileHit): boolean {
    const shown = this.display(hit.abs);
    for (const [n, text, isMatch] of hit.lines ?? []) {
      if (this.opts.context && this.prev && (this.prev.abs !== hit.abs || n !== this.prev.n + 1)) {
        if (!this.line('--')) return false;
      }
      this.prev = { abs: hit.abs, n };
      const sep = isMatch ? ':' : '-';
      const num = this.opts.showLineNumbers ? `${n}${sep}` : '';
      if (!this.line(`${shown}${sep}${num}${text}`)) return false;
      if (this.seen > this.opts.offset) this.contentFiles.add(hit.abs);
    }
    return true;
  }

  private pagination(): { appliedLimit: number | undefined; appliedOffset: number | undefined; info: string } {
    const appliedLimit = this.truncated ? this.limit : undefined;
    const appliedOffset = this.opts.offset > 0 ? this.opts.offset : undefined;
    const parts: string[] = [];
    if (appliedLimit !== undefined) parts.push(`limit: ${appliedLimit}`);
    if (appliedOffset !== undefined) parts.push(`offset: ${appliedOffset}`);
    return { appliedLimit, appliedOffset, info: parts.join(', ') };
  }

  private slice<T>(items: readonly T[]): T[] {
    const from = Math.min(this.opts.offset, items.length);
    const to = Number.isFinite(this.limit) ? from + this.limit : items.length;
    this.truncated = items.length - from > this.limit;
    return items.slice(from, to);
  }

  /** Writes what is left (headers, lists, notes) and reports the figures. */
  /** `note`: a line for the model after the results (files left out of the search, and why). */
  finish(note?: string): CollectResult {
    const noted = note === undefined ? '' : `\n\n${note}`;
    if (this.opts.mode === 'content') {
      const p = this.pagination();
      const trailer = (this.written === 0 ? 'No matches found' : '') + (p.info ? `\n\n[Showing results with pagination = ${p.info}]` : '') + noted;
      this.out.write(trailer);
      return {
        numFiles: this.contentFiles.size,
        numLines: this.written,
        numMatches: 0,
        appliedLimit: p.appliedLimit,
        appliedOffset: p.appliedOffset,
        filenames: [],
        countLines: undefined,
        trailerChars: trailer.length,
      };
    }
    if (this.opts.mode === 'count') {
      const shown = this.slice(this.counts);
      const p = this.pagination();
      const total = shown.reduce((s, [, c]) => s + c, 0);
      const filenames = shown.map(([abs]) => this.display(abs));
      const body = shown.map(([, c], i) => `${filenames[i]}:${c}`).join('\n');
      this.out.write(body || 'No matches found');
      this.out.write(
        `\n\nFound ${total} total ${plural(total, 'occurrence', 'occurrences')} across ${shown.length} ${plural(shown.length, 'file', 'files')}.` +
          (p.info ? ` with pagination = ${p.info}` : '') +
          noted,
      );
      return {
        numFiles: shown.length,
        numLines: shown.length,
        numMatches: total,
        appliedLimit: p.appliedLimit,
        appliedOffset: p.appliedOffset,
        filenames,
        countLines: body,
        trailerChars: 0,
      };
    }
    const sorted = this.sortByMtime(this.files);
    const shown = this.slice(sorted);
    const p = this.pagination();
    const filenames = shown.map((f) => this.display(f));
    if (shown.length === 0) {
      this.out.write('No files found');
    } else {
      this.out.write(`Found ${shown.length} ${plural(shown.length, 'file', 'files')}${p.info ? ` ${p.info}` : ''}\n`);
      this.out.write(filenames.join('\n'));
    }
    if (noted !== '') this.out.write(noted);
    return {
      numFiles: shown.length,
      numLines: 0,
      numMatches: 0,
      appliedLimit: p.appliedLimit,
      appliedOffset: p.appliedOffset,
      filenames,
      countLines: undefined,
      trailerChars: 0,
    };
  }

  /** Newest first; ties (and unreadable times) in walk order. */
  private sortByMtime(files: readonly string[]): string[] {
    const keyed = files.map((abs) => {
      let mtime = 0;
      try {
        mtime = fs.statSync(abs).mtimeMs;
      } catch {
        /* vanished: sorts last */
      }
      return { abs, rel: path.relative(this.opts.root, abs), mtime };
    });
    keyed.sort((a, b) => b.mtime - a.mtime || compareWalkOrder(a.rel, b.rel));
    return keyed.map((k) => k.abs);
  }
}
