#!/usr/bin/env node
/**
 * The `toolexec` command. `serve` runs the service; the operator commands
 * talk to the configuration (tools, check), to the database (denied-memory)
 * or to a running service (exec, audit, approve, health, and tools/check
 * with --url). Each command lives in
 * src/cli/ and is imported only when used, so that `toolexec health` (the
 * container's HEALTHCHECK) starts in a few milliseconds.
 * Exit codes: 0 ok, 1 failure, 2 bad usage or configuration.
 */
import fs from 'node:fs';
import { CliError, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, type CliIO, type Command, type CommandResult } from './cli/io.js';
import { readProcessStdin } from './cli/args.js';

const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./cli/serve.js')).serveCommand,
  tools: async () => (await import('./cli/tools.js')).toolsCommand,
  check: async () => (await import('./cli/check.js')).checkCommand,
  exec: async () => (await import('./cli/exec.js')).execCommand,
  audit: async () => (await import('./cli/audit.js')).auditCommand,
  approve: async () => (await import('./cli/approve.js')).approveCommand,
  health: async () => (await import('./cli/health.js')).healthCommand,
  'denied-memory': async () => (await import('./cli/denied-memory.js')).deniedMemoryCommand,
};

export const USAGE = `usage: toolexec <command> [options]

commands:
  serve     run the service
  tools     print the tool catalog (names, deferred or not, token size)
  check     explain the permission decision for a tool call, running nothing
  exec      run one tool call on a running service and print its result
  audit     print (or follow) a running service's permission decisions
  approve   list the permission requests waiting for a person, or answer one
  health    exit 0 when a running service is alive (or ready)
  denied-memory
            the memory of denied files met by identity: size, overflow,
            files no longer at their denied names; clear it after checking

Run "toolexec <command> --help" for a command's options, "toolexec --version"
for the version.
Environment: TOOLEXEC_CONFIG (configuration file), TOOLEXEC_URL (a running
service, for exec/audit/approve/health and tools/check), TOOLEXEC_TOKEN (its
token).
Exit codes: 0 ok, 1 failure, 2 bad usage or configuration.
`;

function version(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Runs a command line (without `node cli.js`); the exit code, or 'running' for a server. */
export async function runCli(argv: string[], io: CliIO): Promise<CommandResult> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.stderr.write(USAGE);
    return EXIT_USAGE;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  if (command === '--version' || command === '-V') {
    io.stdout.write(`${version()}\n`);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) {
    io.stderr.write(`toolexec: unknown command "${command}"\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  try {
    return await (await load())(rest, io);
  } catch (e) {
    // Interrupted (Ctrl-C) while waiting: nothing went wrong, the user stopped it.
    if (io.signal?.aborted) return EXIT_INTERRUPTED;
    if (e instanceof CliError) {
      io.stderr.write(`toolexec: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return fs.realpathSync(entry) === fs.realpathSync(new URL(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const ac = new AbortController();
  // serve installs its own handlers; for the other commands, a first Ctrl-C
  // ends a --follow cleanly and a second one ends the process.
  const onSignal = (): void => {
    if (ac.signal.aborted) process.exit(EXIT_INTERRUPTED);
    ac.abort();
  };
  const io: CliIO = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), signal: ac.signal, readStdin: readProcessStdin };
  const command = process.argv[2];
  if (command !== 'serve') {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  let settled = false;
  // A command whose work was lost (a promise no handle keeps alive) must not end as a success.
  process.on('beforeExit', () => {
    if (settled) return;
    process.stderr.write('toolexec: internal error: the command ended without finishing its work\n');
    process.exit(EXIT_FAILURE);
  });
  runCli(process.argv.slice(2), io).then(
    (code) => {
      settled = true;
      if (code === 'running') return;
      // Exit once what was written has been handed to the OS (pipes may be asynchronous).
      process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
    },
    (e: unknown) => {
      settled = true;
      process.stderr.write(`toolexec: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(EXIT_FAILURE);
    },
  );
}
