#!/usr/bin/env node
/**
 * The `toolexec` command. `serve` runs the service; the operator commands
 * (tools, check, exec, audit) talk to the configuration or to a running
 * service. Exit codes: 0 ok, 1 failure, 2 bad usage or configuration.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config/load.js';
import { serve } from './serve.js';

const USAGE = `usage: toolexec <command> [options]

commands:
  serve      run the service
             --config FILE  --claude-settings FILE  --mcp-config FILE
             --workspace DIR  --host HOST  --port N  --data-dir DIR
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  if (command === 'serve') {
    let values: Record<string, string | boolean | undefined>;
    try {
      ({ values } = parseArgs({
        args: rest,
        options: {
          config: { type: 'string' },
          'claude-settings': { type: 'string' },
          'mcp-config': { type: 'string' },
          workspace: { type: 'string' },
          host: { type: 'string' },
          port: { type: 'string' },
          'data-dir': { type: 'string' },
        },
        strict: true,
      }));
    } catch (e) {
      process.stderr.write(`toolexec: ${(e as Error).message}\n`);
      return 2;
    }
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      process.stderr.write(`toolexec: --port: expected an integer from 0 to 65535, got "${values.port}"\n`);
      return 2;
    }
    let loaded;
    try {
      loaded = loadConfig({
        configPath: values.config as string | undefined,
        claudeSettingsPath: values['claude-settings'] as string | undefined,
        mcpConfigPath: values['mcp-config'] as string | undefined,
        overrides: {
          workspace: values.workspace as string | undefined,
          host: values.host as string | undefined,
          port,
          dataDir: values['data-dir'] as string | undefined,
        },
      });
    } catch (e) {
      if (e instanceof ConfigError) {
        process.stderr.write(`toolexec: invalid configuration: ${e.message}\n`);
        return 2;
      }
      throw e;
    }
    for (const w of loaded.warnings) process.stderr.write(`toolexec: warning: ${w}\n`);
    try {
      const app = await serve({ config: loaded.config, rules: loaded.rules, exitOnShutdown: true });
      const addr = app.server.address();
      const where = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : String(addr);
      process.stderr.write(`toolexec: listening on ${where} (workspace ${app.toolexec.workspace.root})\n`);
    } catch (e) {
      process.stderr.write(`toolexec: ${(e as Error).message}\n`);
      return 2;
    }
    return -1; // keep running
  }
  process.stderr.write(`toolexec: unknown command "${command}"\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    process.stderr.write(`toolexec: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
