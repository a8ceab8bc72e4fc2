/** `toolexec serve`: load the configuration and run the service until SIGTERM or SIGINT. */
import path from 'node:path';
import { envToken } from '../http/auth.js';
import { HOOK_EVENTS, UNRUN_HOOK_TYPES } from '../config/schema.js';
import type { Services } from '../services.js';
import { CONFIG_HELP, CONFIG_OPTIONS, parse, str } from './args.js';
import { loadCliConfig, requireWorkspace } from './config.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, oneLine, usageError, warn, type CliIO, type CommandResult } from './io.js';
import { ruleWarnings } from './rule-warnings.js';

export const SERVE_HELP = `usage: toolexec serve [options]

Runs the service. Without tokens it listens on loopback only; a non-loopback
--host needs server.tokens in the configuration or TOOLEXEC_TOKEN.

${CONFIG_HELP}
  --host HOST              listen address (default 127.0.0.1)
  --port N                 listen port (default 8787; 0 picks a free one)

The command line beats the configuration file, which beats the defaults.
`;

export const SERVE_OPTIONS = { ...CONFIG_OPTIONS, host: { type: 'string' }, port: { type: 'string' } } as const;

export async function serveCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, help } = parse('serve', args, SERVE_OPTIONS, 0);
  if (help) {
    io.stdout.write(SERVE_HELP);
    return 0;
  }
  const portText = str(values, 'port');
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!/^\d+$/.test(portText!) || port > 65535)) {
    throw usageError('serve', `--port: expected an integer from 0 to 65535, got "${portText}"`);
  }
  const loaded = loadCliConfig(values, io, { host: str(values, 'host'), port });
  requireWorkspace(loaded);
  // The Bash parser's WebAssembly compiles off the main thread (~40 ms): started
  // now, it overlaps the loading of the service's modules, and buildApp's own
  // wait for it (the same memoised load) is short. A failure here is buildApp's
  // to report: it loads again.
  import('../bash/parser.js')
    .then((m) => m.initBashParser())
    .catch(() => undefined);
  const { serve, unsafeBindReason, weakEnvTokenReason } = await import('../serve.js');
  const refuse = weakEnvTokenReason(io.env) ?? unsafeBindReason(loaded.config, io.env);
  if (refuse) throw new CliError(refuse, EXIT_USAGE);
  let app;
  try {
    app = await serve({ config: loaded.config, rules: loaded.rules, configFiles: loaded.files, env: io.env, exitOnShutdown: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const hint = code === 'EADDRINUSE' ? ' (the port is taken: pick another with --port)' : '';
    throw new CliError(`cannot start: ${oneLine((e as Error).message)}${hint}`, EXIT_FAILURE);
  }
  const addr = app.server.address();
  const where =
    typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : String(addr);
  for (const w of ruleWarnings(app.toolexec)) warn(io, w);
  // Bound to every interface, the address is no page to open: the console and docs are named on
  // loopback, which reaches them from the machine (and through a port published to it).
  const local =
    typeof addr === 'object' && addr && (addr.address === '0.0.0.0' || addr.address === '::')
      ? `http://${addr.family === 'IPv6' ? '[::1]' : '127.0.0.1'}:${addr.port}`
      : where;
  for (const line of startupSummary(app.toolexec, where, local, io.env)) io.stderr.write(`toolexec: ${line}\n`);
  return 'running';
}

/**
 * What an operator needs to know once the service listens, one fact a line:
 * where it listens and works, where its database is, who may call it, the
 * tools a model is given, and the policy in force. The first line's shape is
 * what scripts and tests wait for.
 */
function startupSummary(svc: Services, where: string, local: string, env: NodeJS.ProcessEnv): string[] {
  const { config } = svc;
  const tokens = config.server.tokens.map((t) => `${t.name} (${t.scopes.join(', ')})`);
  if (envToken(env) !== undefined) tokens.push('TOOLEXEC_TOKEN (every scope)');
  const auth =
    tokens.length > 0
      ? `auth: bearer tokens: ${tokens.join('; ')}`
      : 'auth: none: every local process may call it (loopback only; set TOOLEXEC_TOKEN or server.tokens to require a token)';
  const tools = svc.pool().visible.filter((t) => t.mcpInfo === undefined);
  const upFront = tools.filter((t) => !t.shouldDefer).map((t) => t.name);
  const deferred = tools.filter((t) => t.shouldDefer).map((t) => t.name);
  const servers = Object.keys(config.mcpServers);
  const rules = svc.rules.list();
  const count = (b: string): number => rules.filter((r) => r.behavior === b).length;
  // Hooks on an event toolexec never fires, or of a type it does not run, are counted apart:
  // "1 Stop" beside the warning that Stop hooks are not run read as if they were.
  const hooks = Object.entries(config.hooks).flatMap(([event, groups]) => {
    const all = groups.flatMap((g) => g.hooks);
    const fired = (HOOK_EVENTS as readonly string[]).includes(event);
    const run = fired ? all.filter((h) => !UNRUN_HOOK_TYPES.has(h.type)).length : 0;
    const notRun = all.length - run;
    return [...(run > 0 ? [`${run} ${event}`] : []), ...(notRun > 0 ? [`${notRun} ${event} (not run)`] : [])];
  });
  return [
    `listening on ${where} (workspace ${svc.workspace.root})`,
    `database ${config.storage.path === ':memory:' ? 'in memory (nothing is kept)' : path.resolve(config.storage.path)}`,
    auth,
    `tools: ${upFront.join(', ')}${deferred.length > 0 ? `; deferred behind ToolSearch: ${deferred.join(', ')}` : ''}`,
    servers.length > 0 ? `MCP servers: ${servers.join(', ')} (connecting in the background; their state: GET /mcp/servers)` : 'MCP servers: none',
    `permissions: mode ${config.permissions.defaultMode}; rules: ${count('allow')} allow, ${count('ask')} ask, ${count('deny')} deny; hooks: ${config.disableAllHooks ? 'all disabled' : hooks.length > 0 ? hooks.join(', ') : 'none'}; an ask with no approver subscribed is ${config.permissions.headless === 'wait' ? 'held until answered' : 'denied'}`,
    `console ${local}/console, API docs ${local}/docs`,
  ];
}
