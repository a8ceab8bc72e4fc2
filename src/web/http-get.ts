/**
 * WebFetch's HTTP client: one GET, guarded.
 *
 * - SSRF: the host is resolved first and every address it resolves to is
 *   checked (ip.ts); the connection then goes to a vetted address (a custom
 *   `lookup`), so DNS cannot answer differently between check and connect.
 *   `allowPrivateNetwork` lifts the check. No proxy is used.
 * - Redirects: followed (up to 10) only to the same host (same scheme and
 *   port, or http → https); any other target is returned, not followed, so
 *   the model can fetch it explicitly and the target's permission is checked.
 * - Limits: one deadline for the whole exchange; the body is read as a
 *   stream and reading stops once it passes `maxBytes` (after decompression,
 *   so a compression bomb is bounded too). A binary content type is refused
 *   from its headers, before its body is read.
 */
import http from 'node:http';
import net from 'node:net';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { ToolError } from '../pipeline/error-class.js';
import { formatSize } from '../results/output-sink.js';
import { blockedAddressReason } from './ip.js';

// https (with tls), zlib and dns are loaded by the first fetch, not at start-up (5-10 ms of
// the service's start, for a tool that is deferred and may never be called); guardedGet awaits them.
let dns: typeof import('node:dns').promises;
let https: typeof import('node:https');
let zlib: typeof import('node:zlib');
let loading: Promise<void> | undefined;
function loadNetworkModules(): Promise<void> {
  return (loading ??= Promise.all([import('node:dns'), import('node:https'), import('node:zlib')]).then(([d, h, z]) => {
    dns = d.promises;
    https = h.default;
    zlib = z.default;
  }));
}

export const MAX_REDIRECTS = 10;
const USER_AGENT = 'toolexec-WebFetch/0.1 (+https://github.com/toolexec)';
const SNIFF_BYTES = 8192;

export interface GetLimits {
  maxBytes: number;
  timeoutMs: number;
  allowPrivateNetwork: boolean;
}

export type GetOutcome =
  | {
      kind: 'ok';
      url: URL;
      status: number;
      statusText: string;
      /** Media type, lower-cased, without parameters ('' when the server sent none). */
      mediaType: string;
      charset: string | undefined;
      body: Buffer;
    }
  | { kind: 'redirect'; from: URL; to: URL; status: number; statusText: string };

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
  'application/sql',
  'application/graphql',
  'application/x-ndjson',
  'application/jsonl',
  'application/csv',
  'application/x-www-form-urlencoded',
  'image/svg+xml',
]);

/** Whether a media type is text WebFetch can return. An empty type is decided by sniffing the body. */
export function isTextType(mediaType: string): boolean {
  return (
    mediaType === '' ||
    mediaType.startsWith('text/') ||
    TEXT_TYPES.has(mediaType) ||
    mediaType.endsWith('+json') ||
    mediaType.endsWith('+xml')
  );
}

export function isHtmlType(mediaType: string): boolean {
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}

function parseContentType(h: string | undefined): { mediaType: string; charset: string | undefined } {
  if (!h) return { mediaType: '', charset: undefined };
  const [type, ...params] = h.split(';');
  let charset: string | undefined;
  for (const p of params) {
    const m = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(p);
    if (m) charset = m[1]!.toLowerCase();
  }
  return { mediaType: (type ?? '').trim().toLowerCase(), charset };
}

/** The addresses a URL's host stands for, each vetted unless private networks are allowed. */
async function vettedAddresses(url: URL, allowPrivate: boolean): Promise<Array<{ address: string; family: number }>> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addrs: Array<{ address: string; family: number }>;
  const family = net.isIP(host);
  if (family !== 0) addrs = [{ address: host, family }];
  else {
    try {
      addrs = await dns.lookup(host, { all: true, verbatim: true });
    } catch (e) {
      throw new ToolError(`WebFetch could not resolve the host ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'network');
    }
    if (addrs.length === 0) throw new ToolError(`WebFetch could not resolve the host ${host}: no addresses`, 'network');
  }
  if (!allowPrivate) {
    for (const a of addrs) {
      const why = blockedAddressReason(a.address);
      if (why) {
        throw new ToolError(
          `WebFetch refused ${url.href}: ${host}${a.address === host ? ' is' : ` resolves to ${a.address},`} ${why}. ` +
            'Fetching loopback, private, link-local and other non-public addresses is disabled (webFetch.allowPrivateNetwork).',
          'permission',
        );
      }
    }
  }
  return addrs;
}

/** Whether a redirect stays on the same host (same scheme and port, or an upgrade to https). */
export function isSameHostRedirect(from: URL, to: URL): boolean {
  if (from.hostname !== to.hostname) return false;
  if (from.protocol === to.protocol) return from.port === to.port;
  return from.protocol === 'http:' && to.protocol === 'https:';
}

interface Exchange {
  res: http.IncomingMessage;
  req: http.ClientRequest;
}

function request(url: URL, addr: { address: string; family: number }, signal: AbortSignal): Promise<Exchange> {
  const mod = url.protocol === 'https:' ? https : http;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise<Exchange>((resolve, reject) => {
    const req = mod.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        agent: false,
        signal,
        headers: {
          'user-agent': USER_AGENT,
          accept: 'text/markdown, text/html, text/plain;q=0.9, application/json;q=0.9, */*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
        ...(net.isIP(host) === 0 && url.protocol === 'https:' ? { servername: host } : {}),
        // Connect to the address that was vetted, never to a second DNS answer.
        lookup: ((_h: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
          if (opts?.all) cb(null, [addr]);
          else cb(null, addr.address, addr.family);
        }) as unknown as net.LookupFunction,
      },
      (res) => resolve({ res, req }),
    );
    req.on('error', reject);
    req.end();
  });
}

function decoded(res: http.IncomingMessage): Readable {
  const enc = (res.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  let z: Transform;
  switch (enc) {
    case 'identity':
    case '':
      return res;
    case 'gzip':
    case 'x-gzip':
      z = zlib.createGunzip();
      break;
    case 'deflate':
      z = zlib.createInflate();
      break;
    case 'br':
      z = zlib.createBrotliDecompress();
      break;
    default:
      res.destroy();
      throw new ToolError(`WebFetch cannot decode the content encoding "${enc}"`, 'tool_error');
  }
  // pipeline, not pipe: an aborted or failed response must fail the decompressor (and the read) too.
  pipeline(res, z, () => {});
  return z;
}

async function readCapped(stream: Readable, url: URL, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      stream.destroy();
      throw new ToolError(
        `The response from ${url.href} is larger than ${formatSize(maxBytes)} (webFetch.maxBytes); WebFetch stopped reading it.`,
        'tool_error',
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function binaryRefusal(url: URL, mediaType: string, length: string | undefined): ToolError {
  const size = length && /^\d+$/.test(length) ? `, ${formatSize(Number(length))}` : '';
  return new ToolError(
    `WebFetch cannot return binary content: ${url.href} is ${mediaType || 'binary data'}${size}. It returns HTML (as Markdown) and text only.`,
    'tool_error',
  );
}

/** Fetches a URL with the guards above. Throws ToolError with a class for every failure. */
export async function guardedGet(start: URL, limits: GetLimits, outer: AbortSignal): Promise<GetOutcome> {
  await loadNetworkModules();
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, limits.timeoutMs);
  const onOuter = (): void => ac.abort();
  outer.addEventListener('abort', onOuter, { once: true });
  const fail = (e: unknown, url: URL): never => {
    if (outer.aborted) throw new ToolError('The fetch was cancelled.', 'cancelled');
    if (timedOut) throw new ToolError(`WebFetch timed out after ${limits.timeoutMs / 1000} s fetching ${url.href} (webFetch.timeoutMs).`, 'timeout');
    if (e instanceof ToolError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new ToolError(`WebFetch could not fetch ${url.href}: ${code ? `${code} ` : ''}${(e as Error).message}`.trim(), 'network');
  };
  try {
    let url = start;
    for (let hop = 0; ; hop++) {
      let ex: Exchange;
      try {
        const [addr] = await vettedAddresses(url, limits.allowPrivateNetwork);
        ex = await request(url, addr!, ac.signal);
      } catch (e) {
        return fail(e, url);
      }
      const { res } = ex;
      const status = res.statusCode ?? 0;
      const statusText = res.statusMessage ?? '';
      if (status >= 300 && status < 400 && status !== 304) {
        res.resume();
        const loc = res.headers.location;
        if (!loc) throw new ToolError(`${url.href} answered ${status} ${statusText} without a Location header.`, 'network');
        let to: URL;
        try {
          to = new URL(loc, url);
        } catch {
          throw new ToolError(`${url.href} redirects to an invalid URL: ${loc}`, 'network');
        }
        if (!isSameHostRedirect(url, to)) return { kind: 'redirect', from: url, to, status, statusText };
        if (hop + 1 > MAX_REDIRECTS) throw new ToolError(`${start.href} redirected more than ${MAX_REDIRECTS} times; WebFetch stopped.`, 'network');
        url = to;
        continue;
      }
      if (status < 200 || status >= 300) {
        res.resume();
        throw new ToolError(`${url.href} answered ${status} ${statusText}.`.replace(' .', '.'), status === 404 || status === 410 ? 'not_found' : 'network');
      }
      const { mediaType, charset } = parseContentType(res.headers['content-type']);
      if (!isTextType(mediaType)) {
        res.destroy();
        throw binaryRefusal(url, mediaType, res.headers['content-length']);
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        res.destroy();
        throw new ToolError(
          `The response from ${url.href} is ${formatSize(declared)}, more than ${formatSize(limits.maxBytes)} (webFetch.maxBytes); WebFetch did not read it.`,
          'tool_error',
        );
      }
      let body: Buffer;
      try {
        body = await readCapped(decoded(res), url, limits.maxBytes);
      } catch (e) {
        return fail(e, url);
      }
      if (body.subarray(0, SNIFF_BYTES).includes(0) && !/^utf-?16/.test(charset ?? '')) {
        throw binaryRefusal(url, mediaType || 'binary data', String(body.length));
      }
      return { kind: 'ok', url, status, statusText, mediaType, charset, body };
    }
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onOuter);
  }
}
