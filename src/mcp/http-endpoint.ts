/**
 * The tool pool as an MCP server over Streamable HTTP, behind POST/GET/DELETE
 * /mcp, with the SDK's transport (one per MCP session). POST carries JSON-RPC
 * messages (an initialize request opens a session), GET opens the session's
 * stream for server notifications (tools/list_changed when MCP servers come
 * and go), DELETE ends the session. A single tools/call without progress on a
 * known session takes the fast path of fast-call.ts and is answered as JSON.
 *
 * Without tokens, browser requests from non-loopback origins are refused
 * before they get here (http/context.ts), as the MCP specification asks of
 * servers against DNS rebinding.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { fastMessage, type FastMessage } from './fast-call.js';
import { McpSessions, type McpSession } from './server-sessions.js';
import { PoolMcpServer } from './server.js';
import type { Services } from '../services.js';
import { actorOf } from '../http/context.js';

function jsonRpcError(code: number, message: string): { jsonrpc: '2.0'; error: { code: number; message: string }; id: null } {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}


function isInitialize(body: unknown): boolean {
  const one = (m: unknown): boolean => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
  return Array.isArray(body) ? body.some(one) : one(body);
}

async function answerCall(
  pool: PoolMcpServer,
  session: McpSession,
  sid: string,
  msg: Extract<FastMessage, { kind: 'call' }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const ac = new AbortController();
  // A client that goes away before its answer cancels the call.
  const onClose = (): void => {
    if (!reply.raw.writableFinished) ac.abort();
  };
  reply.raw.once('close', onClose);
  // A JSON answer sends nothing until the call ends (the SSE path sends keep-alives):
  // the socket's idle timeout (server.connectionTimeoutMs) must not cut a long call.
  // (Only a real net.Socket has a timeout: app.inject()'s stand-in has none.)
  const raw = reply.raw.socket;
  const socket = raw && typeof raw.setTimeout === 'function' ? raw : null;
  const idleTimeout = reply.server.server.timeout;
  socket?.setTimeout(0);
  session.inflight.set(msg.id, ac);
  let body: string;
  try {
    const result = await pool.callTool(msg.params, { mcpSessionId: sid, actor: session.owner, signal: ac.signal });
    body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
  } catch (e) {
    const code = e instanceof McpError ? e.code : -32603;
    const message = e instanceof Error ? e.message : 'Internal error';
    const data: unknown = e instanceof McpError ? e.data : undefined;
    body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: data === undefined ? { code, message } : { code, message, data } });
  } finally {
    if (session.inflight.get(msg.id) === ac) session.inflight.delete(msg.id);
    reply.raw.off('close', onClose);
    if (socket && !socket.destroyed) socket.setTimeout(idleTimeout);
  }
  return reply.header('mcp-session-id', sid).type('application/json').send(body);
}

export interface McpEndpoint {
  handle(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  close(): Promise<void>;
}

export function createMcpEndpoint(svc: Services): McpEndpoint {
  const pool = new PoolMcpServer(svc);
  const sessions = new McpSessions(pool, svc.log);
  const unsubscribe = svc.mcp.onChange(() => sessions.notifyToolsChanged());

  const handle = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const owner = actorOf(req);
    const header = req.headers['mcp-session-id'];
    const sid = typeof header === 'string' && header.length > 0 ? header : undefined;
    let session: McpSession | undefined;
    if (sid !== undefined) {
      session = sessions.get(sid, owner);
      if (!session) return reply.status(404).send(jsonRpcError(-32001, 'Session not found'));
      const fast = req.method === 'POST' ? fastMessage(req.body, req.headers) : undefined;
      if (fast?.kind === 'call') return answerCall(pool, session, sid, fast, reply);
      if (fast?.kind === 'cancel') {
        const inflight = session.inflight.get(fast.requestId);
        if (inflight) {
          inflight.abort();
          return reply.status(202).send();
        }
      }
    } else if (req.method === 'POST' && isInitialize(req.body)) {
      session = await sessions.create(owner);
    } else {
      return reply.status(400).send(jsonRpcError(-32000, 'Bad Request: No valid session ID provided'));
    }
    reply.hijack();
    try {
      await session.transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (e) {
      req.log.error({ err: e }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify(jsonRpcError(-32603, 'Internal error')));
      } else reply.raw.end();
    }
    return reply;
  };

  return {
    handle,
    // Streams held open by MCP clients would keep the server from closing.
    async close() {
      unsubscribe();
      await sessions.closeAll();
    },
  };
}
