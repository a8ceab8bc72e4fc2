/**
 * The bash parser: tree-sitter-bash on web-tree-sitter (WebAssembly), loaded
 * once. `initBashParser()` is async and memoised; after it resolves,
 * `analyseBashSync` parses synchronously (the tool's isReadOnly and
 * isConcurrencySafe predicates are synchronous). Nothing blocks at module
 * load. Analyses are kept in a small LRU because one call asks for the same
 * command several times (orchestration, permissions, plan gate, call).
 */
import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import { analyseTree, limitedAnalysis } from './analyse.js';
import type { BashAnalysis } from './types.js';

/**
 * Longest command analysed. Past it the analysis is `tooComplex` (the
 * command can still run, with a person's approval). Bash itself cannot take
 * a single argument over 128 KiB (MAX_ARG_STRLEN).
 */
export const MAX_ANALYSED_CHARS = 100_000;
/** Wall-clock budget of one parse; a parse past it is cancelled. */
const PARSE_BUDGET_MS = 500;
const CACHE_SIZE = 128;

let initPromise: Promise<void> | undefined;
let parser: Parser | undefined;
const cache = new Map<string, BashAnalysis>();

/** Loads the WebAssembly runtime and the bash grammar; safe to call many times. */
export function initBashParser(): Promise<void> {
  if (!initPromise) {
    initPromise = (async () => {
      await Parser.init();
      const require = createRequire(import.meta.url);
      const lang = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
      const p = new Parser();
      p.setLanguage(lang);
      parser = p;
    })();
    // A failed load may be retried by a later call rather than failing forever.
    initPromise.catch(() => {
      initPromise = undefined;
    });
  }
  return initPromise;
}

export function isBashParserReady(): boolean {
  return parser !== undefined;
}

/** Analyses a command; undefined when the parser is not initialised yet. */
export function analyseBashSync(command: string): BashAnalysis | undefined {
  const p = parser;
  if (!p) return undefined;
  const hit = cache.get(command);
  if (hit) {
    cache.delete(command);
    cache.set(command, hit);
    return hit;
  }
  const result = analyseUncached(p, command, 0);
  cache.set(command, result);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return result;
}

/** Analyses a command, loading the parser first if needed. */
export async function analyseBash(command: string): Promise<BashAnalysis> {
  await initBashParser();
  return analyseBashSync(command)!;
}

function analyseUncached(p: Parser, command: string, depth: number): BashAnalysis {
  if (command.length > MAX_ANALYSED_CHARS) {
    return limitedAnalysis(`the command is longer than ${MAX_ANALYSED_CHARS} characters`, command);
  }
  if (command.includes('\u0000')) return limitedAnalysis('the command contains a NUL character', command);
  const deadline = performance.now() + PARSE_BUDGET_MS;
  let tree;
  try {
    p.reset();
    tree = p.parse(command, null, {
      progressCallback: (() => performance.now() > deadline) as unknown as () => void,
    });
  } catch (e) {
    p.reset();
    return limitedAnalysis(`the parser failed: ${(e as Error).message}`, command);
  }
  if (!tree) {
    p.reset();
    return limitedAnalysis('parsing took too long', command);
  }
  try {
    return analyseTree(tree.rootNode, command, depth, (script, d) => analyseUncached(p, script, d));
  } catch (e) {
    return limitedAnalysis(`the analysis failed: ${(e as Error).message}`, command);
  } finally {
    tree.delete();
  }
}
