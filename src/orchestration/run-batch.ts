/**
 * Orchestration (contract §4): a batch of tool uses is split into runs.
 * Consecutive concurrency-safe calls (decided on the parsed input; a throw
 * counts as unsafe) run together, at most `maxConcurrency` at once; every
 * other call runs alone, in order. Results come back in request order,
 * whatever order they finished in.
 */
import type { ToolPool } from '../pool/pool.js';
import type { ToolUse } from '../pipeline/types.js';

/** Whether a tool use may run beside others (Claude Code's runTools rule). */
export function isSafeToRunConcurrently(use: ToolUse, pool: ToolPool): boolean {
  if (use.inputError !== undefined) return true; // fails at parse without side effects
  const tool = pool.lookup(use.name);
  if (!tool) return true; // fails at lookup without side effects
  const r = tool.inputSchema.safeParse(use.input);
  if (!r.success) return true; // fails at parse
  try {
    return tool.isConcurrencySafe(r.data) === true;
  } catch {
    return false;
  }
}

/** Indices grouped into runs: each run is either concurrent or a single call. */
export function partition(safe: readonly boolean[]): { concurrent: boolean; indices: number[] }[] {
  const runs: { concurrent: boolean; indices: number[] }[] = [];
  for (let i = 0; i < safe.length; i++) {
    const last = runs[runs.length - 1];
    if (safe[i] && last?.concurrent) last.indices.push(i);
    else runs.push({ concurrent: safe[i] === true, indices: [i] });
  }
  return runs;
}

/** Runs `task(i)` for each index with at most `limit` in flight. */
async function pooled<T>(indices: readonly number[], limit: number, task: (i: number) => Promise<T>, out: T[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < indices.length) {
      const i = indices[next++]!;
      out[i] = await task(i);
    }
  };
  const n = Math.max(1, Math.min(limit, indices.length));
  const workers: Promise<void>[] = [];
  for (let w = 0; w < n; w++) workers.push(worker());
  await Promise.all(workers);
}

export async function runBatch<T>(
  uses: readonly ToolUse[],
  pool: ToolPool,
  maxConcurrency: number,
  run: (use: ToolUse, index: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = new Array<T>(uses.length);
  const runs = partition(uses.map((u) => isSafeToRunConcurrently(u, pool)));
  for (const r of runs) {
    if (r.concurrent && r.indices.length > 1) await pooled(r.indices, maxConcurrency, (i) => run(uses[i]!, i), out);
    else for (const i of r.indices) out[i] = await run(uses[i]!, i);
  }
  return out;
}
