/**
 * Runs a batch of tool uses for a session: idempotency on (session, tool_use
 * id) — a repeat returns the first outcome, awaited if still running, marked
 * replayed — then orchestration and the pipeline. Both POST /execute and the
 * MCP server use it.
 */
import type { Logger } from 'pino';
import { ToolexecError } from '../errors.js';
import type { ToolPool } from '../pool/pool.js';
import { runBatch, siblingCancelReason } from '../orchestration/run-batch.js';
import { canonicalJson, digestInput, inputKey, safeStringify } from '../pipeline/digest.js';
import { queueCall, runToolUse } from '../pipeline/run-tool-use.js';
import { CallAbort } from '../pipeline/cancel.js';
import type { FinishedCall, PipelineDeps, PreParsed, QueuedCall, ToolUse } from '../pipeline/types.js';
import type { Session } from '../sessions/session.js';
import { inputMayBeCut, storedBlock, type ExecutionRow } from '../storage/executions.js';
import type { ToolResultBlock } from '../tool/types.js';
import type { ExecutionRegistry } from './registry.js';

/** What the API reports for one execution. */
export interface ExecutionSummary {
  id: string;
  session_id: string;
  tool_use_id: string;
  tool: string;
  status: string;
  decision: { behavior: string; reason: { type: string; detail: string } } | null;
  duration_ms: number | null;
  error_class: string | null;
  result_id: string | null;
  replayed?: true;
}

export interface BatchItem {
  use: ToolUse;
  executionId: string;
  replayed: boolean;
  /** The queued state of a new call (for wait:false answers). */
  queued: QueuedCall | undefined;
  done: Promise<{ summary: ExecutionSummary; block: ToolResultBlock }>;
}

/**
 * `p`, marked handled. An item's `done` is awaited only by a caller that
 * waits (POST /execute with wait:true, /mcp): after a wait:false answer a
 * call whose record could not be committed (a full or read-only database,
 * the database closed under a shutdown) rejects it with nobody listening,
 * and Node ends the process on an unhandled rejection.
 */
const ignore = (): void => {};
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(ignore);
  return p;
}

export function summaryOfCall(f: FinishedCall): ExecutionSummary {
  return {
    id: f.id,
    session_id: f.sessionId,
    tool_use_id: f.toolUseId,
    tool: f.tool?.name ?? f.name,
    status: f.status,
    decision: f.decision ? { behavior: f.decision.behavior, reason: f.decision.reason } : null,
    duration_ms: Math.round(f.durationMs * 1000) / 1000,
    error_class: f.errorClass,
    result_id: f.resultId,
  };
}

export function summaryOfRow(r: ExecutionRow): ExecutionSummary {
  let decision: ExecutionSummary['decision'] = null;
  if (r.decision) {
    try {
      const d = JSON.parse(r.decision) as { behavior: string; reason: { type: string; detail: string } };
      decision = { behavior: d.behavior, reason: d.reason };
    } catch {
      decision = null;
    }
  }
  return {
    id: r.id,
    session_id: r.session_id,
    tool_use_id: r.tool_use_id,
    tool: r.tool,
    status: r.status,
    decision,
    duration_ms: r.duration_ms,
    error_class: r.error_class,
    result_id: r.result_id,
  };
}

function blockOfRow(r: ExecutionRow): ToolResultBlock {
  return storedBlock(r) ?? { type: 'tool_result', tool_use_id: r.tool_use_id, content: '', is_error: r.is_error === 1 };
}

export interface ExecutorOptions {
  deps: PipelineDeps;
  registry: ExecutionRegistry;
  maxConcurrency: number;
  /** Back-pressure: a batch that would take the live calls past this is refused (`TOOLEXEC_ERR_OVERLOADED`). */
  maxInFlight?: number;
  /** Calls waiting for a person's answer (a count), of which at most `max` are not counted in flight. */
  waiting?: { count: () => number; max: number };
}

type EarlierCall =
  | { kind: 'live'; live: NonNullable<ReturnType<ExecutionRegistry['findByToolUse']>> }
  | { kind: 'held'; id: string }
  | { kind: 'row'; row: ExecutionRow };

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || canonicalJson(a) === canonicalJson(b);
}

function parsedOr(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

function reusedId(use: ToolUse, index: number, where: string): ToolexecError {
  return new ToolexecError(
    'TOOLEXEC_ERR_TOOL_USE_ID_REUSED',
    `tool_uses[${index}]: the id ${use.id} already names ${where} with another name or input. A repeated id replays that call's outcome (a retry), so every call of a session needs its own id`,
    { tool_use_id: use.id },
  );
}

export class Executor {
  constructor(private readonly opts: ExecutorOptions) {}

  get pool(): ToolPool {
    return this.opts.deps.pool();
  }

  /**
   * The call a use's id already names in this session (earlier in the batch,
   * running, or on record), or undefined for a new call. A repeated id
   * replays that call, so it must be that call, retried: an id reused for
   * another tool or input (a loop that numbers calls tool_1, tool_2, … anew
   * each turn) is refused, where it used
   * to be answered with the first call's result as if it were its own.
   * Inputs are compared as values (key order aside: a conversation stored
   * in a database that sorts keys and sent again is the same retry).
   */
  private earlierCall(session: Session, uses: readonly ToolUse[], firstOf: Map<string, number> | undefined, index: number): EarlierCall | undefined {
    const { deps, registry } = this.opts;
    const use = uses[index]!;
    const first = firstOf?.get(use.id) ?? index;
    if (first === index) firstOf?.set(use.id, index);
    else {
      const u = uses[first]!;
      if (u.name !== use.name || !sameValue(u.input, use.input)) throw reusedId(use, index, `tool_uses[${first}] of this request (${u.name})`);
      return undefined;
    }
    const live = registry.findByToolUse(session.id, use.id);
    if (live?.done) {
      if (!this.sameTool(live.call.name, use.name) || !sameValue(live.call.rawInput, use.input)) {
        throw reusedId(use, index, `a call of this session still running (${live.call.name})`);
      }
      return { kind: 'live', live };
    }
    let earlier = session.toolUses.get(use.id);
    let row = earlier === undefined ? undefined : deps.executions.get(earlier);
    if (earlier === undefined && session.toolUses.mayBeOlder(use.id)) {
      // Past the recent window only a hash is kept: the database settles it.
      row = deps.executions.findByToolUse(session.id, use.id);
      // Or a call whose row is still held (an id pushed out of the recent ones while the database refused writes).
      earlier = row?.id ?? deps.executions.heldOf(session.id).find((h) => h.tool_use_id === use.id)?.id;
    }
    if (earlier !== undefined && !row && deps.executions.isHeld(earlier)) return { kind: 'held', id: earlier };
    if (!row) return undefined;
    // An input stored cut (inputMayBeCut) or masked is compared by its input key, the digest of its
    // keys-sorted JSON, which covers the whole as sent (a cut row of an older version, without one, by the
    // digest of the JSON as sent); a row without its input (written before inputs were kept) by the tool alone.
    const same =
      row.input === null
        ? true
        : row.input_key !== null
          ? row.input_key === inputKey(use.input)
          : !inputMayBeCut(row.input)
            ? sameValue(parsedOr(row.input), use.input)
            : row.input_digest === digestInput(safeStringify(use.input));
    if (!this.sameTool(row.tool, use.name) || !same) throw reusedId(use, index, `an earlier call of this session (${row.tool})`);
    return { kind: 'row', row };
  }

  /** The name a call was made with, or the tool it resolved to (an alias such as KillShell). */
  private sameTool(recorded: string, name: string): boolean {
    return recorded === name || this.pool.lookup(name)?.name === recorded;
  }

  /**
   * Starts a batch; every item's `done` settles with its outcome. `signal`
   * aborts every new call of the batch (a client that went away).
   */
  start(session: Session, uses: readonly ToolUse[], actor: string | null, signal: AbortSignal | undefined, log?: Logger): BatchItem[] {
    const { deps, registry, maxInFlight, waiting } = this.opts;
    // A new id could not be told from an old one (SessionStore.ready waits for the index).
    if (!session.toolUses.loaded) throw new ToolexecError('TOOLEXEC_ERR_INTERNAL', `The idempotency index of session ${session.id} is not read yet`);
    // Every entry point (/execute, /mcp) is bounded here: callers are told to come back rather than queued without bound.
    if (maxInFlight !== undefined) {
      // Calls waiting for a person (up to waiting.max of them) leave room for the others.
      const busy = registry.size - (waiting === undefined ? 0 : Math.min(waiting.count(), waiting.max));
      if (busy + uses.length > maxInFlight) {
        const held = registry.size - busy;
        throw new ToolexecError(
          'TOOLEXEC_ERR_OVERLOADED',
          `${busy} calls are in flight (limit ${maxInFlight})${held > 0 ? `, besides ${held} waiting for a person's answer` : ''}; retry later`,
        );
      }
    }
    const items: BatchItem[] = [];
    const fresh: { use: ToolUse; queued: QueuedCall; abort: CallAbort; resolve: (f: FinishedCall) => void; reject: (e: unknown) => void }[] = [];
    // Every id is settled before anything is queued: a refused batch leaves nothing behind.
    // firstOf holds, for every id of the batch, the index of its first use (none for a batch of one call,
    // most of them: every use is its own first).
    const firstOf = uses.length > 1 ? new Map<string, number>() : undefined;
    const earlierCalls = uses.map((_use, i) => this.earlierCall(session, uses, firstOf, i));

    // One item a use, in order: items[k] is the item of uses[k].
    for (let i = 0; i < uses.length; i++) {
      const use = uses[i]!;
      const found = earlierCalls[i];
      const first = firstOf?.get(use.id) ?? i;
      if (first !== i) {
        // The same id earlier in this batch: the same call, replayed.
        const dup = items[first]!;
        items.push({ ...dup, use, replayed: true, queued: undefined, done: handled(dup.done.then((d) => ({ ...d, summary: { ...d.summary, replayed: true as const } }))) });
        continue;
      }
      const live = found?.kind === 'live' ? found.live : undefined;
      if (live?.done) {
        const item: BatchItem = {
          use,
          executionId: live.call.id,
          replayed: true,
          queued: undefined,
          done: handled(live.done.then((f) => ({ summary: { ...summaryOfCall(f), replayed: true as const }, block: f.block }))),
        };
        items.push(item);
        continue;
      }
      if (found?.kind === 'held') {
        // It ran, but its record is still waiting for the database to take
        // writes again: never run it twice, and say so until the row is there.
        const held = handled(
          Promise.reject(
            new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `The call with tool_use id ${use.id} ran, but its record is not written yet; retry later`, { execution_id: found.id }),
          ),
        );
        const item: BatchItem = { use, executionId: found.id, replayed: true, queued: undefined, done: held };
        items.push(item);
        continue;
      }
      if (found?.kind === 'row') {
        const row = found.row;
        const item: BatchItem = {
          use,
          executionId: row.id,
          replayed: true,
          queued: undefined,
          done: Promise.resolve({ summary: { ...summaryOfRow(row), replayed: true as const }, block: blockOfRow(row) }),
        };
        items.push(item);
        continue;
      }
      // The batch's signal (a client that went away) is read by the call, not listened to (pipeline/cancel.ts).
      const abort = new CallAbort(signal);
      const id = deps.executions.newId();
      session.toolUses.set(use.id, id);
      const queued = queueCall(use, session, deps, id, actor);
      const entry = registry.add(queued, abort);
      let resolve!: (f: FinishedCall) => void;
      let reject!: (e: unknown) => void;
      const donePromise = new Promise<FinishedCall>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Handled by the item's `then` below (a storage failure goes on to `done`, which is marked handled),
      // so it needs no catch of its own.
      entry.done = donePromise;
      const item: BatchItem = {
        use,
        executionId: id,
        replayed: false,
        queued,
        done: handled(donePromise.then((f) => ({ summary: summaryOfCall(f), block: f.block }))),
      };
      items.push(item);
      fresh.push({ use, queued, abort, resolve, reject });
    }

    const finishedCalls = new Set<number>();
    // Never rejects: a call's failure settles its own item.
    const run = async (_use: ToolUse, i: number, parsed: PreParsed | undefined): Promise<FinishedCall | undefined> => {
      const f = fresh[i]!;
      try {
        const out = await runToolUse(f.use, session, deps, {
          executionId: f.queued.id,
          abort: f.abort,
          actor,
          queued: f.queued,
          log,
          parsed,
        });
        // A PermissionRequest hook's deny with interrupt: true ends the turn in Claude Code:
        // the batch's other calls not finished, running or not started yet, are cancelled.
        if (fresh.length > 1) {
          finishedCalls.add(i);
          if (out.decision?.interrupt === true) for (const [j, g] of fresh.entries()) if (!finishedCalls.has(j)) g.abort.abort();
        }
        f.resolve(out);
        return out;
      } catch (e) {
        // The call's record could not be committed; drop it from the live set.
        registry.remove(f.queued.id);
        f.reject(e);
        return undefined;
      }
    };
    // One new call, most batches: what runBatch would do with it (run it, unparsed ahead) without its
    // promise, its await and the catch below (three promises a request).
    if (fresh.length === 1) void run(fresh[0]!.use, 0, undefined);
    else if (fresh.length > 1) {
      void runBatch(
        fresh.map((f) => f.use),
        this.pool,
        this.opts.maxConcurrency,
        run,
        {
          // A Bash call that failed cancels the calls running beside it (orchestration/run-batch.ts).
          cancels: (out) => (out === undefined ? undefined : siblingCancelReason(out)),
          cancel: (i, reason) => fresh[i]!.abort.abort(reason),
        },
      ).catch((e: unknown) => {
        // The orchestrator itself failed before running the calls: no call of the batch is left waiting
        // forever. Settling twice is a no-op, so the calls already finished keep their outcome.
        for (const f of fresh) {
          registry.remove(f.queued.id);
          f.reject(e);
        }
      });
    }
    return items;
  }
}
