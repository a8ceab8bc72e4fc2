/**
 * The websocket hub: who is subscribed to which session, and what each
 * connection is sent. Execution events come from the registry, permission
 * events from the broker. A slow consumer (its send buffer past a limit)
 * loses progress frames, never permission frames; past a hard limit the
 * connection is closed rather than buffered without bound. Heartbeats find
 * dead peers.
 */
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Principal } from '../http/auth.js';
import type { ExecutionRegistry, ExecutionEvent } from '../executions/registry.js';
import type { ApprovalBroker, BrokerEvent } from '../permissions/approval-broker.js';
import { isToolexecError, ToolexecError } from '../errors.js';
import { jsonDepthExceeds } from '../http/json-parser.js';
import { ClientFrame, executionBody, finishedBody, progressBody } from './frames.js';

/**
 * Nesting a frame may have, as for an HTTP body by default: an updated input
 * nested deeper parses, but overflows JSON.stringify once it reaches a hook.
 */
export const MAX_FRAME_DEPTH = 64;

/**
 * Sessions one connection may subscribe to at once: each costs an entry in
 * two maps, and a client subscribing to ever new ids would otherwise grow
 * them without bound (300k ids were +160 MB). `"*"` covers every session.
 */
export const MAX_SUBSCRIPTIONS = 1000;

export interface HubOptions {
  heartbeatMs: number;
  /** Send buffer beyond which progress frames are dropped. */
  slowBytes: number;
  /** Send buffer beyond which the connection is closed. */
  maxBufferedBytes: number;
  /**
   * server.rateLimit, for frames: at most `max` per token in each window of
   * `windowMs`, as for its HTTP requests (unset: no limit). Without it a
   * token whose requests were limited sent frames (answers, cancels) at any
   * rate.
   */
  frameLimit?: { max: number; windowMs: number } | undefined;
}

export const DEFAULT_HUB_OPTIONS: HubOptions = {
  heartbeatMs: 30_000,
  slowBytes: 1024 * 1024,
  maxBufferedBytes: 16 * 1024 * 1024,
};

interface Conn {
  socket: WebSocket;
  principal: Principal;
  sessions: Set<string>;
  alive: boolean;
  droppedProgress: number;
  /**
   * Requests that were already waiting when the connection subscribed, still
   * to be shown to it (ids, oldest first; a Set, so that subscribing again
   * adds nothing twice). Sent as the socket drains (pumpBacklog).
   */
  backlog: Set<string> | undefined;
  /** Backlog frames handed to the socket and not yet written out. */
  backlogInFlight: number;
  /** Its frames in the current window of the frame limit: its token's count, or its own when anonymous. */
  window: FrameWindow;
}

interface FrameWindow {
  count: number;
  resetAt: number;
}

const WILDCARD = '*';

export class WsHub {
  private readonly conns = new Set<Conn>();
  private readonly bySession = new Map<string, Set<Conn>>();
  /** Frame-limit windows per token name (as many as configured tokens). */
  private readonly windows = new Map<string, FrameWindow>();
  private readonly timer: NodeJS.Timeout;
  /** Set while some connection subscribes to a session (or to all): otherwise no call's event is made for the hub. */
  private offRegistry: (() => void) | undefined = undefined;
  private readonly offBroker: () => void;

  constructor(
    private readonly registry: ExecutionRegistry,
    private readonly broker: ApprovalBroker,
    private readonly log: Logger,
    private readonly opts: HubOptions = DEFAULT_HUB_OPTIONS,
  ) {
    this.offBroker = broker.on((e) => this.onPermission(e));
    broker.setPresence((sessionId) => this.hasApprover(sessionId));
    this.timer = setInterval(() => this.heartbeat(), opts.heartbeatMs);
    this.timer.unref();
  }

  get connections(): number {
    return this.conns.size;
  }

  /** Whether a connection with the approve scope listens to this session (or to all). */
  hasApprover(sessionId: string): boolean {
    for (const key of [sessionId, WILDCARD]) {
      const set = this.bySession.get(key);
      if (!set) continue;
      for (const c of set) if (c.principal.scopes.has('approve') || c.principal.scopes.has('admin')) return true;
    }
    return false;
  }

  attach(socket: WebSocket, principal: Principal): void {
    // Per token, as the HTTP rate limit; an anonymous connection (no tokens configured: loopback) on its own.
    let window: FrameWindow | undefined = principal.name === 'anonymous' ? undefined : this.windows.get(principal.name);
    if (window === undefined) {
      window = { count: 0, resetAt: 0 };
      if (principal.name !== 'anonymous') this.windows.set(principal.name, window);
    }
    const conn: Conn = { socket, principal, sessions: new Set(), alive: true, droppedProgress: 0, backlog: undefined, backlogInFlight: 0, window };
    this.conns.add(conn);
    socket.on('pong', () => {
      conn.alive = true;
    });
    socket.on('message', (data, isBinary) => this.onFrame(conn, data, isBinary));
    socket.on('close', () => this.detach(conn));
    socket.on('error', () => this.detach(conn));
    this.send(conn, { type: 'hello', principal: principal.name, scopes: [...principal.scopes], heartbeat_ms: this.opts.heartbeatMs }, true);
  }

  private detach(conn: Conn): void {
    if (!this.conns.delete(conn)) return;
    conn.backlog = undefined;
    for (const s of conn.sessions) {
      const set = this.bySession.get(s);
      set?.delete(conn);
      if (set && set.size === 0) this.bySession.delete(s);
    }
    this.listen();
  }

  /** Listens to the registry while a connection subscribes to executions, and only then. */
  private listen(): void {
    if (this.bySession.size > 0) this.offRegistry ??= this.registry.subscribe((e) => this.onExecution(e));
    else if (this.offRegistry !== undefined) {
      this.offRegistry();
      this.offRegistry = undefined;
    }
  }

  private can(conn: Conn, scope: 'read' | 'approve' | 'execute'): boolean {
    return conn.principal.scopes.has(scope) || conn.principal.scopes.has('admin');
  }

  /** Whether a frame of the connection is within server.rateLimit (and counts it); past it, answers the frame (`raw`, as parsed) with an error. */
  private withinLimit(conn: Conn, raw: unknown): boolean {
    const limit = this.opts.frameLimit;
    if (limit === undefined) return true;
    const w = conn.window;
    const now = Date.now();
    if (now >= w.resetAt) {
      w.count = 0;
      w.resetAt = now + limit.windowMs;
    }
    w.count += 1;
    if (w.count <= limit.max) return true;
    const retry = Math.ceil((w.resetAt - now) / 1000);
    this.error(
      conn,
      new ToolexecError('TOOLEXEC_ERR_RATE_LIMITED', `Rate limit exceeded: at most ${limit.max} frames per ${limit.windowMs} ms from this token; retry in ${retry} s`),
      { retry_after_s: retry, ...frameRefs(raw) },
    );
    return false;
  }

  private onFrame(conn: Conn, data: unknown, isBinary: boolean): void {
    let raw: unknown;
    let invalid: string | undefined;
    try {
      if (isBinary) throw new Error('binary frames are not accepted; send JSON text');
      const text = String(data);
      if (jsonDepthExceeds(text, MAX_FRAME_DEPTH)) invalid = `The frame is nested deeper than ${MAX_FRAME_DEPTH} levels`;
      else raw = JSON.parse(text);
    } catch (e) {
      invalid = `The frame is not JSON: ${(e as Error).message}`;
    }
    // Over the limit, a frame is answered with an error naming what it was about, and not acted on
    // (a permission.respond may be sent again).
    if (!this.withinLimit(conn, raw)) return;
    if (invalid !== undefined) {
      this.error(conn, new ToolexecError('TOOLEXEC_ERR_WS_FRAME_INVALID', invalid));
      return;
    }
    const parsed = ClientFrame.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      this.error(conn, new ToolexecError('TOOLEXEC_ERR_WS_FRAME_INVALID', i ? `${i.path.join('.') || 'frame'}: ${i.message}` : 'invalid frame'));
      return;
    }
    const f = parsed.data;
    try {
      switch (f.type) {
        case 'subscribe': {
          if (f.session_id === WILDCARD && !this.can(conn, 'read')) {
            throw new ToolexecError('TOOLEXEC_ERR_AUTH_SCOPE', 'Subscribing to every session ("*") needs the scope "read"');
          }
          if (!conn.sessions.has(f.session_id) && conn.sessions.size >= MAX_SUBSCRIPTIONS) {
            throw new ToolexecError(
              'TOOLEXEC_ERR_WS_FRAME_INVALID',
              `A connection may subscribe to at most ${MAX_SUBSCRIPTIONS} sessions at once: unsubscribe from one first${this.can(conn, 'read') ? ', or subscribe to "*"' : ''}`,
            );
          }
          // What the connection is shown already (sent, queued in its backlog, or live as it arrives).
          const coveredBefore = (sessionId: string): boolean => conn.sessions.has(WILDCARD) || conn.sessions.has(sessionId);
          const fresh = coveredBefore(f.session_id)
            ? []
            : this.broker.pendingIds(f.session_id).filter((id) => f.session_id !== WILDCARD || !coveredBefore(this.broker.pendingView(id)!.session_id));
          conn.sessions.add(f.session_id);
          const set = this.bySession.get(f.session_id) ?? new Set();
          set.add(conn);
          this.bySession.set(f.session_id, set);
          this.listen();
          this.send(conn, { type: 'ack', ref: 'subscribe', session_id: f.session_id }, true);
          // Requests already waiting for this session are shown to the new subscriber, as its socket
          // drains: thousands of them sent at once went past maxBufferedBytes, and the approver who
          // connected to answer them was cut off (and again at each reconnection).
          // Only those the connection was not shown through another subscription ("*" and a session, or the
          // same session twice): each request is sent to it once.
          if (fresh.length > 0) {
            const backlog = (conn.backlog ??= new Set());
            for (const id of fresh) backlog.add(id);
            this.pumpBacklog(conn);
          }
          return;
        }
        case 'unsubscribe': {
          conn.sessions.delete(f.session_id);
          const set = this.bySession.get(f.session_id);
          set?.delete(conn);
          if (set && set.size === 0) this.bySession.delete(f.session_id);
          this.listen();
          this.send(conn, { type: 'ack', ref: 'unsubscribe', session_id: f.session_id }, true);
          return;
        }
        case 'permission.respond': {
          if (!this.can(conn, 'approve')) throw new ToolexecError('TOOLEXEC_ERR_AUTH_SCOPE', 'Answering permission requests needs the scope "approve"');
          const { type: _t, request_id, ...answer } = f;
          this.broker.respond(request_id, answer, conn.principal.name);
          this.send(conn, { type: 'ack', ref: 'permission.respond', request_id }, true);
          return;
        }
        case 'cancel': {
          if (!this.can(conn, 'execute')) throw new ToolexecError('TOOLEXEC_ERR_AUTH_SCOPE', 'Cancelling needs the scope "execute"');
          if (!this.registry.cancel(f.execution_id)) {
            throw new ToolexecError('TOOLEXEC_ERR_EXECUTION_NOT_RUNNING', `Execution ${f.execution_id} is not running`);
          }
          this.send(conn, { type: 'ack', ref: 'cancel', execution_id: f.execution_id }, true);
          return;
        }
        case 'ping':
          this.send(conn, { type: 'pong' }, true);
          return;
      }
    } catch (e) {
      this.error(conn, e, f.type === 'permission.respond' ? { request_id: f.request_id } : f.type === 'cancel' ? { execution_id: f.execution_id } : {});
    }
  }

  private error(conn: Conn, e: unknown, extra: Record<string, unknown> = {}): void {
    const err = isToolexecError(e) ? e : new ToolexecError('TOOLEXEC_ERR_INTERNAL');
    if (!isToolexecError(e)) this.log.error({ err: e }, 'websocket frame failed');
    this.send(conn, { type: 'error', code: err.code, message: err.message, ...extra }, true);
  }

  /** Sends a frame (an object, or its JSON text); `essential` frames are never dropped for slowness. */
  private send(conn: Conn, frame: Record<string, unknown> | string, essential: boolean): void {
    const s = conn.socket;
    if (s.readyState !== s.OPEN) return;
    if (s.bufferedAmount > this.opts.maxBufferedBytes) {
      this.log.warn({ principal: conn.principal.name, buffered: s.bufferedAmount }, 'closing a websocket that does not read');
      s.terminate();
      this.detach(conn);
      return;
    }
    if (!essential && s.bufferedAmount > this.opts.slowBytes) {
      conn.droppedProgress += 1;
      return;
    }
    s.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /**
   * Sends backlog frames while the socket's buffer is under `slowBytes`,
   * and goes on as the frames are written out (each carries a callback):
   * the buffer stays bounded however many requests wait. A request answered
   * meanwhile, or of a session the connection left, is skipped.
   */
  private pumpBacklog(conn: Conn): void {
    const backlog = conn.backlog;
    if (backlog === undefined) return;
    const s = conn.socket;
    for (const id of backlog) {
      if (s.readyState !== s.OPEN || !this.conns.has(conn)) {
        conn.backlog = undefined;
        return;
      }
      // One frame in flight at least, whatever else fills the buffer, so that a callback comes to go on.
      if (conn.backlogInFlight > 0 && s.bufferedAmount > this.opts.slowBytes) return;
      backlog.delete(id);
      const r = this.broker.pendingView(id);
      if (r === undefined || !(conn.sessions.has(WILDCARD) || conn.sessions.has(r.session_id))) continue;
      conn.backlogInFlight += 1;
      s.send(JSON.stringify({ type: 'permission.request', request: r }), (err) => {
        conn.backlogInFlight -= 1;
        if (err) conn.backlog = undefined;
        else this.pumpBacklog(conn);
      });
    }
    if (backlog.size === 0 && conn.backlog === backlog) conn.backlog = undefined;
  }

  private targets(sessionId: string): Set<Conn> | undefined {
    const a = this.bySession.get(sessionId);
    const b = this.bySession.get(WILDCARD);
    if (!a) return b;
    if (!b) return a;
    return new Set([...a, ...b]);
  }

  private onExecution(e: ExecutionEvent): void {
    const targets = this.targets(e.call.sessionId);
    if (!targets || targets.size === 0) return;
    let frame: Record<string, unknown>;
    let essential = true;
    switch (e.type) {
      case 'execution.started':
        frame = { type: 'execution.started', execution: executionBody(e.call) };
        break;
      case 'execution.progress':
        frame = { type: 'execution.progress', progress: progressBody(e.call, e.progress) };
        essential = false;
        break;
      case 'execution.finished':
        frame = { type: 'execution.finished', execution: finishedBody(e.call) };
        break;
      default:
        return;
    }
    const text = JSON.stringify(frame);
    for (const c of targets) this.send(c, text, essential);
  }

  private onPermission(e: BrokerEvent): void {
    const targets = this.targets(e.request.session_id);
    if (!targets || targets.size === 0) return;
    // A resolved request goes without its input: the request frame carried it, and an answer to each of
    // thousands of requests (a script approving a backlog) sent every input again to every subscriber,
    // as frames that are never dropped: watchers were cut off past maxBufferedBytes.
    const request = e.type === 'permission.resolved' ? { ...e.request, input: undefined } : e.request;
    // Serialised once for every subscriber (and only if one of them takes it now).
    let text: string | undefined;
    for (const c of targets) {
      if (c.backlog !== undefined) {
        if (e.type === 'permission.request') {
          // A connection still being shown its backlog gets a new request after it, oldest first.
          c.backlog.add(e.request.id);
          this.pumpBacklog(c);
          continue;
        }
        // Answered before it was shown: the connection is told of the answer only.
        c.backlog.delete(e.request.id);
      }
      this.send(c, (text ??= JSON.stringify({ type: e.type, request })), true);
    }
  }

  private heartbeat(): void {
    for (const c of [...this.conns]) {
      if (!c.alive) {
        c.socket.terminate();
        this.detach(c);
        continue;
      }
      c.alive = false;
      try {
        c.socket.ping();
      } catch {
        this.detach(c);
      }
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.offBroker();
    for (const c of [...this.conns]) {
      try {
        c.socket.close(1001, 'server shutting down');
      } catch {
        /* already gone */
      }
      this.detach(c);
    }
    // Detaching the connections has stopped the listening already; this only makes sure.
    this.offRegistry?.();
    this.offRegistry = undefined;
  }
}

/**
 * The ids a refused frame names (`request_id` of a permission.respond,
 * `execution_id` of a cancel), for its error frame: an approver whose answer
 * was refused by the rate limit learns which one to send again.
 */
function frameRefs(f: unknown): { request_id?: string; execution_id?: string } {
  if (typeof f !== 'object' || f === null) return {};
  const { type, request_id, execution_id } = f as Record<string, unknown>;
  if (type === 'permission.respond' && typeof request_id === 'string' && request_id.length <= 200) return { request_id };
  if (type === 'cancel' && typeof execution_id === 'string' && execution_id.length <= 200) return { execution_id };
  return {};
}
