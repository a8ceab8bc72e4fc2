/**
 * The service's logger: pino with redaction at three depths.
 *
 * 1. Paths: pino's `redact` censors known fields (authorization headers,
 *    tokens) wherever an object carries them.
 * 2. Requests: the `req` serializer keeps id, method and url only (no
 *    headers), with `?token=` (websocket credentials) masked.
 * 3. Values: a `streamWrite` hook masks every secret value in the finished
 *    line, whatever field or message it hides in (an error message quoting a
 *    token, an MCP server's stderr). Secrets are the configured tokens,
 *    TOOLEXEC_TOKEN, the values of credential-like headers in the
 *    configuration, and the values of the environment variables that
 *    `server.redact` names.
 *
 * `server.redact` entries are read three ways: `/regex/flags` is a pattern
 * masked in every line; an entry pino accepts as a path is redacted as one;
 * an entry naming a set environment variable has its value masked (the same
 * names are kept out of child environments, util/env.ts).
 *
 * With no secret and no pattern the hook is not installed; with some, it is
 * one precompiled regexp replace per line written, never per call.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { envToken } from '../http/auth.js';

export const CENSOR = '[redacted]';

/** Paths whose values never reach the logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'token',
  '*.token',
  'tokens[*].token',
];

export interface LoggerOptions {
  level: string;
  /** `server.redact` entries (see the file comment). */
  redact?: readonly string[] | undefined;
  /** Values that must never appear in a line. */
  secrets?: readonly string[] | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Where lines go (default stdout). */
  stream?: DestinationStream | undefined;
}

const REGEX_ENTRY = /^\/(.+)\/([a-z]*)$/s;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CREDENTIAL_HEADER = /authorization|token|api[-_]?key|secret|password|cookie/i;
/** `${VAR}` or `${VAR:-default}`: the default is what is sent when VAR is unset (mcp/env-expand.ts). */
const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
/** http hooks expand `$VAR` as well as `${VAR}` (hooks/runner.ts). */
const HOOK_ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isRedactPath(p: string): boolean {
  try {
    pino({ redact: [p], enabled: false });
    return true;
  } catch {
    return false;
  }
}

interface RedactPlan {
  paths: string[];
  patterns: RegExp[];
  secrets: string[];
}

/** Splits `server.redact` into paths, patterns and secret values; a bad pattern is a configuration error. */
export function planRedaction(entries: readonly string[], env: NodeJS.ProcessEnv): RedactPlan {
  const plan: RedactPlan = { paths: [], patterns: [], secrets: [] };
  for (const entry of entries) {
    const m = REGEX_ENTRY.exec(entry);
    if (m) {
      try {
        const flags = m[2]!.includes('g') ? m[2]! : `${m[2]!}g`;
        plan.patterns.push(new RegExp(m[1]!, flags));
      } catch (e) {
        throw new Error(`server.redact: ${entry} is not a valid regular expression (${(e as Error).message})`);
      }
      continue;
    }
    if (isRedactPath(entry)) plan.paths.push(entry);
    if (ENV_NAME.test(entry)) {
      const v = env[entry];
      if (v) plan.secrets.push(v);
    }
  }
  return plan;
}

/**
 * The forms a secret takes in a JSON line: as written, JSON-escaped, and
 * percent-encoded (a URL that quotes it).
 */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  return [...forms];
}

/** A function that masks the secrets and patterns in a line, or undefined when there is nothing to mask. */
export function makeMasker(secrets: readonly string[], patterns: readonly RegExp[] = []): ((line: string) => string) | undefined {
  const forms = [...new Set(secrets.filter((s) => s.length > 0).flatMap(secretForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0 && patterns.length === 0) return undefined;
  const values = forms.length > 0 ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : undefined;
  // A line shorter than every form holds none (most tool results are short: 'ok' cost a replace, 0.12-0.15 µs).
  const shortest = forms.length > 0 ? forms[forms.length - 1]!.length : 0;
  return (line) => {
    let out = values && line.length >= shortest ? line.replace(values, CENSOR) : line;
    for (const p of patterns) out = out.replace(p, CENSOR);
    return out;
  };
}

/**
 * `value` with `mask` applied to every string in it, object keys included, for
 * a JSON value bound for a response or a row (a tool input, a decision, hook
 * messages): the same value when nothing changed. Masking the values rather
 * than their JSON text keeps the JSON whole whatever a `/regex/` entry matches.
 */
export function maskValue<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === 'string') return mask(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    // Copied only from the first element that changes: most values hold no secret, and pay no allocation.
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const m = maskValue(v, mask);
      if (out === undefined && m !== v) out = value.slice(0, i);
      out?.push(m);
    }
    return (out ?? value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const keys = Object.keys(value);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = (value as Record<string, unknown>)[k];
    const mk = mask(k);
    const mv = maskValue(v, mask);
    if (out === undefined && (mk !== k || mv !== v)) {
      out = {};
      for (let j = 0; j < i; j++) put(out, keys[j]!, (value as Record<string, unknown>)[keys[j]!]);
    }
    if (out !== undefined) put(out, mk, mv);
  }
  return (out ?? value) as T;
}

/** Sets a key, a "__proto__" key (JSON.parse makes it an own property) as one, not as the object's prototype. */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** A query parameter that carries a credential (`?api_key=`, `?token=`, `?exaApiKey=`, `?sig=`). */
const CREDENTIAL_PARAM = /^(key|auth|sig|signature|code)$/i;

/**
 * The name of a variable that holds a credential (`GITHUB_TOKEN`, `EXA_API_KEY`, `DB_PASSWORD`,
 * `OPENAI_KEY`): its value is a secret wherever the configuration expands it.
 */
const CREDENTIAL_VAR = /token|api[-_]?key|secret|passw(or)?d|credential|cookie|authorization|(^|_)(private_)?key$/i;

/** The values of the credential-named variables `${VAR}` references in `text` (an MCP server's url, args, env, headers). */
function credentialVars(text: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (!text?.includes('${')) return [];
  const out: string[] = [];
  for (const m of text.matchAll(ENV_REF)) {
    const v = env[m[1]!] ?? m[2];
    if (v && CREDENTIAL_VAR.test(m[1]!)) out.push(v);
  }
  return out;
}

/** A URL part as written and percent-decoded. */
function bothForms(raw: string): string[] {
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    /* kept as written */
  }
  return raw === decoded ? [raw] : [raw, decoded];
}

/**
 * The credentials of a URL: its userinfo (`scheme://user:password@host`) and its
 * credential-like query parameters (`?api_key=…`, as hosted MCP servers take
 * their key), as written and decoded; `${VAR}`s expanded from env.
 */
function urlCredentials(url: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (!url) return [];
  let u: URL;
  try {
    u = new URL(url.replace(ENV_REF, (whole, name: string, def: string | undefined) => env[name] ?? def ?? whole));
  } catch {
    return [];
  }
  const out: string[] = [];
  // Without a password, a lone user name is the credential when it looks like a token (`https://TOKEN@host`, not `git@`).
  const user = u.password || (u.username.length >= 16 ? u.username : '');
  if (user) out.push(...bothForms(user));
  for (const part of u.search.slice(1).split('&')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = bothForms(part.slice(0, eq)).at(-1)!;
    const value = part.slice(eq + 1);
    if (value && (CREDENTIAL_HEADER.test(name) || CREDENTIAL_PARAM.test(name))) out.push(...bothForms(value), ...bothForms(value.replace(/\+/g, ' ')));
  }
  return [...new Set(out)];
}

/**
 * Secret values the configuration and environment hold: tokens,
 * credential-like header values (the variables their `${VAR}`/`$VAR` name),
 * credential-like MCP `env` values, the credential-named variables an MCP
 * server's settings expand anywhere (url, args, env, headers), the variables
 * http hooks' headers take from allowedEnvVars, and the credentials in
 * configured URLs' userinfo and credential-like query parameters.
 */
export function configSecrets(config: Config, env: NodeJS.ProcessEnv): string[] {
  const tokens = config.server.tokens.map((t) => t.token);
  const fromEnv = envToken(env);
  if (fromEnv) tokens.push(fromEnv);
  // Values found by their names (headers, env, URLs) rather than declared secret.
  const out: string[] = [];
  out.push(...urlCredentials(config.classifier?.url, env));
  const headerSets: Array<Record<string, string> | undefined> = [config.classifier?.headers];
  for (const s of Object.values(config.mcpServers)) {
    if ('url' in s) {
      headerSets.push(s.headers);
      out.push(...urlCredentials(s.url, env), ...credentialVars(s.url, env));
      for (const v of Object.values(s.headers ?? {})) out.push(...credentialVars(v, env));
    }
    // An MCP server's env is the usual way to hand it an API key: credential-like names are secrets.
    if ('env' in s) {
      headerSets.push(s.env);
      for (const v of Object.values(s.env ?? {})) out.push(...urlCredentials(v, env), ...credentialVars(v, env));
    }
    // So is a credential-named variable its command line expands (`--api-key ${EXA_API_KEY}`).
    if ('command' in s) for (const a of [s.command, ...s.args]) out.push(...credentialVars(a, env));
  }
  for (const groups of Object.values(config.hooks)) {
    for (const g of groups) {
      for (const h of g.hooks) {
        if (h.type !== 'http') continue;
        headerSets.push(h.headers);
        out.push(...urlCredentials(h.url, env));
        // A hook's headers may send any variable allowedEnvVars lists, whatever the header's name.
        const allowed = new Set(h.allowedEnvVars ?? []);
        for (const value of Object.values(h.headers ?? {})) {
          for (const m of value.matchAll(HOOK_ENV_REF)) {
            const name = m[1] ?? m[2]!;
            const v = env[name];
            if (allowed.has(name) && v) out.push(v);
          }
        }
      }
    }
  }
  for (const headers of headerSets) {
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (!CREDENTIAL_HEADER.test(name)) continue;
      // A `${VAR}` template is expanded from the environment when used: the variable's value is the secret.
      if (value.includes('${')) {
        for (const m of value.matchAll(ENV_REF)) {
          const v = env[m[1]!] ?? m[2];
          if (v) out.push(v);
        }
        continue;
      }
      const v = value.replace(/^(Bearer|Basic|Token)\s+/i, '').trim();
      if (v.length > 0) out.push(v);
    }
  }
  // A short value under a credential-like name (`CACHE_TOKEN: "1"`, `..._SECRET: "true"`) is
  // not masked: masked everywhere, it would garble every log line and strip every variable
  // that happens to equal it from child environments.
  return [...tokens, ...out.filter((v) => v.length >= MIN_FOUND_SECRET_CHARS)];
}

/** The shortest value configSecrets treats as a secret when only its name says it is one. */
export const MIN_FOUND_SECRET_CHARS = 8;

const IDENTITY = (s: string): string => s;

/**
 * Masks the configuration's secrets (configSecrets, plus `server.redact`'s
 * variables and patterns) in text bound for a response: an MCP server's
 * last_error, a hook's or the classifier's error.
 */
export function secretMasker(config: Config, env: NodeJS.ProcessEnv): (text: string) => string {
  let plan: RedactPlan;
  try {
    plan = planRedaction(config.server.redact, env);
  } catch {
    // A bad pattern is refused by the logging setup; here the other entries still apply.
    plan = planRedaction(config.server.redact.filter((r) => !REGEX_ENTRY.test(r)), env);
  }
  return makeMasker([...configSecrets(config, env), ...plan.secrets], plan.patterns) ?? IDENTITY;
}

/** secretMasker, or undefined when the configuration holds no secret (nothing to pay for). */
export function outputMasker(config: Config, env: NodeJS.ProcessEnv): ((text: string) => string) | undefined {
  const m = secretMasker(config, env);
  return m === IDENTITY ? undefined : m;
}

/**
 * A query parameter a logged URL may carry a credential in: the websocket's `?token=`, and the names
 * clients use for one (`?access_token=`, `?api_key=`, `?password=`): a wrong one is someone's secret too.
 */
const TOKEN_PARAM = /([?&](?:[^=&#]*(?:token|api[-_]?key|secret|passw(?:or)?d|auth)[^=&#]*|key|sig|signature)=)[^&#]*/gi;

export function createLogger(opts: LoggerOptions): Logger {
  const plan = planRedaction(opts.redact ?? [], opts.env ?? process.env);
  const mask = makeMasker([...(opts.secrets ?? []), ...plan.secrets], plan.patterns);
  const options: pino.LoggerOptions = {
    level: opts.level,
    redact: { paths: [...REDACT_PATHS, ...plan.paths], censor: CENSOR },
    serializers: {
      req: (req: { method?: string; url?: string; id?: string }) => ({
        id: req.id,
        method: req.method,
        url: typeof req.url === 'string' ? req.url.replace(TOKEN_PARAM, `$1${CENSOR}`) : req.url,
      }),
    },
    ...(mask ? { hooks: { streamWrite: mask } } : {}),
  };
  return opts.stream ? pino(options, opts.stream) : pino(options);
}

/** The logger a service built from this configuration uses. */
export function loggerForConfig(config: Config, env: NodeJS.ProcessEnv, stream?: DestinationStream): Logger {
  return createLogger({ level: config.logging.level, redact: config.server.redact, secrets: configSecrets(config, env), env, stream });
}

const LAZY_HANDLER: ProxyHandler<{ base: Logger; bindings: Record<string, unknown>; child: Logger | undefined }> = {
  get(t, p) {
    const child = (t.child ??= t.base.child(t.bindings));
    const v = Reflect.get(child, p, child) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(child) : v;
  },
  set(t, p, v) {
    const child = (t.child ??= t.base.child(t.bindings));
    return Reflect.set(child, p, v, child);
  },
  has(t, p) {
    return p in (t.child ??= t.base.child(t.bindings));
  },
};

/**
 * A child logger made on first use. A pino child costs 0.4-0.9 µs (its
 * bindings are serialised at creation); a call that logs nothing, almost
 * every call, pays 50-80 ns for this proxy instead (pino 10, Node 20,
 * bench/observability.bench.mjs).
 */
export function lazyChild(base: Logger, bindings: Record<string, unknown>): Logger {
  return new Proxy({ base, bindings, child: undefined }, LAZY_HANDLER) as unknown as Logger;
}

type LogFn = (...args: unknown[]) => void;

/**
 * A request's logger (Fastify's childLoggerFactory), made on first use like
 * lazyChild: Fastify makes a pino child per request, and with request
 * logging off (the default below debug) nearly every request logs nothing.
 * A class rather than a proxy because Fastify checks, per request, that the
 * logging methods exist: here that check finds them on the prototype without
 * making the child.
 */
export class LazyLogger {
  private made: Logger | undefined = undefined;

  constructor(
    private readonly base: Logger,
    private readonly bound: Record<string, unknown>,
  ) {}

  private real(): Logger {
    return (this.made ??= this.base.child(this.bound));
  }

  get level(): string {
    return this.made ? this.made.level : this.base.level;
  }

  set level(l: string) {
    this.real().level = l;
  }

  isLevelEnabled(l: string): boolean {
    return (this.made ?? this.base).isLevelEnabled(l);
  }

  bindings(): Record<string, unknown> {
    return this.real().bindings();
  }

  child(bindings: Record<string, unknown>, options?: pino.ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }

  fatal(...a: unknown[]): void {
    (this.real().fatal as LogFn)(...a);
  }

  error(...a: unknown[]): void {
    (this.real().error as LogFn)(...a);
  }

  warn(...a: unknown[]): void {
    (this.real().warn as LogFn)(...a);
  }

  info(...a: unknown[]): void {
    (this.real().info as LogFn)(...a);
  }

  debug(...a: unknown[]): void {
    (this.real().debug as LogFn)(...a);
  }

  trace(...a: unknown[]): void {
    (this.real().trace as LogFn)(...a);
  }

  silent(): void {}
}

/**
 * Fastify's childLoggerFactory with LazyLogger: a request whose route sets
 * its own level or serializers gets a real child at once.
 */
export function lazyRequestLogger(logger: Logger, bindings: Record<string, unknown>, opts: pino.ChildLoggerOptions): Logger {
  if (opts.level !== undefined || opts.serializers !== undefined) return logger.child(bindings, opts);
  return new LazyLogger(logger, bindings) as unknown as Logger;
}
