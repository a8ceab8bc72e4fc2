/** `toolexec serve`: load the configuration and run the service until SIGTERM or SIGINT. */
import { CONFIG_HELP, CONFIG_OPTIONS, parse, str } from './args.js';
import { loadCliConfig, requireWorkspace } from './config.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, oneLine, usageError, type CliIO, type CommandResult } from './io.js';

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
  io.stderr.write(`toolexec: listening on ${where} (workspace ${app.toolexec.workspace.root})\n`);
  return 'running';
}
