/**
 * Orchestration (contract §4): a batch of tool uses is split into runs.
 * Consecutive concurrency-safe calls (decided on the parsed input; a throw
 * counts as unsafe) run together, at most `maxConcurrency` at once; every
 * other call runs alone, in order. Results come back in request order,
 * whatever order they finished in.
 *
 * A batch of one call runs alone whatever its safety, so it is not judged;
 * in a larger batch, the parse done to judge a call is handed to its step 2
 * rather than done twice (zod's parse is most of a small call's step 2).
 */
import type { ToolPool } from '../pool/pool.js';
import type { PreParsed, ToolUse } from '../pipeline/types.js';

/** Whether a tool use may run beside others (Claude Code's runTools rule). */
export function isSafeToRunConcurrently(use: ToolUse, pool: ToolPool): boolean {
  return judge(use, pool).safe;
}

function judge(use: ToolUse, pool: ToolPool): { safe: boolean; parsed: PreParsed | undefined } {
  if (use.inputError !== undefined) return { safe: true, parsed: undefined }; // fails at parse without side effects
  const tool = pool.lookup(use.name);
  if (!tool) return { safe: true, parsed: undefined }; // fails at lookup without side effects
  let r: ReturnType<typeof tool.inputSchema.safeParse>;
  try {
    r = tool.inputSchema.safeParse(use.input);
  } catch {
    return { safe: false, parsed: undefined }; // a refinement that throws: step 2 reports it, alone
  }
  if (!r.success) return { safe: true, parsed: undefined }; // fails at parse
  const parsed: PreParsed = { tool, raw: use.input, data: r.data };
  try {
    return { safe: tool.isConcurrencySafe(r.data) === true, parsed };
  } catch {
    return { safe: false, parsed };
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
  run: (use: ToolUse, index: number, parsed: PreParsed | undefined) => Promise<T>,
): Promise<T[]> {
  if (uses.length === 1) return [await run(uses[0]!, 0, undefined)];
  const out: T[] = new Array<T>(uses.length);
  const judged = uses.map((u) => judge(u, pool));
  const runs = partition(judged.map((j) => j.safe));
  for (const r of runs) {
    if (r.concurrent && r.indices.length > 1) await pooled(r.indices, maxConcurrency, (i) => run(uses[i]!, i, judged[i]!.parsed), out);
    else for (const i of r.indices) out[i] = await run(uses[i]!, i, judged[i]!.parsed);
  }
  return out;
}
