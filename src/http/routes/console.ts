/**
 * GET /console: the web console (permission requests, live executions, the
 * audit log, statistics and MCP servers), and GET /console/assets/:file, its
 * scripts, styles and icon. The files live in src/console (dist/console after
 * the build) and are read once at registration; they hold no data and need no
 * token: every call the page makes goes to the API with the user's token.
 *
 * The page is served with a Content-Security-Policy that allows only this
 * origin (scripts, styles, fetches, and the websocket to the same host), no
 * inline script or style, and no framing.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ToolexecError } from '../../errors.js';

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Where the console's files are: beside this module's tree, in src/ or dist/. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/** A Host header that may be written into the policy: host name or address, optional port, nothing else. */
const SAFE_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The page's policy. `'self'` covers ws: to the same host in CSP Level 3, but
 * not in every browser yet: the websocket URL of the host the page was loaded
 * from is named too.
 */
export function consolePolicy(host: string | undefined): string {
  const ws = host !== undefined && SAFE_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self'${ws}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function asset(file: string, type: string): Asset {
  const body = fs.readFileSync(path.join(CONSOLE_DIR, file));
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

function loadAssets(): { page: Asset | undefined; assets: Map<string, Asset> } {
  const assets = new Map<string, Asset>();
  let page: Asset | undefined;
  if (!fs.existsSync(CONSOLE_DIR)) return { page, assets };
  for (const e of fs.readdirSync(CONSOLE_DIR, { withFileTypes: true })) {
    if (!e.isFile()) continue;
    if (e.name === 'index.html') {
      page = asset(e.name, 'text/html; charset=utf-8');
      continue;
    }
    const type = CONTENT_TYPES[path.extname(e.name)];
    if (type) assets.set(e.name, asset(e.name, type));
  }
  return { page, assets };
}

/** Sends a file with its ETag; browsers revalidate each load (no-cache), so an upgrade shows at once. */
function send(req: FastifyRequest, reply: FastifyReply, a: Asset): FastifyReply {
  reply.header('etag', a.etag).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff');
  if (req.headers['if-none-match'] === a.etag) return reply.status(304).send();
  return reply.type(a.type).send(a.body);
}

export function consoleRoutes(app: FastifyInstance): void {
  const { page, assets } = loadAssets();
  if (!page) app.log.warn({ dir: CONSOLE_DIR }, 'the web console files are missing; /console answers 404');

  app.get('/console', async (req, reply) => {
    if (!page) throw new ToolexecError('TOOLEXEC_ERR_ROUTE_NOT_FOUND', 'The web console is not installed');
    reply
      .header('content-security-policy', consolePolicy(req.headers.host))
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');
    return send(req, reply, page);
  });

  app.get<{ Params: { file: string } }>('/console/assets/:file', async (req, reply) => {
    const a = assets.get(req.params.file);
    if (!a) throw new ToolexecError('TOOLEXEC_ERR_ROUTE_NOT_FOUND', `No console asset ${req.params.file}`);
    return send(req, reply, a);
  });
}
