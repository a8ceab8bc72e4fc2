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
import { ProcessStdioTransport } from './stdio-transport.js';

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
  if (cfg.type === 'sse') return new SSEClientTransport(url, { requestInit });
  // Reconnecting after a dropped stream is the connection's job (with a fresh session), not the transport's.
  return new StreamableHTTPClientTransport(url, {
    requestInit,
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
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

