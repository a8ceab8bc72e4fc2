/**
 * Which engine runs a search: `grep.engine` is `rg` (ripgrep, required),
 * `js` (the JavaScript engine), or `auto` (rg where it is installed). Both
 * give the same results on the same inputs (see filter.ts, regex.ts,
 * file-scan.mjs); the test suite runs a table of queries through both.
 */
import { spawnSync } from 'node:child_process';
import { ToolError } from '../pipeline/error-class.js';
import { searchJs } from './js-engine.js';
import { searchRg } from './rg-engine.js';
import type { EngineLimits, HitSink, SearchQuery } from './types.js';

export type EngineName = 'rg' | 'js';

/** Whether `rg` runs under a PATH; probed once per PATH value. */
const probed = new Map<string, boolean>();

export function rgAvailable(env: NodeJS.ProcessEnv): boolean {
  const key = env.PATH ?? '';
  let ok = probed.get(key);
  if (ok === undefined) {
    const r = spawnSync('rg', ['--version'], { env, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });
    ok = r.status === 0 && /^ripgrep \d+/.test(r.stdout?.toString() ?? '');
    // A probe cut short (a machine so loaded that rg --version took 5 s) tells nothing: this search
    // uses the JS engine, and the next one asks again, rather than the whole process doing so for good.
    if (ok || (r.error as NodeJS.ErrnoException | undefined)?.code !== 'ETIMEDOUT') probed.set(key, ok);
  }
  return ok;
}

export function chooseEngine(setting: 'auto' | 'rg' | 'js', env: NodeJS.ProcessEnv): EngineName {
  if (setting === 'js') return 'js';
  if (rgAvailable(env)) return 'rg';
  if (setting === 'rg') {
    throw new ToolError('grep.engine is "rg", but ripgrep (rg) is not installed or not on PATH. Install ripgrep, or set grep.engine to "auto".', 'internal');
  }
  return 'js';
}

export function runSearch(engine: EngineName, q: SearchQuery, sink: HitSink, limits: EngineLimits): Promise<void> {
  return engine === 'rg' ? searchRg(q, sink, limits) : searchJs(q, sink, limits);
}
