/**
 * Running aggregates of finished calls: per tool, counts per (status, error
 * class) and a latency histogram; globally, permission decisions per (reason
 * type, behaviour). GET /stats and /metrics read them; nothing scans the
 * executions or the audit log.
 *
 * `record` is on every call's path: a Map lookup, a few typed-array
 * increments and a log10, no allocation once a tool has been seen (measured
 * in bench/observability.bench.mjs). Each aggregate carries a version, so
 * that storage writes only what changed.
 */
import type { FinishedCall } from '../pipeline/types.js';
import { ERROR_CLASSES } from '../pipeline/error-class.js';
import { BUCKETS, bucketOf, quantiles } from './latency-histogram.js';

const QUANTILES = [0.5, 0.95, 0.99];

export const STATUSES = ['succeeded', 'failed', 'denied', 'cancelled'] as const;
export type FinishedStatus = (typeof STATUSES)[number];

/** Error-class slots: "none" (no error), the known classes, then "other". */
export const OUTCOME_CLASSES: readonly string[] = ['none', ...ERROR_CLASSES, 'other'];
const CLASS_INDEX = new Map<string, number>(OUTCOME_CLASSES.map((c, i) => [c, i]));
const OTHER_CLASS = OUTCOME_CLASSES.length - 1;
const NC = OUTCOME_CLASSES.length;

export const BEHAVIORS = ['allow', 'deny', 'ask'] as const;

/**
 * Label for calls that ended before their tool was resolved (no such tool, or
 * cancelled first): the requested name is the caller's, and unbounded.
 */
export const UNKNOWN_TOOL = '<unknown>';
/** Label for tools past MAX_TRACKED_TOOLS. */
export const OTHER_TOOLS = '<other>';
/** Tools tracked one by one; past this, the rest are counted together (bounded memory and label sets). */
export const MAX_TRACKED_TOOLS = 5000;

function statusIndex(s: FinishedCall['status']): number {
  switch (s) {
    case 'succeeded':
      return 0;
    case 'failed':
      return 1;
    case 'denied':
      return 2;
    default:
      return 3;
  }
}

export class ToolAggregate {
  calls = 0;
  /** Calls per (status, error class): index status * NC + class. */
  readonly outcomes = new Float64Array(STATUSES.length * NC);
  readonly histogram = new Float64Array(BUCKETS);
  sumMs = 0;
  minMs = Number.POSITIVE_INFINITY;
  maxMs = 0;
  /** Bumped per record; storage remembers the version it last wrote. */
  version = 0;
  savedVersion = 0;

  constructor(readonly tool: string) {}

  outcome(status: number, cls: number): number {
    return this.outcomes[status * NC + cls] ?? 0;
  }

  addOutcome(status: FinishedStatus, errorClass: string, n: number): void {
    const s = STATUSES.indexOf(status);
    if (s < 0 || !(n > 0)) return;
    const c = CLASS_INDEX.get(errorClass) ?? OTHER_CLASS;
    this.outcomes[s * NC + c] = (this.outcomes[s * NC + c] ?? 0) + n;
  }
}

export class DecisionCounts {
  /** reason type → counts per behaviour (allow, deny, ask). */
  readonly byReason = new Map<string, Float64Array>();
  version = 0;
  savedVersion = 0;

  add(reasonType: string, behavior: string, n: number): void {
    const b = behavior === 'allow' ? 0 : behavior === 'deny' ? 1 : behavior === 'ask' ? 2 : -1;
    if (b < 0 || !(n > 0)) return;
    let row = this.byReason.get(reasonType);
    if (row === undefined) {
      row = new Float64Array(BEHAVIORS.length);
      this.byReason.set(reasonType, row);
    }
    row[b] = (row[b] ?? 0) + n;
    this.version++;
  }
}

export interface DurationSummary {
  p50: number | null;
  p95: number | null;
  p99: number | null;
  mean: number | null;
  min: number | null;
  max: number | null;
}

export interface ToolStatsView {
  calls: number;
  /** Calls per status. */
  statuses: Record<string, number>;
  /** Failed, denied and cancelled calls per error class. */
  errors: Record<string, number>;
  duration_ms: DurationSummary;
}

const round3 = (n: number | null): number | null => (n === null ? null : Math.round(n * 1000) / 1000);

export class CallStats {
  private readonly tools = new Map<string, ToolAggregate>();
  readonly decisions = new DecisionCounts();

  /** One finished call; see the file comment for its cost. */
  record(call: FinishedCall): void {
    const agg = this.aggregate(call.tool?.name);
    const cls = call.errorClass === null ? 0 : (CLASS_INDEX.get(call.errorClass) ?? OTHER_CLASS);
    const i = statusIndex(call.status) * NC + cls;
    agg.outcomes[i] = (agg.outcomes[i] ?? 0) + 1;
    const ms = call.durationMs;
    const b = bucketOf(ms);
    agg.histogram[b] = (agg.histogram[b] ?? 0) + 1;
    agg.calls++;
    if (ms >= 0) {
      agg.sumMs += ms;
      if (ms < agg.minMs) agg.minMs = ms;
      if (ms > agg.maxMs) agg.maxMs = ms;
    }
    agg.version++;
    const d = call.decision;
    if (d !== undefined) this.decisions.add(d.reason.type, d.behavior, 1);
  }

  /** The aggregate of a tool, created on first use (storage loads through it too). */
  aggregate(tool: string | undefined): ToolAggregate {
    const name = tool ?? UNKNOWN_TOOL;
    const found = this.tools.get(name);
    if (found !== undefined) return found;
    const key = this.tools.size >= MAX_TRACKED_TOOLS ? OTHER_TOOLS : name;
    let agg = this.tools.get(key);
    if (agg === undefined) {
      agg = new ToolAggregate(key);
      this.tools.set(key, agg);
    }
    return agg;
  }

  /** Whether anything changed since storage last wrote it. */
  changed(): boolean {
    if (this.decisions.version !== this.decisions.savedVersion) return true;
    for (const a of this.tools.values()) if (a.version !== a.savedVersion) return true;
    return false;
  }

  all(): IterableIterator<ToolAggregate> {
    return this.tools.values();
  }

  /** What GET /stats reports per tool, sorted by name. */
  view(): Record<string, ToolStatsView> {
    const out: Record<string, ToolStatsView> = {};
    for (const name of [...this.tools.keys()].sort()) {
      const a = this.tools.get(name)!;
      if (a.calls === 0) continue;
      const statuses: Record<string, number> = {};
      const errors: Record<string, number> = {};
      for (let s = 0; s < STATUSES.length; s++) {
        for (let c = 0; c < NC; c++) {
          const n = a.outcome(s, c);
          if (n === 0) continue;
          statuses[STATUSES[s]!] = (statuses[STATUSES[s]!] ?? 0) + n;
          if (c !== 0) errors[OUTCOME_CLASSES[c]!] = (errors[OUTCOME_CLASSES[c]!] ?? 0) + n;
        }
      }
      const timed = a.minMs !== Number.POSITIVE_INFINITY;
      const [p50, p95, p99] = timed ? quantiles(a.histogram, a.calls, QUANTILES, a.minMs, a.maxMs) : [null, null, null];
      out[name] = {
        calls: a.calls,
        statuses,
        errors,
        duration_ms: {
          p50: round3(p50 ?? null),
          p95: round3(p95 ?? null),
          p99: round3(p99 ?? null),
          mean: timed ? round3(a.sumMs / a.calls) : null,
          min: timed ? round3(a.minMs) : null,
          max: timed ? round3(a.maxMs) : null,
        },
      };
    }
    return out;
  }

  /** Decisions per reason type and behaviour, sorted by reason type. */
  decisionView(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const reason of [...this.decisions.byReason.keys()].sort()) {
      const row = this.decisions.byReason.get(reason)!;
      const r: Record<string, number> = {};
      BEHAVIORS.forEach((b, i) => {
        if ((row[i] ?? 0) > 0) r[b] = row[i]!;
      });
      out[reason] = r;
    }
    return out;
  }
}
