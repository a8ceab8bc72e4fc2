/**
 * The MCP servers of the configuration, connected in parallel in the
 * background: `start()` returns at once, built-in tools serve meanwhile, and
 * each server's tools join the pool (through `onToolsChanged`) as it
 * connects, refreshes its list or changes it. `status()` is what
 * GET /mcp/servers and /readyz report; `close()` ends every server (stdio
 * children's process groups are killed).
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { McpServerConfig } from '../config/schema.js';
import type { AnyTool } from '../tool/types.js';
import { ServerConnection, type ReconnectPolicy, type ServerStatus } from './connection.js';

export type { ServerStatus } from './connection.js';

export interface McpManagerOptions {
  servers: Readonly<Record<string, McpServerConfig>>;
  log: Logger;
  /** The environment stdio servers start from (the service's, without its secrets); `${VAR}` reads it too. */
  childEnv: NodeJS.ProcessEnv;
  /** Called with every connected server's tools whenever one server's list changes. */
  onToolsChanged(tools: AnyTool[]): void;
  /** Working directory of stdio servers (default: the process's). */
  cwd?: string | undefined;
  reconnect?: Partial<ReconnectPolicy> | undefined;
  /** Connecting and listing tools, per attempt (default 30 s, as Claude Code's MCP_TIMEOUT). */
  connectTimeoutMs?: number | undefined;
}

export const DEFAULT_RECONNECT: ReconnectPolicy = { initialDelayMs: 1000, maxDelayMs: 30_000 };
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

export interface McpReadiness {
  /** Servers configured / connected now. */
  total: number;
  connected: number;
  servers: Record<string, ServerStatus['state']>;
}

export class McpManager {
  private readonly connections: ServerConnection[];
  private started = false;
  private closing: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly opts: McpManagerOptions) {
    const reconnect = { ...DEFAULT_RECONNECT, ...(opts.reconnect ?? {}) };
    const deps = {
      log: opts.log,
      childEnv: opts.childEnv,
      cwd: path.resolve(opts.cwd ?? process.cwd()),
      reconnect,
      connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      onToolsChanged: () => this.publish(),
    };
    // Sorted by name: the pool sorts tools anyway, and status lists read the same each time.
    this.connections = Object.keys(opts.servers)
      .sort()
      .map((name) => new ServerConnection(name, opts.servers[name]!, deps));
  }

  /** Starts every connection in the background; never waits for one. */
  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    for (const c of this.connections) c.start();
  }

  /** Every server's tools, in server-name order. */
  tools(): AnyTool[] {
    return this.connections.flatMap((c) => c.tools);
  }

  private publish(): void {
    if (this.closing) return;
    try {
      this.opts.onToolsChanged(this.tools());
    } catch (e) {
      this.opts.log.error({ err: e }, 'applying the MCP tool list failed');
    }
    for (const l of this.listeners) {
      try {
        l();
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  /** Called after each change of the tool list has been applied (toolexec's own MCP server tells its clients). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): ServerStatus[] {
    return this.connections.map((c) => c.status());
  }

  readiness(): McpReadiness {
    const servers: Record<string, ServerStatus['state']> = {};
    let connected = 0;
    for (const s of this.status()) {
      servers[s.name] = s.state;
      if (s.state === 'connected') connected++;
    }
    return { total: this.connections.length, connected, servers };
  }

  /** Ends every server; the same promise for every caller. */
  close(): Promise<void> {
    this.closing ??= Promise.all(this.connections.map((c) => c.close())).then(() => undefined);
    return this.closing;
  }
}
