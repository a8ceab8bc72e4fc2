/**
 * Persistence of the running call statistics (migration 3): loaded once at
 * start, so that GET /stats survives restarts, and written through the
 * group-commit writer for the aggregates that changed since the last flush.
 */
import type { Statement } from 'better-sqlite3';
import { BEHAVIORS, CallStats, OUTCOME_CLASSES, STATUSES, type ToolAggregate } from '../observability/call-stats.js';
import { HISTOGRAM_LAYOUT, addSparse, toSparse } from '../observability/latency-histogram.js';
import type { Db, GroupCommitWriter } from './db.js';

interface CallStatsRow {
  tool: string;
  layout: string;
  calls: number;
  outcomes: string;
  histogram: string;
  sum_ms: number;
  min_ms: number | null;
  max_ms: number | null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** {status: {error class: n}} for the non-zero cells. */
function outcomesOf(a: ToolAggregate): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  STATUSES.forEach((status, s) => {
    OUTCOME_CLASSES.forEach((cls, c) => {
      const n = a.outcome(s, c);
      if (n > 0) (out[status] ??= {})[cls] = n;
    });
  });
  return out;
}

export class StatsStore {
  private readonly upsertTool: Statement;
  private readonly upsertDecision: Statement<[string, string, number]>;
  private readonly selectTools: Statement<[]>;
  private readonly selectDecisions: Statement<[]>;
  private readonly since: number;
  private queued = false;

  constructor(
    db: Db,
    private readonly writer: GroupCommitWriter,
  ) {
    this.upsertTool = db.prepare(
      `INSERT INTO call_stats (tool, layout, calls, outcomes, histogram, sum_ms, min_ms, max_ms, updated_at)
       VALUES (@tool, @layout, @calls, @outcomes, @histogram, @sum_ms, @min_ms, @max_ms, @updated_at)
       ON CONFLICT(tool) DO UPDATE SET layout = excluded.layout, calls = excluded.calls, outcomes = excluded.outcomes,
         histogram = excluded.histogram, sum_ms = excluded.sum_ms, min_ms = excluded.min_ms, max_ms = excluded.max_ms,
         updated_at = excluded.updated_at`,
    );
    this.upsertDecision = db.prepare(
      `INSERT INTO decision_stats (reason_type, behavior, count) VALUES (?, ?, ?)
       ON CONFLICT(reason_type, behavior) DO UPDATE SET count = excluded.count`,
    );
    this.selectTools = db.prepare('SELECT * FROM call_stats');
    this.selectDecisions = db.prepare('SELECT reason_type, behavior, count FROM decision_stats');
    db.prepare(`INSERT OR IGNORE INTO stats_meta (key, value) VALUES ('since', ?)`).run(String(Date.now()));
    const row = db.prepare(`SELECT value FROM stats_meta WHERE key = 'since'`).get() as { value: string } | undefined;
    this.since = Number(row?.value ?? Date.now());
  }

  /** When the statistics began (ms since the epoch). */
  get startedAt(): number {
    return this.since;
  }

  /** Fills fresh aggregates with what was stored. */
  load(into: CallStats): void {
    for (const r of this.selectTools.all() as CallStatsRow[]) {
      // Buckets of another layout cannot be merged (nor percentiles read from them): that tool starts again.
      if (r.layout !== HISTOGRAM_LAYOUT) continue;
      const a = into.aggregate(r.tool);
      a.calls += r.calls;
      a.sumMs += r.sum_ms;
      if (r.min_ms !== null && r.min_ms < a.minMs) a.minMs = r.min_ms;
      if (r.max_ms !== null && r.max_ms > a.maxMs) a.maxMs = r.max_ms;
      const outcomes = parseJson(r.outcomes);
      if (outcomes && typeof outcomes === 'object') {
        for (const [status, byClass] of Object.entries(outcomes as Record<string, unknown>)) {
          if (!byClass || typeof byClass !== 'object') continue;
          for (const [cls, n] of Object.entries(byClass as Record<string, unknown>)) {
            if (typeof n === 'number' && (STATUSES as readonly string[]).includes(status)) a.addOutcome(status as (typeof STATUSES)[number], cls, n);
          }
        }
      }
      addSparse(a.histogram, parseJson(r.histogram));
      a.savedVersion = a.version;
    }
    for (const r of this.selectDecisions.all() as Array<{ reason_type: string; behavior: string; count: number }>) {
      into.decisions.add(r.reason_type, r.behavior, r.count);
    }
    into.decisions.savedVersion = into.decisions.version;
  }

  /**
   * Queues a write of the aggregates that changed since their last commit.
   * Rows are serialised inside the write, so flushes asked for before it runs
   * cost one; versions advance only after the commit, so a failed one is
   * retried by the next flush.
   */
  flush(stats: CallStats): void {
    if (this.queued || !stats.changed()) return;
    this.queued = true;
    this.writer.writeLater(() => {
      this.queued = false;
      const now = Date.now();
      const written: Array<[ToolAggregate, number]> = [];
      for (const a of stats.all()) {
        if (a.version === a.savedVersion) continue;
        const timed = a.minMs !== Number.POSITIVE_INFINITY;
        this.upsertTool.run({
          tool: a.tool,
          layout: HISTOGRAM_LAYOUT,
          calls: a.calls,
          outcomes: JSON.stringify(outcomesOf(a)),
          histogram: JSON.stringify(toSparse(a.histogram)),
          sum_ms: a.sumMs,
          min_ms: timed ? a.minMs : null,
          max_ms: timed ? a.maxMs : null,
          updated_at: now,
        });
        written.push([a, a.version]);
      }
      const decisions = stats.decisions;
      const decisionVersion = decisions.version;
      if (decisionVersion !== decisions.savedVersion) {
        for (const [reason, row] of decisions.byReason) {
          BEHAVIORS.forEach((b, i) => {
            const n = row[i] ?? 0;
            if (n > 0) this.upsertDecision.run(reason, b, n);
          });
        }
      }
      return () => {
        for (const [a, v] of written) a.savedVersion = v;
        decisions.savedVersion = decisionVersion;
      };
    });
  }
}
