/**
 * The client side's transports: stdio (toolexec's own, process-group
 * aware), Streamable HTTP and legacy SSE from the SDK, and a wrapper that
 * keeps the order in which the SDK sees a server's messages.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { McpServerConfig } from '../config/schema.js';
import { DEFAULT_MAX_MESSAGE_BYTES, ProcessStdioTransport } from './stdio-transport.js';

/** The SDK compiles output schemas with a default ajv; toolexec does not validate outputs (the model reads them). */
const NO_OUTPUT_VALIDATION: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** A client for one connection attempt. */
export function newClient(): Client {
  return new Client({ name: 'toolexec', version: '0.1.0' }, { capabilities: {}, jsonSchemaValidator: NO_OUTPUT_VALIDATION });
}

/** The transport of an (expanded) server configuration; stdio servers start from `childEnv` plus their own env. */
export function makeTransport(cfg: McpServerConfig, childEnv: NodeJS.ProcessEnv, cwd: string): Transport {
  if ('command' in cfg) {
    return new ProcessStdioTransport({
      command: cfg.command,
      args: cfg.args,
      env: { ...childEnv, ...(cfg.env ?? {}) },
      cwd: cfg.cwd ? path.resolve(cwd, cfg.cwd) : cwd,
    });
  }
  const url = new URL(cfg.url);
  const requestInit: RequestInit = cfg.headers ? { headers: cfg.headers } : {};
  // The legacy SSE stream is bounded as Streamable HTTP's: one event at most maxBytes.
  if (cfg.type === 'sse') return new SSEClientTransport(url, { requestInit, fetch: boundedFetch(DEFAULT_MAX_MESSAGE_BYTES) });
  // Reconnecting after a dropped stream is the connection's job (with a fresh session), not the transport's.
  return new StreamableHTTPClientTransport(url, {
    requestInit,
    fetch: boundedFetch(DEFAULT_MAX_MESSAGE_BYTES),
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
}

type RpcId = string | number;
const MAX_TRACKED_REQUESTS = 1000;

/** The id of a JSON-RPC request, or the requestId of a notifications/cancelled, in a POST body. */
function rpcIds(body: unknown): { request?: RpcId; cancelled?: RpcId } {
  if (typeof body !== 'string') return {};
  try {
    const m = JSON.parse(body) as { id?: unknown; method?: unknown; params?: { requestId?: unknown } } | null;
    if (!m || typeof m !== 'object' || typeof m.method !== 'string') return {};
    const isId = (v: unknown): v is RpcId => typeof v === 'string' || typeof v === 'number';
    if (m.method === 'notifications/cancelled') return isId(m.params?.requestId) ? { cancelled: m.params.requestId } : {};
    return isId(m.id) ? { request: m.id } : {};
  } catch {
    return {};
  }
}

/**
 * A fetch for the HTTP transports that does not read a server's answer
 * forever. The SDK gives up on a request (timeout, cancellation) by sending
 * notifications/cancelled but keeps the POST's response open and buffered;
 * here that notification aborts the request's fetch. A JSON body is cut past
 * `maxBytes`, as the stdio transport bounds one message, and so is one event
 * of an SSE stream (the SDK's parser keeps an event's data until its blank
 * line: an endless event would be held whole).
 */
function boundedFetch(maxBytes: number): typeof fetch {
  const inflight = new Map<RpcId, AbortController>();
  return async (input, init) => {
    const ids = rpcIds(init?.body);
    if (ids.cancelled !== undefined) inflight.get(ids.cancelled)?.abort(new Error('the request was cancelled'));
    const id = ids.request;
    // Requests without an id (notifications, the GET streams) are bounded too; only requests are tracked for cancellation.
    const ac = new AbortController();
    if (id !== undefined) inflight.set(id, ac);
    const done = (): void => {
      if (id !== undefined && inflight.get(id) === ac) inflight.delete(id);
    };
    ac.signal.addEventListener('abort', done, { once: true });
    // A body the SDK cancels unread never reaches flush: keep the map bounded (oldest first).
    if (inflight.size > MAX_TRACKED_REQUESTS) inflight.delete(inflight.keys().next().value!);
    let res: Response;
    try {
      res = await fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, ac.signal]) : ac.signal });
    } catch (e) {
      done();
      throw e;
    }
    // Redirects are returned as they are: the SDK reads their url and Location to follow or report them.
    if (!res.body || (res.status >= 300 && res.status < 400)) {
      if (!res.body) done();
      return res;
    }
    const sse = (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    // Bytes of the body (JSON), or of the event under way (SSE: since the last blank line).
    let n = 0;
    let lineStart = true;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          if (sse) {
            for (let from = 0; from < chunk.length; ) {
              const nl = chunk.indexOf(10, from);
              const end = nl === -1 ? chunk.length : nl;
              // A carriage return before the line feed (or at the chunk's end) is not content.
              const len = end - from - (end > from && chunk[end - 1] === 13 ? 1 : 0);
              if (len > 0) {
                lineStart = false;
                n += len;
              }
              if (nl === -1) break;
              // An empty line ends the event.
              if (lineStart) n = 0;
              lineStart = true;
              from = nl + 1;
            }
          } else n += chunk.byteLength;
          if (n > maxBytes) {
            ctl.error(new Error(sse ? `an event of the server's stream is larger than ${maxBytes} bytes` : `the server's answer is larger than ${maxBytes} bytes`));
            ac.abort();
            return;
          }
          ctl.enqueue(chunk);
        },
        flush: done,
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * Delivers a transport's messages one microtask apart. The SDK runs a
 * notification's handler in a microtask but settles a response at once, so a
 * server's last progress notification, arriving in the same chunk as the
 * result, would find its handler already removed and be dropped.
 */
export class OrderedTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: Transport['onmessage'];
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly inner: Transport) {
    // The close comes after the messages already received, so that a result that came before it is not lost.
    inner.onclose = () => this.enqueue(() => this.onclose?.());
    inner.onerror = (e) => this.onerror?.(e);
    inner.onmessage = (message, extra) => this.enqueue(() => this.onmessage?.(message, extra));
  }

  private enqueue(deliver: () => void): void {
    this.chain = this.chain.then(() => {
      try {
        deliver();
      } catch (e) {
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(...args: Parameters<Transport['send']>): Promise<void> {
    return this.inner.send(...args);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

