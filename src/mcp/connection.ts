/**
 * One configured MCP server: connecting (stdio, Streamable HTTP or legacy
 * SSE), listing its tools, following notifications/tools/list_changed, and
 * reconnecting with exponential backoff when it crashes or disconnects.
 *
 * A server's tools stay in the pool while it reconnects, so the catalog (and
 * a model provider's prompt cache) does not flap with a brief crash; a call
 * made meanwhile ends at once with error class `mcp_disconnected`, and so do
 * the calls in flight when the connection drops (the SDK rejects its pending
 * requests when the transport closes; for HTTP, where a dropped stream does
 * not close the transport, a failed ping after a transport error closes it).
 */
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  ToolSchema,
  type CallToolResult,
  type Tool as McpToolDef,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { McpServerConfig } from '../config/schema.js';
import { ToolError } from '../pipeline/error-class.js';
import { MAX_TOOL_NAME_LENGTH } from '../pool/mcp-names.js';
import type { AnyTool, OnProgress, ToolInput } from '../tool/types.js';
import { expandServerConfig } from './env-expand.js';
import { SchemaCompiler } from './input-schema.js';
import { buildMcpTool, type McpCaller } from './mcp-tool.js';
import { CallResultEnvelope, readCallResult } from './results.js';
import { ProcessStdioTransport } from './stdio-transport.js';
import { callErrorClass, clip, describeError, isConnectionClosed, isTransportFailure, isZodError } from './call-errors.js';
import { makeTransport, newClient, OrderedTransport } from './transports.js';

export type ServerState = 'connecting' | 'connected' | 'reconnecting' | 'failed' | 'closed';

/** Why an MCP tool's name cannot be served, or undefined: empty or blank, or holding a control character. */
export function invalidToolName(name: string): string | undefined {
  if (name.trim().length === 0) return name.length === 0 ? 'its name is empty' : 'its name is blank (only whitespace)';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'its name holds a control character';
  return undefined;
}

export interface ReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

export interface ConnectionDeps {
  log: Logger;
  childEnv: NodeJS.ProcessEnv;
  /** Working directory of stdio servers without their own `cwd` (relative ones are resolved against it). */
  cwd: string;
  reconnect: ReconnectPolicy;
  connectTimeoutMs: number;
  /** Called when this server's tool list changed (connected, refreshed). */
  onToolsChanged(): void;
  /** Masks secrets (an echoed Authorization header, a crash printing its env) in errors that reach responses. */
  mask?: ((text: string) => string) | undefined;
}

/** The default time a tool call may go without a result or a progress notification. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** A call that keeps reporting progress may run this long in total (as Bash's maximum). */
export const MAX_CALL_TOTAL_MS = 600_000;
/** Tools taken from one server; the rest are reported. */
export const MAX_TOOLS_PER_SERVER = 1000;
const MAX_LIST_PAGES = 50;
const PING_TIMEOUT_MS = 5000;

export interface UnusableTool {
  name: string;
  error: string;
}

export interface ServerStatus {
  name: string;
  type: 'stdio' | 'http' | 'sse';
  state: ServerState;
  tools: number;
  tool_names: string[];
  unusable_tools: UnusableTool[];
  always_load: boolean;
  last_error: string | null;
  last_error_at: string | null;
  connected_at: string | null;
  attempts: number;
  next_retry_at: string | null;
  server_info: { name: string; version: string } | null;
  pid: number | null;
}

// Tools are listed with a permissive envelope and each tool is checked on its
// own, so that one malformed tool is reported instead of failing the listing.
const ListToolsLoose = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

function typeOf(cfg: McpServerConfig): ServerStatus['type'] {
  if ('command' in cfg) return 'stdio';
  return cfg.type === 'sse' ? 'sse' : 'http';
}

export class ServerConnection implements McpCaller {
  readonly type: ServerStatus['type'];
  private state: ServerState = 'connecting';
  private client: Client | undefined;
  private transport: Transport | undefined;
  /** Bumped on every new connection: a call made on an older one that fails is a disconnect. */
  private generation = 0;
  private toolList: AnyTool[] = [];
  private unusable: UnusableTool[] = [];
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private connectedAt: number | null = null;
  private attempts = 0;
  private nextRetryAt: number | null = null;
  private retryTimer: NodeJS.Timeout | undefined;
  private closing = false;
  /** The list_changed refresh running for the current client; `again` when another notification came meanwhile. */
  private refreshing: { client: Client; again: boolean } | undefined;
  private probing = false;
  /** Why this side closed a live connection (a failed ping), for the status. */
  private closeReason: string | undefined;
  private serverInfo: { name: string; version: string } | null = null;
  /** The last message of the current connection that could not be used (not JSON-RPC, an unknown id), for timeouts. */
  private lastUnreadable: { at: number; message: string } | undefined;

  constructor(
    readonly serverName: string,
    private readonly config: McpServerConfig,
    private readonly deps: ConnectionDeps,
  ) {
    this.type = typeOf(config);
  }

  get tools(): readonly AnyTool[] {
    return this.toolList;
  }

  start(): void {
    void this.connect();
  }

  private masked(s: string): string {
    return this.deps.mask ? this.deps.mask(s) : s;
  }

  private fail(message: string): void {
    // Masked before clipping, so that no cut leaves part of a secret.
    this.lastError = clip(this.masked(message));
    this.lastErrorAt = Date.now();
  }

  private async connect(): Promise<void> {
    if (this.closing) return;
    this.nextRetryAt = null;
    const expanded = expandServerConfig(this.config, this.deps.childEnv);
    if (expanded.missing.length > 0) {
      // Not retried: the environment will not change under a running service.
      this.state = 'failed';
      this.fail(`environment variable${expanded.missing.length > 1 ? 's' : ''} ${expanded.missing.join(', ')} ${expanded.missing.length > 1 ? 'are' : 'is'} not set and ${expanded.missing.length > 1 ? 'have' : 'has'} no default`);
      this.deps.log.error({ mcp_server: this.serverName, error: this.lastError }, 'MCP server cannot be started');
      return;
    }
    let transport: Transport;
    try {
      transport = makeTransport(expanded.value, this.deps.childEnv, this.deps.cwd);
    } catch (e) {
      this.state = 'failed';
      this.fail(`bad configuration: ${describeError(e)}`);
      this.deps.log.error({ mcp_server: this.serverName, error: this.lastError }, 'MCP server cannot be started');
      return;
    }
    const client = newClient();
    client.onclose = () => this.onClosed(client);
    client.onerror = (e) => this.onTransportError(client, e);
    this.client = client;
    this.transport = transport;
    const attemptAt = Date.now();
    try {
      await client.connect(new OrderedTransport(transport), { timeout: this.deps.connectTimeoutMs });
      if (this.closing || this.client !== client) {
        await client.close().catch(() => {});
        return;
      }
      if (client.getServerCapabilities()?.tools?.listChanged) {
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresh(client));
      }
      const v = client.getServerVersion();
      this.serverInfo = v ? { name: String(v.name), version: String(v.version) } : null;
      const listed = await this.listTools(client);
      if (this.client !== client) return;
      this.setTools(listed);
      this.generation++;
      this.state = 'connected';
      this.attempts = 0;
      this.connectedAt = Date.now();
      this.deps.log.info({ mcp_server: this.serverName, tools: this.toolList.length, unusable: this.unusable.length }, 'MCP server connected');
      this.deps.onToolsChanged();
    } catch (e) {
      if (this.client !== client) return;
      // What the transport reported meanwhile (a stream cut at the message bound) says more than a timeout.
      const reported = this.lastUnreadable && this.lastUnreadable.at >= attemptAt ? `; meanwhile the transport reported: ${this.lastUnreadable.message}` : '';
      this.fail(this.withProcessInfo(describeError(e), transport) + reported);
      this.client = undefined;
      this.transport = undefined;
      await client.close().catch(() => {});
      this.deps.log.warn({ mcp_server: this.serverName, error: this.lastError, attempt: this.attempts + 1 }, 'MCP server failed to connect');
      this.scheduleReconnect();
    }
  }

  private withProcessInfo(message: string, transport: Transport | undefined): string {
    if (!(transport instanceof ProcessStdioTransport)) return message;
    const parts = [message];
    if (transport.failure) parts.push(transport.failure);
    if (transport.exit) parts.push(transport.exit.signal ? `process killed by ${transport.exit.signal}` : `process exited with code ${transport.exit.code}`);
    const tail = transport.stderrTail().trim();
    if (tail) parts.push(`stderr: ${tail.slice(-300)}`);
    return parts.join('; ');
  }

  private scheduleReconnect(): void {
    if (this.closing) return;
    const { initialDelayMs, maxDelayMs } = this.deps.reconnect;
    const base = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(this.attempts, 20));
    // ±20% jitter, so that servers that fell together do not all retry together.
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.attempts++;
    this.state = 'reconnecting';
    this.nextRetryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  private onClosed(client: Client): void {
    if (this.client !== client || this.closing) return;
    // While connecting, the pending initialize or list request fails, and connect() reschedules.
    if (this.state !== 'connected') return;
    this.client = undefined;
    const transport = this.transport;
    this.transport = undefined;
    this.fail(this.closeReason ?? this.withProcessInfo('the connection closed', transport));
    this.closeReason = undefined;
    this.deps.log.warn({ mcp_server: this.serverName, error: this.lastError }, 'MCP server disconnected; reconnecting');
    this.scheduleReconnect();
  }

  private onTransportError(client: Client, e: Error): void {
    if (this.client !== client || this.closing) return;
    this.lastUnreadable = { at: Date.now(), message: describeError(e) };
    this.deps.log.debug({ mcp_server: this.serverName, err: e }, 'MCP transport error');
    // A stdio transport closes itself when its process dies; HTTP streams can drop without closing.
    if (this.type !== 'stdio' && this.state === 'connected') this.probe(client, describeError(e));
    // The legacy SSE transport reopens a failed stream by itself, and an answer lost with the old
    // stream never comes: while connecting, a failed stream ends the attempt now rather than at the
    // connect timeout. (A message that is not JSON-RPC is reported too, and tolerated.)
    else if (this.type === 'sse' && this.state !== 'connected' && e instanceof SseError) void client.close().catch(() => {});
  }

  /** Pings the server; a failed ping closes the connection, which ends the calls in flight and reconnects. */
  private probe(client: Client, reason: string): void {
    if (this.probing) return;
    this.probing = true;
    client
      .ping({ timeout: PING_TIMEOUT_MS })
      .catch(() => {
        if (this.client !== client) return;
        this.closeReason = `${reason}; the server did not answer a ping`;
        void client.close().catch(() => {});
      })
      .finally(() => {
        this.probing = false;
      });
  }

  /**
   * Lists the tools again after notifications/tools/list_changed. Every
   * await is followed by a check that `client` is still the current one: a
   * listing from a connection that has since been replaced or closed is
   * dropped, never applied.
   */
  private refresh(client: Client): void {
    if (this.client !== client) return;
    const running = this.refreshing;
    if (running?.client === client) {
      running.again = true;
      return;
    }
    const run = { client, again: false };
    this.refreshing = run;
    void (async () => {
      do {
        run.again = false;
        try {
          const listed = await this.listTools(client);
          if (this.client !== client) return;
          this.setTools(listed);
          this.deps.log.info({ mcp_server: this.serverName, tools: this.toolList.length }, 'MCP server tool list changed');
          this.deps.onToolsChanged();
        } catch (e) {
          if (this.client !== client) return;
          this.fail(`listing tools after list_changed failed: ${describeError(e)}`);
          this.deps.log.warn({ mcp_server: this.serverName, error: this.lastError }, 'MCP tool list refresh failed');
        }
      } while (run.again && this.client === client);
    })().finally(() => {
      if (this.refreshing === run) this.refreshing = undefined;
    });
  }

  private setTools(listed: { tools: AnyTool[]; unusable: UnusableTool[] }): void {
    this.toolList = listed.tools;
    this.unusable = listed.unusable;
    for (const u of listed.unusable) this.deps.log.warn({ mcp_server: this.serverName, tool: u.name, error: u.error }, 'MCP tool is not usable');
  }

  /** The server's tools, listed and compiled; applied by the caller once it knows `client` is still current. */
  private async listTools(client: Client): Promise<{ tools: AnyTool[]; unusable: UnusableTool[] }> {
    const defs: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const r = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsLoose, { timeout: this.deps.connectTimeoutMs });
      defs.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor || defs.length >= MAX_TOOLS_PER_SERVER) break;
    }
    const compiler = new SchemaCompiler();
    const alwaysLoad = this.config.alwaysLoad === true;
    const tools: AnyTool[] = [];
    const unusable: UnusableTool[] = [];
    const seen = new Set<string>();
    for (const raw of defs) {
      const name = typeof (raw as { name?: unknown })?.name === 'string' ? ((raw as { name: string }).name.slice(0, 200)) : '(unnamed)';
      if (tools.length >= MAX_TOOLS_PER_SERVER) {
        unusable.push({ name, error: `the server lists more than ${MAX_TOOLS_PER_SERVER} tools; the rest are not served` });
        continue;
      }
      const parsed = ToolSchema.safeParse(raw);
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        unusable.push({ name, error: `its definition is not a valid MCP tool (${i ? `${i.path.join('.') || '(root)'}: ${i.message}` : 'invalid'})` });
        continue;
      }
      const def = parsed.data as McpToolDef;
      // A name that names nothing would be served as mcp__srv__ (or mcp__srv___): left out and reported.
      const badName = invalidToolName(def.name);
      if (badName) {
        unusable.push({ name, error: badName });
        continue;
      }
      // Never servable (the full mcp__ name is longer still), and not worth holding or reporting whole.
      if (def.name.length > MAX_TOOL_NAME_LENGTH) {
        unusable.push({ name, error: `its name is ${def.name.length} characters; a tool name may have at most ${MAX_TOOL_NAME_LENGTH}` });
        continue;
      }
      if (seen.has(def.name)) {
        unusable.push({ name, error: 'the server lists two tools of this name; neither is served' });
        continue;
      }
      seen.add(def.name);
      const schema = compiler.compile(def.inputSchema);
      if (!schema.ok) {
        unusable.push({ name, error: schema.error });
        continue;
      }
      tools.push(buildMcpTool(def, schema, this, { alwaysLoad }));
    }
    // A name listed twice: drop every copy, as the pool does for clashes.
    const dupNames = new Set(unusable.filter((u) => u.error.startsWith('the server lists two')).map((u) => u.name));
    return { tools: dupNames.size > 0 ? tools.filter((t) => !dupNames.has(t.mcpInfo!.toolName)) : tools, unusable };
  }

  private callTimeoutMs(): number {
    return this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  private notConnected(): ToolError {
    const why = this.lastError ? `: ${this.lastError}` : '';
    return new ToolError(`MCP server "${this.serverName}" is not connected (${this.state})${why}`, 'mcp_disconnected');
  }

  async call(tool: string, args: ToolInput, signal: AbortSignal, onProgress: OnProgress): Promise<CallToolResult> {
    const client = this.client;
    if (this.state !== 'connected' || !client) throw this.notConnected();
    const generation = this.generation;
    const timeout = this.callTimeoutMs();
    const startedAt = Date.now();
    let envelope: z.infer<typeof CallResultEnvelope>;
    try {
      envelope = await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallResultEnvelope, {
        signal,
        timeout,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: Math.max(timeout, MAX_CALL_TOTAL_MS),
        onprogress: (p) => {
          onProgress({ progress: p.progress, total: p.total, message: p.message });
        },
      });
    } catch (e) {
      if (signal.aborted) throw e;
      // A server may answer with the code the SDK uses for a closed connection (-32000, JSON-RPC's first
      // "server error" code): only a transport the SDK has let go of is a disconnect.
      const closed = isConnectionClosed(e) && client.transport === undefined;
      const dropped = generation !== this.generation || this.client !== client || closed;
      if (dropped || (!isConnectionClosed(e) && isTransportFailure(e))) {
        if (!dropped && this.type !== 'stdio') this.probe(client, describeError(e));
        const why = this.lastError && dropped ? ` (${this.lastError})` : ` (${this.masked(describeError(e))})`;
        throw new ToolError(`MCP server "${this.serverName}" disconnected during the call${why}`, 'mcp_disconnected');
      }
      throw new ToolError(this.masked(this.errorMessage(tool, e, timeout, startedAt)), callErrorClass(e));
    }
    return readCallResult(envelope);
  }

  private errorMessage(tool: string, e: unknown, timeout: number, startedAt: number): string {
    // The SDK's own timeout carries its limits as data; the same code sent by the server is the server's error.
    const data = e instanceof McpError ? (e.data as { timeout?: unknown; maxTotalTimeout?: unknown } | undefined) : undefined;
    if (e instanceof McpError && e.code === ErrorCode.RequestTimeout && (data?.timeout !== undefined || data?.maxTotalTimeout !== undefined)) {
      const unreadable = this.lastUnreadable && this.lastUnreadable.at >= startedAt ? `; meanwhile it sent a message that could not be used: ${this.lastUnreadable.message}` : '';
      return clip(`MCP server "${this.serverName}" did not answer ${tool} within ${timeout} ms (a progress notification restarts the wait)${unreadable}`);
    }
    if (isZodError(e)) {
      return `MCP server "${this.serverName}" answered ${tool} with something that is not an MCP tool result (${describeError(e)})`;
    }
    return `MCP server "${this.serverName}" failed ${tool}: ${describeError(e)}`;
  }

  status(): ServerStatus {
    const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());
    return {
      name: this.serverName,
      type: this.type,
      state: this.state,
      tools: this.toolList.length,
      tool_names: this.toolList.map((t) => t.name),
      unusable_tools: this.unusable,
      always_load: this.config.alwaysLoad === true,
      last_error: this.lastError,
      last_error_at: iso(this.lastErrorAt),
      connected_at: this.state === 'connected' ? iso(this.connectedAt) : null,
      attempts: this.attempts,
      next_retry_at: iso(this.nextRetryAt),
      server_info: this.serverInfo,
      pid: this.transport instanceof ProcessStdioTransport ? (this.transport.pid ?? null) : null,
    };
  }

  /** Ends the connection for good: the stdio child's group is killed, an HTTP session is ended. */
  async close(): Promise<void> {
    this.closing = true;
    this.state = 'closed';
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.nextRetryAt = null;
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      await Promise.race([transport.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref())]);
    }
    if (client) await client.close().catch(() => {});
    else if (transport) await transport.close().catch(() => {});
  }
}
