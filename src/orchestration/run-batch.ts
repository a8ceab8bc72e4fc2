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
 *
 * As in Claude Code, a Bash call that ends in an error cancels the calls of
 * its concurrent run that have not finished: those running are aborted (their
 * processes killed), those not started end at once, both with Claude Code's
 * `Cancelled: parallel tool call Bash(…) errored`. Bash commands run together
 * often depend on each other; other tools' failures (a missing file for Read)
 * say nothing about their siblings, so they cancel nothing. Calls of other
 * runs (before, after) are not touched.
 */
import { messages } from '../permissions/messages.js';
import type { ToolPool } from '../pool/pool.js';
import type { FinishedCall, PreParsed, ToolUse } from '../pipeline/types.js';

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

/**
 * How Claude Code names the call that failed in its siblings' text: the tool
 * and the first 40 characters of its command (or file path, or pattern),
 * with an ellipsis when cut.
 */
export function siblingDescription(name: string, input: unknown): string {
  const i = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const summary = i.command ?? i.file_path ?? i.pattern ?? '';
  if (typeof summary !== 'string' || summary.length === 0) return name;
  return `${name}(${summary.length > 40 ? `${summary.slice(0, 40)}\u2026` : summary})`;
}

/**
 * The text a finished call's concurrent siblings get when it cancels them:
 * only a Bash call that ended in an error (a non-zero exit, a timeout, an
 * input refused, a denial) does, not one that was itself cancelled.
 */
export function siblingCancelReason(f: FinishedCall): string | undefined {
  if (f.tool?.name !== 'Bash' || f.block.is_error !== true || f.status === 'cancelled') return undefined;
  return messages.siblingCancelled(siblingDescription(f.tool.name, f.rawInput));
}

/** How a batch's calls cancel their concurrent siblings (no option: they never do). */
export interface SiblingCancel<T> {
  /** The text the siblings of the call at `index`, which ended with `out`, get; undefined: they go on. */
  cancels(out: T, index: number): string | undefined;
  /** Cancels the call at `index`, running or not started yet, with that text. */
  cancel(index: number, reason: string): void;
}

export async function runBatch<T>(
  uses: readonly ToolUse[],
  pool: ToolPool,
  maxConcurrency: number,
  run: (use: ToolUse, index: number, parsed: PreParsed | undefined) => Promise<T>,
  siblings?: SiblingCancel<T>,
): Promise<T[]> {
  if (uses.length === 1) return [await run(uses[0]!, 0, undefined)];
  const out: T[] = new Array<T>(uses.length);
  const judged = uses.map((u) => judge(u, pool));
  const runs = partition(judged.map((j) => j.safe));
  for (const r of runs) {
    if (r.concurrent && r.indices.length > 1) {
      const task = siblings === undefined ? (i: number) => run(uses[i]!, i, judged[i]!.parsed) : cancelling(r.indices, siblings, (i) => run(uses[i]!, i, judged[i]!.parsed));
      await pooled(r.indices, maxConcurrency, task, out);
    } else for (const i of r.indices) out[i] = await run(uses[i]!, i, judged[i]!.parsed);
  }
  return out;
}

/**
 * A concurrent run's task that, the first time a call's outcome cancels its
 * siblings, cancels every call of the run that has not finished. The pool
 * still starts the ones not started: they end at once, cancelled, and leave
 * their rows like any call.
 */
function cancelling<T>(indices: readonly number[], siblings: SiblingCancel<T>, run: (i: number) => Promise<T>): (i: number) => Promise<T> {
  const finished = new Set<number>();
  let cancelled = false;
  return async (i) => {
    const out = await run(i);
    finished.add(i);
    if (!cancelled) {
      const reason = siblings.cancels(out, i);
      if (reason !== undefined) {
        cancelled = true;
        for (const j of indices) if (!finished.has(j)) siblings.cancel(j, reason);
      }
    }
    return out;
  };
}
