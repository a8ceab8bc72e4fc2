/**
 * Helpers for the secret-leak tests: a log capture, a sweep of every
 * read route for secret strings, and a local HTTP server.
 */
import http from 'node:http';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { listenLocal } from './helpers-hooks.js';

export interface LogCapture {
  stream: Writable;
  text(): string;
}

export function captureLog(): LogCapture {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** The forms a secret can take in a body or a line: raw, JSON-escaped, percent-encoded. */
export function forms(secret: string): string[] {
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])];
}

/** The secrets (in any of their forms) that `text` contains. */
export function leaked(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => forms(s).some((f) => text.includes(f)));
}

/** Every read route's body, concatenated with its name, for one scan. */
export async function sweepRoutes(app: FastifyInstance, headers: Record<string, string>, executionIds: readonly string[] = []): Promise<string> {
  const urls = ['/mcp/servers', '/audit', '/executions', '/metrics', '/stats', '/readyz', '/tools', '/permissions/rules', ...executionIds.map((id) => `/executions/${id}`)];
  const parts: string[] = [];
  for (const url of urls) {
    const r = await app.inject({ method: 'GET', url, headers });
    parts.push(`${url} ${r.statusCode} ${r.body}`);
  }
  return parts.join('\n');
}

export interface Local {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A plain HTTP server on 127.0.0.1. */
export function localHttp(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Local> {
  return listenLocal(http.createServer(handler));
}
