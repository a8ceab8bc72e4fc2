/** What Grep's two engines share: the resolved query and the per-file hits they report. */
import type { ShownLine } from './file-scan.mjs';
import type { Overrides, TypeFilter } from './filter.js';
import type { CompiledPattern } from './regex.js';

export type OutputMode = 'content' | 'files_with_matches' | 'count';

export interface SearchQuery {
  /** Canonical absolute directory searched (rg's working directory). */
  root: string;
  /** When the path named a file: its name in `root`; only it is searched. */
  single: string | undefined;
  pattern: CompiledPattern;
  ignoreCase: boolean;
  multiline: boolean;
  mode: OutputMode;
  /** Context lines (content mode). */
  before: number;
  after: number;
  /** The user's globs, split as Claude Code splits them. */
  userGlobs: readonly string[];
  /** Exclusions plus userGlobs, compiled (the JS walk). */
  overrides: Overrides;
  type: { name: string; globs: readonly string[] } | undefined;
  typeFilter: TypeFilter | undefined;
  /** A Read deny rule covers this absolute path. */
  isDenied(abs: string): boolean;
  /**
   * The file (a real path) is a hard link to a Read-denied file, or may be
   * (permissions/hard-links.ts): it is not searched either.
   */
  isLinkDenied?(abs: string): boolean;
  /**
   * Files (absolute) left out of this search because the other engine answers for them: in a multiline
   * search on rg, those holding a line over MAX_LINE_BYTES (rg-engine.ts, searchMultiline).
   */
  exclude?: ReadonlySet<string>;
  signal: AbortSignal;
  env: NodeJS.ProcessEnv;
}

/** One file with matches. */
export interface FileHit {
  abs: string;
  /** Matching lines; in multiline mode with a pattern that can match \n, matches. */
  count: number;
  /** content mode: the lines to show (matches and context). */
  lines: ShownLine[] | undefined;
}

/**
 * Receives hits: in walk order for content and count, in any order for
 * files_with_matches. Returns false when it has seen enough (the engine stops).
 */
export type HitSink = (hit: FileHit) => boolean;

export interface EngineLimits {
  /** A single file may take this long before the JS engine gives up (pathological patterns). */
  fileStallMs: number;
  /** The whole search may take this long. */
  totalMs: number;
}

export const DEFAULT_LIMITS: EngineLimits = { fileStallMs: 10_000, totalMs: 120_000 };
