/**
 * The JS engine's directory walk: the files rg would search, in the order
 * `rg --sort path` visits them (depth first, each directory's entries sorted
 * by the bytes of their names), honouring filter.ts's rules, skipping
 * symbolic links and anything that is not a regular file, and skipping every
 * file and directory a Read deny rule covers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ToolError } from '../pipeline/error-class.js';
import { ancestorRules, dirRules, keepEntry, type DirRules, type EntryFilter } from './filter.js';
import type { SearchQuery } from './types.js';

/** Directory entries visited at most by one search. */
export const WALK_MAX_ENTRIES = 1_000_000;

const ASCII = /^[\x00-\x7f]*$/;

/** Byte order of two names (rg sorts by the OS string's bytes). */
export function compareNames(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Walk order of two paths relative to the same root: component by component. */
export function compareWalkOrder(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  const n = Math.min(pa.length, pb.length);
  for (let i = 0; i < n; i++) {
    const c = compareNames(pa[i]!, pb[i]!);
    if (c !== 0) return c;
  }
  return pa.length - pb.length;
}

interface Frame {
  dir: string;
  rules: DirRules;
  entries: fs.Dirent[];
  i: number;
}

/** The files to search, in walk order. */
export async function walkFiles(q: SearchQuery): Promise<string[]> {
  if (q.single !== undefined) {
    // A file given as the path is searched whatever the filters say (as rg does with a file argument).
    const abs = path.join(q.root, q.single);
    return q.isDenied(abs) || q.isLinkDenied?.(abs) || q.exclude?.has(abs) ? [] : [abs];
  }
  const filter: EntryFilter = { overrides: q.overrides, type: q.typeFilter };
  const files: string[] = [];
  const rootEntries = await listDir(q.root);
  if (rootEntries === undefined) return files;
  // Depth first with an explicit stack: a subdirectory is finished before its next sibling.
  const stack: Frame[] = [frame(q.root, rootEntries, ancestorRules(q.root))];
  let visited = 0;
  while (stack.length > 0) {
    if (q.signal.aborted) throw new ToolError('The search was cancelled.', 'cancelled');
    const top = stack[stack.length - 1]!;
    if (top.i >= top.entries.length) {
      stack.pop();
      continue;
    }
    const e = top.entries[top.i++]!;
    if (++visited > WALK_MAX_ENTRIES) {
      throw new ToolError(
        `The search visited more than ${WALK_MAX_ENTRIES.toLocaleString('en-US')} entries; narrow it with path, glob or type.`,
        'tool_error',
      );
    }
    if (e.isSymbolicLink()) continue;
    const isDir = e.isDirectory();
    if (!isDir && !e.isFile()) continue;
    const abs = top.dir === '/' ? `/${e.name}` : `${top.dir}/${e.name}`;
    if (!keepEntry(filter, top.rules, q.root, abs, e.name, isDir)) continue;
    if (q.isDenied(abs)) continue;
    if (!isDir) {
      if (!q.isLinkDenied?.(abs) && !q.exclude?.has(abs)) files.push(abs);
      continue;
    }
    const entries = await listDir(abs);
    if (entries !== undefined) stack.push(frame(abs, entries, top.rules));
  }
  return files;
}

function frame(dir: string, entries: fs.Dirent[], parent: DirRules | undefined): Frame {
  const names = new Set(entries.map((x) => x.name));
  return { dir, rules: dirRules(dir, parent, names), entries: entries.sort((a, b) => compareNames(a.name, b.name)), i: 0 };
}

async function listDir(dir: string): Promise<fs.Dirent[] | undefined> {
  try {
    return await fs.promises.readdir(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
}
