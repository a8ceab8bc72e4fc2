/**
 * The MCP sessions of toolexec's /mcp endpoint: one SDK `Server` and one
 * Streamable HTTP transport per session, created by an initialize request
 * and found again by the `Mcp-Session-Id` header. A session belongs to the
 * token that opened it (another token gets "Session not found"); at most
 * `maxSessions` live at once (the least recently used is closed for a new
 * one), and a session idle longer than `idleMs` is closed.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { PoolMcpServer } from './server.js';
import { invalidRequestParams } from './request-params.js';

export const DEFAULT_MAX_MCP_SESSIONS = 1000;
export const DEFAULT_MCP_SESSION_IDLE_MS = 30 * 60_000;

export interface McpSession {
  id: string | undefined;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  /** The principal that opened the session; its audit actor. */
  readonly owner: string | null;
  lastSeen: number;
  /** Calls this process answers itself (the JSON fast path), by JSON-RPC id, for notifications/cancelled. */
  readonly inflight: Map<string | number, AbortController>;
}

export interface McpSessionsOptions {
  maxSessions?: number;
  idleMs?: number;
}

export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxSessions: number;
  private readonly idleMs: number;

  constructor(
    private readonly pool: PoolMcpServer,
    private readonly log: Logger,
    opts: McpSessionsOptions = {},
  ) {
    this.maxSessions = opts.maxSessions ?? DEFAULT_MAX_MCP_SESSIONS;
    this.idleMs = opts.idleMs ?? DEFAULT_MCP_SESSION_IDLE_MS;
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idleMs)).unref();
  }

  get size(): number {
    return this.byId.size;
  }

  /** A new session, to be initialized by the request that asked for it. */
  async create(owner: string | null): Promise<McpSession> {
    const server = new Server({ name: 'toolexec', version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });
    const session: McpSession = {
      id: undefined,
      owner,
      lastSeen: Date.now(),
      inflight: new Map(),
      server,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => `mcp_${randomUUID().replace(/-/g, '')}`,
        onsessioninitialized: (id) => {
          session.id = id;
          this.add(session);
        },
        onsessionclosed: (id) => {
          this.byId.delete(id);
        },
      }),
    };
    server.setRequestHandler(ListToolsRequestSchema, (req, extra) => this.pool.listTools(req.params?._meta, extra.sessionId ?? session.id ?? ''));
    server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
      const token = req.params._meta?.progressToken;
      return this.pool.callTool(req.params, {
        mcpSessionId: extra.sessionId ?? session.id ?? '',
        actor: owner,
        signal: extra.signal,
        onProgress:
          token === undefined
            ? undefined
            : (p) => {
                extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...p } }).catch(() => {});
              },
      });
    });
    session.transport.onclose = () => {
      if (session.id !== undefined && this.byId.get(session.id) === session) this.byId.delete(session.id);
      for (const c of session.inflight.values()) c.abort();
    };
    await server.connect(session.transport);
    // A request whose params do not fit its method is answered -32602 with a
    // readable message here, before the SDK's own parse turns it into -32603
    // and a zod dump. (The transport maps the answer to the request's stream.)
    const transport = session.transport;
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const problem = invalidRequestParams(message);
      if (problem === undefined) {
        onmessage?.(message, extra);
        return;
      }
      const id = (message as { id: string | number }).id;
      const answer: JSONRPCMessage = { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problem}` } };
      transport.send(answer, { relatedRequestId: id }).catch((e: unknown) => this.log.debug({ err: e }, 'could not answer an MCP request with invalid params'));
    };
    return session;
  }

  private add(session: McpSession): void {
    while (this.byId.size >= this.maxSessions) {
      const oldest = this.byId.values().next().value;
      if (!oldest) break;
      this.log.info({ mcp_session: oldest.id }, 'closing the least recently used MCP session for a new one');
      this.closeSession(oldest);
    }
    this.byId.set(session.id!, session);
  }

  /** The session of an id if `owner` opened it; touched as most recently used. */
  get(id: string, owner: string | null): McpSession | undefined {
    const s = this.byId.get(id);
    if (!s || s.owner !== owner) return undefined;
    s.lastSeen = Date.now();
    this.byId.delete(id);
    this.byId.set(id, s);
    return s;
  }

  private closeSession(s: McpSession): void {
    if (s.id !== undefined) this.byId.delete(s.id);
    s.transport.close().catch(() => {});
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const s of [...this.byId.values()]) {
      if (s.lastSeen < cutoff && s.inflight.size === 0) this.closeSession(s);
    }
  }

  /** Tells every session's client that the tool list changed (over its GET stream, when it holds one). */
  notifyToolsChanged(): void {
    for (const s of this.byId.values()) s.server.sendToolListChanged().catch(() => {});
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.byId.values()];
    this.byId.clear();
    await Promise.all(all.map((s) => s.transport.close().catch(() => {})));
  }
}
