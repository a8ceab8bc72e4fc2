/**
 * GET /metrics: Prometheus exposition from a registry of this app's own (the
 * global one would clash between apps in one process).
 *
 * Nothing here runs per call. Call counters, duration histograms and
 * decisions are read from the running aggregates (call-stats.ts) when
 * scraped, and gauges ask their source then; so a call costs the aggregates'
 * increments only.
 *
 * prom-client (and the OpenTelemetry API it loads, 84 modules in all) is
 * imported by the first scrape, not at start-up: a service that is never
 * scraped never loads it.
 *
 * Labels are bounded: tool names come from the pool (calls that never
 * resolved a tool are `<unknown>`, and past MAX_TRACKED_TOOLS the rest are
 * `<other>`), status, error class, reason type and behaviour are closed
 * sets, MCP servers come from the configuration. Nothing is labelled by
 * session, execution or request.
 */
import type { Registry } from 'prom-client';
import { BEHAVIORS, OUTCOME_CLASSES, STATUSES, type CallStats } from './call-stats.js';
import { BUCKETS, boundaryIndex } from './latency-histogram.js';

/** Seconds; each is a boundary of the aggregates' bucket layout, so the counts are exact. */
export const DURATION_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const BOUNDARY_INDEX = DURATION_BUCKETS_SECONDS.map((s) => boundaryIndex(s * 1000));

export const MCP_STATES = ['connecting', 'connected', 'reconnecting', 'failed', 'closed'] as const;

export interface MetricSources {
  stats: CallStats;
  pendingPermissionRequests(): number;
  executionsInFlight(): number;
  websocketConnections(): number;
  /** Background Bash tasks running now. */
  backgroundTasks?: (() => number) | undefined;
  /**
   * The memory of denied files met by identity (permissions/denied-memory.ts): files remembered, its
   * limit, whether one could not be remembered, files held open to see them deleted.
   */
  deniedFiles?: (() => { remembered: number; limit: number; overflowed: boolean; held: number }) | undefined;
  /** MCP servers and their states; absent when MCP is not part of the service. */
  mcpServers?: (() => ReadonlyArray<{ name: string; state: string; tools: number }>) | undefined;
}

const CALLS = 'toolexec_tool_calls_total';
const DURATION = 'toolexec_tool_call_duration_seconds';
const LE = DURATION_BUCKETS_SECONDS.map((s) => `",le="${s}"} `);

/** A label value escaped as the exposition format wants it. */
function labelValue(v: string): string {
  return v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/**
 * The per-tool families (calls by status and error class, duration
 * histograms), written directly from the aggregates. They are most of the
 * series (about 22 per tool), and prom-client's generic formatting costs
 * ~6 µs a line (138 ms a scrape for 1,000 tools, measured with
 * bench/observability.bench.mjs), spent blocking the event loop; written here
 * a line is one string concatenation.
 */
export function perToolText(stats: CallStats): string {
  let calls = `# HELP ${CALLS} Finished tool calls by tool, status and error class (none when the call succeeded).\n# TYPE ${CALLS} counter\n`;
  let durations = `# HELP ${DURATION} Duration of finished tool calls, from queued to result (approval waits included), by tool.\n# TYPE ${DURATION} histogram\n`;
  for (const a of stats.all()) {
    if (a.calls === 0) continue;
    const tool = labelValue(a.tool);
    for (let s = 0; s < STATUSES.length; s++) {
      for (let c = 0; c < OUTCOME_CLASSES.length; c++) {
        const n = a.outcome(s, c);
        if (n > 0) calls += `${CALLS}{tool="${tool}",status="${STATUSES[s]!}",error_class="${OUTCOME_CLASSES[c]!}"} ${n}\n`;
      }
    }
    const prefix = `${DURATION}_bucket{tool="${tool}`;
    let acc = 0;
    let i = 0;
    for (let k = 0; k < BOUNDARY_INDEX.length; k++) {
      for (const upto = BOUNDARY_INDEX[k]!; i < upto; i++) acc += a.histogram[i]!;
      durations += `${prefix}${LE[k]!}${acc}\n`;
    }
    for (; i < BUCKETS; i++) acc += a.histogram[i]!;
    durations += `${prefix}",le="+Inf"} ${acc}\n${DURATION}_sum{tool="${tool}"} ${a.sumMs / 1000}\n${DURATION}_count{tool="${tool}"} ${acc}\n`;
  }
  return `${calls}\n${durations}\n`;
}

type PromClient = typeof import('prom-client');
let promClient: Promise<PromClient> | undefined;
let processRegistry: Registry | undefined;

/**
 * Process metrics (CPU, memory, event loop, GC) live in one registry per
 * process: they describe the process, not an app, and prom-client's
 * collectors (an event-loop monitor, a GC observer) cannot be stopped, so one
 * set per app would pile up in a process that builds many apps (tests).
 */
function processMetrics(prom: PromClient): Registry {
  if (!processRegistry) {
    processRegistry = new prom.Registry();
    prom.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class ServiceMetrics {
  private readonly stats: CallStats;
  /** This app's registry, made by the first scrape. */
  private registry: Promise<Registry> | undefined;
  /** The exposition's content type: Prometheus text 0.0.4, the registry's own once made (text() makes it). */
  contentType = 'text/plain; version=0.0.4; charset=utf-8';

  constructor(private readonly src: MetricSources) {
    this.stats = src.stats;
  }

  private async build(): Promise<Registry> {
    const prom = await (promClient ??= import('prom-client'));
    const { Counter, Gauge } = prom;
    const registry = new prom.Registry();
    const registers = [registry];
    const { src } = this;
    const { stats } = src;
    new Counter({
      name: 'toolexec_permission_decisions_total',
      help: 'Permission decisions of finished calls by reason type and behaviour.',
      labelNames: ['reason_type', 'behavior'] as const,
      registers,
      collect() {
        this.reset();
        for (const [reason, row] of stats.decisions.byReason) {
          BEHAVIORS.forEach((behavior, i) => {
            const n = row[i] ?? 0;
            if (n > 0) this.inc({ reason_type: reason, behavior }, n);
          });
        }
      },
    });
    new Gauge({
      name: 'toolexec_permission_requests_pending',
      help: 'Permission requests waiting for an answer.',
      registers,
      collect() {
        this.set(src.pendingPermissionRequests());
      },
    });
    new Gauge({
      name: 'toolexec_executions_in_flight',
      help: 'Tool calls queued or running.',
      registers,
      collect() {
        this.set(src.executionsInFlight());
      },
    });
    new Gauge({
      name: 'toolexec_websocket_connections',
      help: 'Open websocket connections.',
      registers,
      collect() {
        this.set(src.websocketConnections());
      },
    });
    const backgroundTasks = src.backgroundTasks;
    new Gauge({
      name: 'toolexec_background_tasks_running',
      help: 'Background Bash tasks (run_in_background) running now.',
      registers,
      collect() {
        this.set(backgroundTasks?.() ?? 0);
      },
    });
    const deniedFiles = src.deniedFiles;
    if (deniedFiles) {
      new Gauge({
        name: 'toolexec_denied_files_remembered',
        help: 'Denied files remembered by identity (a hard link or an extraction may take their denied name away); see toolexec_denied_files_limit.',
        registers,
        collect() {
          this.set(deniedFiles().remembered);
        },
      });
      new Gauge({
        name: 'toolexec_denied_files_limit',
        help: 'Denied files remembered at most: past it, files born before the next one met ask.',
        registers,
        collect() {
          this.set(deniedFiles().limit);
        },
      });
      new Gauge({
        name: 'toolexec_denied_files_overflowed',
        help: '1 once a denied file could not be remembered (files born no later than it ask, until cleared with toolexec denied-memory --clear-overflow), else 0.',
        registers,
        collect() {
          this.set(deniedFiles().overflowed ? 1 : 0);
        },
      });
      new Gauge({
        name: 'toolexec_denied_files_held_open',
        help: 'Remembered denied files held open (O_PATH) to see them deleted, so that their rows go.',
        registers,
        collect() {
          this.set(deniedFiles().held);
        },
      });
    }
    const mcpServers = src.mcpServers;
    if (mcpServers) {
      new Gauge({
        name: 'toolexec_mcp_server_state',
        help: 'State of each configured MCP server: 1 for its current state, 0 for the others.',
        labelNames: ['server', 'state'] as const,
        registers,
        collect() {
          this.reset();
          for (const s of mcpServers()) for (const state of MCP_STATES) this.set({ server: s.name, state }, s.state === state ? 1 : 0);
        },
      });
      new Gauge({
        name: 'toolexec_mcp_server_tools',
        help: 'Tools each configured MCP server offers.',
        labelNames: ['server'] as const,
        registers,
        collect() {
          this.reset();
          for (const s of mcpServers()) this.set({ server: s.name }, s.tools);
        },
      });
    }
    this.contentType = registry.contentType;
    return registry;
  }

  /** The exposition text: the per-tool families, this app's other metrics, then the process's. */
  async text(): Promise<string> {
    const registry = await (this.registry ??= this.build());
    const prom = await promClient!;
    const [own, proc] = await Promise.all([registry.metrics(), processMetrics(prom).metrics()]);
    return perToolText(this.stats) + own + proc;
  }
}
