/**
 * Loading the configuration for a command: the options of CONFIG_OPTIONS
 * (plus serve's --host/--port), every warning printed, and a bad file
 * reported in one line with exit code 2.
 */
import fs from 'node:fs';
import { ConfigError, loadConfig, type Loaded } from '../config/load.js';
import { str, strs, type Values } from './args.js';
import { CliError, EXIT_USAGE, oneLine, warn, type CliIO } from './io.js';

export interface ConfigOverrides {
  host?: string | undefined;
  port?: number | undefined;
}

export function loadCliConfig(values: Values, io: CliIO, extra: ConfigOverrides = {}): Loaded {
  let loaded: Loaded;
  try {
    loaded = loadConfig({
      configPath: str(values, 'config'),
      claudeSettingsPath: strs(values, 'claude-settings'),
      mcpConfigPath: str(values, 'mcp-config'),
      overrides: {
        workspace: str(values, 'workspace'),
        dataDir: str(values, 'data-dir'),
        host: extra.host,
        port: extra.port,
      },
      env: io.env,
      cwd: io.cwd,
    });
  } catch (e) {
    if (e instanceof ConfigError) {
      for (const w of e.warnings) warn(io, w);
      throw new CliError(`invalid configuration: ${oneLine(e.message)}`, EXIT_USAGE);
    }
    throw e;
  }
  for (const w of loaded.warnings) warn(io, w);
  return loaded;
}

/** Whether any option or variable names a configuration (so that --url with one is a conflict). */
export function namesConfig(values: Values): boolean {
  return ['config', 'claude-settings', 'mcp-config', 'workspace', 'data-dir'].some((k) => strs(values, k) !== undefined);
}

/** The workspace must exist: the service confines every path to it. */
export function requireWorkspace(loaded: Loaded): void {
  const root = loaded.config.workspace.root;
  let ok = false;
  try {
    ok = fs.statSync(root).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new CliError(`invalid configuration: workspace.root: ${root} is not a directory`, EXIT_USAGE);
}
