/**
 * The operator commands' view of a running service: its URL and token (from
 * the options or TOOLEXEC_URL / TOOLEXEC_TOKEN), JSON requests, and every
 * failure turned into one clear line (exit 1): unreachable, refused token,
 * or the service's own error code and message.
 */
import { str, type Values } from './args.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, oneLine, type CliIO } from './io.js';

/** A failed request: `status` is the HTTP status, or undefined when the service could not be reached. */
export class ServiceError extends CliError {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message, EXIT_FAILURE);
  }

  /** Worth asking again later: unreachable, or the service's own trouble (5xx, shutting down). */
  get transient(): boolean {
    return this.status === undefined || this.status >= 500;
  }
}

export interface ServiceTarget {
  url: URL;
  token: string | undefined;
}

/** The service the options or the environment name, or undefined for none. */
export function serviceTarget(command: string, values: Values, io: CliIO): ServiceTarget | undefined {
  const raw = str(values, 'url') ?? (io.env.TOOLEXEC_URL || undefined);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`${command}: --url: expected an http(s) URL like http://127.0.0.1:8787, got "${raw}"`, EXIT_USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`${command}: --url: expected an http(s) URL like http://127.0.0.1:8787, got "${raw}"`, EXIT_USAGE);
  }
  const token = str(values, 'token') ?? (io.env.TOOLEXEC_TOKEN || undefined);
  return { url, token };
}

/**
 * Where `tools` and `check` get their answer: a running service when --url
 * (or, without configuration options, TOOLEXEC_URL) names one; otherwise
 * undefined, for the configuration built in-process.
 */
export function chooseTarget(command: string, values: Values, io: CliIO, namesConfig: boolean): ServiceTarget | undefined {
  if (str(values, 'url') !== undefined && namesConfig) {
    throw new CliError(
      `${command}: --url asks a running service, which has its own configuration: drop --config and the other configuration options, or drop --url (see: toolexec ${command} --help)`,
      EXIT_USAGE,
    );
  }
  return namesConfig ? undefined : serviceTarget(command, values, io);
}

export function requireTarget(command: string, values: Values, io: CliIO): ServiceTarget {
  const t = serviceTarget(command, values, io);
  if (!t) throw new CliError(`${command}: no service given: pass --url http://HOST:PORT or set TOOLEXEC_URL`, EXIT_USAGE);
  return t;
}

/** Joins a path (and query) onto the service URL, keeping a base path such as a proxy prefix. */
export function endpoint(target: ServiceTarget, p: string, query: Record<string, string | undefined> = {}): URL {
  const base = target.url.href.endsWith('/') ? target.url.href : `${target.url.href}/`;
  const u = new URL(p.replace(/^\//, ''), base);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, v);
  return u;
}

function describeFetchError(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return (e as Error).message;
}

export interface RequestOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  query?: Record<string, string | undefined>;
  signal?: AbortSignal | undefined;
  /** Status codes returned to the caller instead of thrown (e.g. 503 for /readyz). */
  accept?: number[];
  /** Gives up (a transient ServiceError) after this long; default: wait as long as the call takes. */
  timeoutMs?: number | undefined;
}

export interface ServiceResponse<T> {
  status: number;
  body: T;
}

/** One JSON request; failures become a CliError naming the URL and what to check. */
export async function request<T>(target: ServiceTarget, p: string, opts: RequestOptions = {}): Promise<ServiceResponse<T>> {
  const url = endpoint(target, p, opts.query);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.token) headers.authorization = `Bearer ${target.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const timeout = opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs);
  const signals = [opts.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
  // fetch holds no handle of its own while its connection is being replaced:
  // without this timer a request lost that way would let the process end,
  // with exit code 0, as if it had succeeded.
  const keepAlive = setInterval(() => {}, 60_000);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: opts.method ?? 'GET',
      headers,
      body: opts.body === undefined ? null : JSON.stringify(opts.body),
      signal: signals.length === 0 ? null : signals.length === 1 ? signals[0]! : AbortSignal.any(signals),
    });
    text = await res.text();
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    if (timeout?.aborted) throw new ServiceError(`no answer from the service at ${target.url.origin} within ${opts.timeoutMs} ms`, undefined);
    throw new ServiceError(`cannot reach the service at ${target.url.origin} (${describeFetchError(e)}): is it running, and are --url / TOOLEXEC_URL right?`, undefined);
  } finally {
    clearInterval(keepAlive);
  }
  let body: unknown;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (res.ok || opts.accept?.includes(res.status)) return { status: res.status, body: body as T };
  const err = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
  const what = err?.code ? `${err.code}: ${err.message ?? ''}` : oneLine(text).slice(0, 300) || res.statusText;
  let hint = '';
  if (res.status === 401) hint = target.token ? ' (the token was refused: check --token / TOOLEXEC_TOKEN)' : ' (the service needs a token: pass --token or set TOOLEXEC_TOKEN)';
  else if (res.status === 403) hint = ' (the token lacks the scope this needs)';
  throw new ServiceError(`${url.pathname}: the service answered ${res.status} ${oneLine(what)}${hint}`, res.status);
}
