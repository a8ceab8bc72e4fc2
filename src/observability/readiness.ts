/**
 * GET /readyz: whether this instance should be sent traffic.
 *
 * Ready = the database takes a committed write and the group-commit writer
 * is not failing for a storage reason, plus every MCP server configured
 * `required: true` is connected. Other MCP servers are reported, never
 * gating: built-in tools serve at once (as in Claude Code) while servers
 * connect, and an MCP server that is down fails only its own tools' calls.
 *
 * The database probe is a real write (one row of `health_probe`, committed),
 * so a full disk or a read-only file shows. It never waits for a lock
 * (busy_timeout 0 for its statement): another connection holding the write
 * lock reads as not ready rather than stalling the event loop. A success is
 * reused for `cacheMs`, so an open endpoint cannot be turned into a stream of
 * writes; a failure is not cached, so recovery shows at once.
 */
import type { Statement } from 'better-sqlite3';
import type { Db, GroupCommitWriter } from '../storage/db.js';

export interface McpReadinessSource {
  servers(): ReadonlyArray<{ name: string; state: string }>;
  /** Names of servers that must be connected for the instance to be ready. */
  required: ReadonlySet<string>;
}

export interface ReadinessReport {
  ready: boolean;
  body: {
    status: 'ready' | 'not_ready';
    checks: {
      database: string;
      mcp: { total: number; connected: number; servers: Record<string, string>; required: string[] };
    };
    /** The checks that keep the instance from being ready. */
    failing?: string[];
  };
}

/**
 * SQLite result codes that mean the database cannot take writes at all, as
 * opposed to one bad row (a constraint): the writer failing with one of these
 * makes the instance not ready.
 */
const STORAGE_FAILURES = /^SQLITE_(FULL|IOERR|READONLY|CORRUPT|NOTADB|CANTOPEN|BUSY|LOCKED|NOMEM|PROTOCOL|PERM)/;

export function isStorageFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STORAGE_FAILURES.test(code);
}

function message(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const text = e instanceof Error ? e.message : String(e);
  return typeof code === 'string' ? `${code}: ${text}` : text;
}

export class Readiness {
  private readonly probe: Statement<[number]>;
  private okUntil = 0;
  private retryQueued = false;

  constructor(
    private readonly db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly mcp: McpReadinessSource | undefined,
    private readonly cacheMs = 1000,
  ) {
    this.probe = db.prepare('INSERT INTO health_probe (id, ts) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET ts = excluded.ts');
  }

  /** "ok", or what is wrong with the database. */
  database(): string {
    const now = Date.now();
    const failing = this.writer.failing;
    const writerFailing = failing !== undefined && isStorageFailure(failing);
    if (!writerFailing && now < this.okUntil) return 'ok';
    const probe = this.probeNow(now);
    if (probe !== 'ok') return probe;
    if (writerFailing) {
      // The database takes writes again, but the writer's last commit failed.
      // An instance that is not ready gets no calls, so nothing else would
      // commit: a probe goes through the writer, and its commit clears the
      // failure for the next check.
      if (!this.retryQueued) {
        this.retryQueued = true;
        this.writer.writeLater(() => {
          this.retryQueued = false;
          this.probe.run(Date.now());
        });
      }
      return `the last commit failed: ${message(failing)}`;
    }
    this.okUntil = now + this.cacheMs;
    return 'ok';
  }

  /** One committed write that never waits for a lock. */
  private probeNow(now: number): string {
    const timeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    try {
      this.db.pragma('busy_timeout = 0');
      this.probe.run(now);
      return 'ok';
    } catch (e) {
      return `not writable: ${message(e)}`;
    } finally {
      try {
        this.db.pragma(`busy_timeout = ${Number(timeout) || 0}`);
      } catch {
        /* a closed database: the probe already said so */
      }
    }
  }

  check(): ReadinessReport {
    const database = this.database();
    const failing: string[] = [];
    if (database !== 'ok') failing.push('database');
    const servers: Record<string, string> = {};
    let connected = 0;
    const required = this.mcp ? [...this.mcp.required].sort() : [];
    for (const s of this.mcp?.servers() ?? []) {
      servers[s.name] = s.state;
      if (s.state === 'connected') connected++;
    }
    for (const name of required) if (servers[name] !== 'connected') failing.push(`mcp:${name}`);
    const total = Object.keys(servers).length;
    const body: ReadinessReport['body'] = {
      status: failing.length === 0 ? 'ready' : 'not_ready',
      checks: { database, mcp: { total, connected, servers, required } },
    };
    if (failing.length > 0) body.failing = failing;
    return { ready: failing.length === 0, body };
  }
}
