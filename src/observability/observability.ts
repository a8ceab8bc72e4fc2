/**
 * Observability as one part of the service: running call statistics fed by
 * the execution registry's `execution.finished` events (persisted every few
 * seconds through the group-commit writer, loaded at start), the Prometheus
 * metrics built on them, and the readiness check.
 */
import type { Logger } from 'pino';
import type { ExecutionRegistry } from '../executions/registry.js';
import type { Db, GroupCommitWriter } from '../storage/db.js';
import { StatsStore } from '../storage/stats.js';
import { CallStats, type ToolStatsView } from './call-stats.js';
import { ServiceMetrics, type MetricSources } from './metrics.js';
import { Readiness, type McpReadinessSource } from './readiness.js';

/** How often changed statistics are written: at most this much is lost to a crash. */
export const STATS_FLUSH_MS = 10_000;

export interface ObservabilityOptions {
  db: Db;
  writer: GroupCommitWriter;
  registry: ExecutionRegistry;
  log: Logger;
  pendingPermissionRequests(): number;
  websocketConnections(): number;
  /** Background Bash tasks running now. */
  backgroundTasks?: (() => number) | undefined;
  /** The memory of denied files met by identity (permissions/denied-memory.ts). */
  deniedFiles?: MetricSources['deniedFiles'];
  /** MCP servers' states; absent when the service runs without MCP. */
  mcp?: { status(): ReadonlyArray<{ name: string; state: string; tools: number }> } | undefined;
  /** MCP servers that must be connected for readiness. */
  requiredMcpServers?: readonly string[] | undefined;
  flushMs?: number | undefined;
  /** How long a successful database probe is reused by /readyz. */
  readinessCacheMs?: number | undefined;
}

export interface StatsBody {
  since: string;
  resolution: string;
  totals: { calls: number; errors: number };
  tools: Record<string, ToolStatsView>;
  decisions: Record<string, Record<string, number>>;
}

export const STATS_RESOLUTION =
  'Durations are counted in fixed buckets (90 per decade from 1 µs to 1000 s, each at most 10% wide); ' +
  'a percentile is its bucket’s midpoint, within 5% of the true value, clamped to the observed min and max.';

export class Observability {
  readonly stats = new CallStats();
  readonly metrics: ServiceMetrics;
  readonly readiness: Readiness;
  private readonly store: StatsStore;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(opts: ObservabilityOptions) {
    this.store = new StatsStore(opts.db, opts.writer);
    this.store.load(this.stats);
    const stats = this.stats;
    this.unsubscribe = opts.registry.onFinished((call) => stats.record(call));
    this.timer = setInterval(() => this.flush(), opts.flushMs ?? STATS_FLUSH_MS);
    this.timer.unref();
    const mcp = opts.mcp;
    this.metrics = new ServiceMetrics({
      stats,
      pendingPermissionRequests: opts.pendingPermissionRequests,
      executionsInFlight: () => opts.registry.size,
      websocketConnections: opts.websocketConnections,
      backgroundTasks: opts.backgroundTasks,
      deniedFiles: opts.deniedFiles,
      mcpServers: mcp ? () => mcp.status() : undefined,
    });
    const mcpReadiness: McpReadinessSource | undefined = mcp
      ? { servers: () => mcp.status(), required: new Set(opts.requiredMcpServers ?? []) }
      : undefined;
    this.readiness = new Readiness(opts.db, opts.writer, mcpReadiness, opts.readinessCacheMs);
  }

  /** Queues a write of what changed (the group commit runs it). */
  flush(): void {
    if (!this.closed) this.store.flush(this.stats);
  }

  statsBody(): StatsBody {
    const tools = this.stats.view();
    let calls = 0;
    let errors = 0;
    for (const t of Object.values(tools)) {
      calls += t.calls;
      for (const n of Object.values(t.errors)) errors += n;
    }
    return {
      since: new Date(this.store.startedAt).toISOString(),
      resolution: STATS_RESOLUTION,
      totals: { calls, errors },
      tools,
      decisions: this.stats.decisionView(),
    };
  }

  /** Stops listening and queues the last flush; the caller flushes the writer before closing the database. */
  close(): void {
    if (this.closed) return;
    this.unsubscribe();
    clearInterval(this.timer);
    this.store.flush(this.stats);
    this.closed = true;
  }
}
