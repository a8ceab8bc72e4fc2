/**
 * `toolexec serve`: load the configuration, refuse an unsafe bind, listen,
 * and shut down gracefully on SIGTERM and SIGINT: new requests get 503,
 * running calls get a grace period to finish, the rest are cancelled (with
 * their audit rows), SQLite is closed cleanly, and the process exits 0.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ToolexecError } from './errors.js';
import { envToken } from './http/auth.js';
import { isLoopbackHostname } from './http/context.js';
import { MIN_TOKEN_LENGTH, type Config } from './config/schema.js';
import type { RuleInput } from './permissions/rule-index.js';

/**
 * TOOLEXEC_TOKEN is held to the rule server.tokens is held to: a token of a
 * few characters guards a service that runs shell commands no better than
 * none. Returns the reason to refuse, or undefined.
 */
export function weakEnvTokenReason(env: NodeJS.ProcessEnv): string | undefined {
  const token = envToken(env);
  if (token === undefined || token.length >= MIN_TOKEN_LENGTH) return undefined;
  return `TOOLEXEC_TOKEN is ${token.length} character${token.length === 1 ? '' : 's'} long; a token must be at least ${MIN_TOKEN_LENGTH} (for one: TOOLEXEC_TOKEN="$(openssl rand -hex 24)")`;
}

/** Without tokens, only loopback: returns the reason to refuse, or undefined. */
export function unsafeBindReason(config: Config, env: NodeJS.ProcessEnv): string | undefined {
  const hasTokens = config.server.tokens.length > 0 || envToken(env) !== undefined;
  if (hasTokens || isLoopbackHostname(config.server.host)) return undefined;
  return `refusing to listen on ${config.server.host} without tokens: set server.tokens in the configuration or TOOLEXEC_TOKEN, or listen on 127.0.0.1`;
}

export interface ServeOptions {
  config: Config;
  rules: RuleInput[];
  /** The configuration files loaded: no tool may read them. */
  configFiles?: readonly string[] | undefined;
  env?: NodeJS.ProcessEnv;
  /** Exit the process after shutdown (the CLI); tests keep it alive. */
  exitOnShutdown?: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Graceful shutdown: new requests get 503 at once; running calls have
 * `graceMs` to finish; the rest are cancelled (each commits its row and
 * audit before it leaves the registry); answers in flight are flushed; then
 * the server and the database close.
 */
export async function shutdown(app: FastifyInstance, graceMs: number): Promise<void> {
  const svc = app.toolexec;
  svc.closing = true;
  const deadline = Date.now() + graceMs;
  while (svc.registry.size > 0 && Date.now() < deadline) await sleep(25);
  for (const e of svc.registry.all()) e.controller.abort();
  const hard = Date.now() + 5000;
  while (svc.registry.size > 0 && Date.now() < hard) await sleep(10);
  // Let the answers of the last calls reach their sockets before they close.
  await sleep(50);
  await app.close();
}

export async function serve(opts: ServeOptions): Promise<FastifyInstance> {
  const env = opts.env ?? process.env;
  const { config } = opts;
  const weak = weakEnvTokenReason(env);
  if (weak) throw new ToolexecError('TOOLEXEC_ERR_CONFIG_INVALID', weak);
  const refuse = unsafeBindReason(config, env);
  if (refuse) throw new ToolexecError('TOOLEXEC_ERR_CONFIG_UNSAFE_HOST', refuse);
  const app = await buildApp({ config, rules: opts.rules, configFiles: opts.configFiles, env });
  const log = app.log;
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal: sig }, 'shutting down');
    shutdown(app, config.server.shutdownGraceMs)
      .then(() => {
        log.info('stopped');
        if (opts.exitOnShutdown) process.exit(0);
      })
      .catch((e: unknown) => {
        log.error({ err: e }, 'shutdown failed');
        if (opts.exitOnShutdown) process.exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  app.server.on('close', () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  });
  await app.listen({ host: config.server.host, port: config.server.port });
  return app;
}
