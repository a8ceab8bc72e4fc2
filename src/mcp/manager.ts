/**
 * The MCP servers of the configuration, connected in parallel in the
 * background: `start()` returns at once, built-in tools serve meanwhile, and
 * each server's tools join the pool (through `onToolsChanged`) as it
 * connects, refreshes its list or changes it. `status()` is what
 * GET /mcp/servers and /readyz report; `close()` ends every server (stdio
 * children's process groups are killed).
 *
 * The MCP SDK is loaded only when servers are configured, after start():
 * importing it costs about a fifth of the service's start-up time.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { McpServerConfig } from '../config/schema.js';
import type { AnyTool } from '../tool/types.js';
import type { ReconnectPolicy, ServerConnection, ServerStatus } from './connection.js';

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
  /** Masks secrets in errors a server's answers or stderr carry into last_error and call errors. */
  mask?: ((text: string) => string) | undefined;
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
  private connections: ServerConnection[] = [];
  private loading: Promise<void> | undefined;
  private started = false;
  private closing: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly names: string[];

  constructor(private readonly opts: McpManagerOptions) {
    // Sorted by name: the pool sorts tools anyway, and status lists read the same each time.
    this.names = Object.keys(opts.servers).sort();
  }

  /** Starts every connection in the background; never waits for one. */
  start(): void {
    if (this.started || this.closing || this.names.length === 0) return;
    this.started = true;
    this.loading = import('./connection.js').then(({ ServerConnection }) => {
      if (this.closing) return;
      const deps = {
        log: this.opts.log,
        childEnv: this.opts.childEnv,
        cwd: path.resolve(this.opts.cwd ?? process.cwd()),
        reconnect: { ...DEFAULT_RECONNECT, ...(this.opts.reconnect ?? {}) },
        connectTimeoutMs: this.opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        onToolsChanged: () => this.publish(),
        mask: this.opts.mask,
      };
      this.connections = this.names.map((name) => new ServerConnection(name, this.opts.servers[name]!, deps));
      for (const c of this.connections) c.start();
    });
    this.loading.catch((e: unknown) => this.opts.log.error({ err: e }, 'loading the MCP client failed'));
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
    if (this.connections.length > 0 || this.names.length === 0) return this.connections.map((c) => c.status());
    // The client is still loading: every server is connecting.
    return this.names.map((name) => {
      const cfg = this.opts.servers[name]!;
      return {
        name,
        type: 'command' in cfg ? 'stdio' : cfg.type === 'sse' ? 'sse' : 'http',
        state: 'connecting',
        tools: 0,
        tool_names: [],
        unusable_tools: [],
        always_load: cfg.alwaysLoad === true,
        last_error: null,
        last_error_at: null,
        connected_at: null,
        attempts: 0,
        next_retry_at: null,
        server_info: null,
        pid: null,
      };
    });
  }

  readiness(): McpReadiness {
    const servers: Record<string, ServerStatus['state']> = {};
    let connected = 0;
    for (const s of this.status()) {
      servers[s.name] = s.state;
      if (s.state === 'connected') connected++;
    }
    return { total: this.names.length, connected, servers };
  }

  /** Ends every server; the same promise for every caller. */
  close(): Promise<void> {
    this.closing ??= (this.loading ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => Promise.all(this.connections.map((c) => c.close())))
      .then(() => undefined);
    return this.closing;
  }
}
