/**
 * What every command gets: its streams, environment and working directory
 * (passed in, so tests run commands in-process), and the one error type a
 * command throws to end with a message and an exit code.
 */

/** Exit codes: 0 ok, 1 failure (tool error, service unreachable), 2 usage or configuration. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** Stopped by SIGINT/SIGTERM before finishing (128 + SIGINT), as shells report it. */
export const EXIT_INTERRUPTED = 130;

export interface Writer {
  write(text: string): unknown;
}

export interface CliIO {
  stdout: Writer;
  stderr: Writer;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted when the user interrupts a long-running command (audit --follow). */
  signal?: AbortSignal | undefined;
  /** All of standard input, for a JSON argument given as `-`. */
  readStdin?: (() => Promise<string>) | undefined;
}

/** A command's result: an exit code, or 'running' for a server that keeps the process alive. */
export type CommandResult = number | 'running';

export type Command = (args: string[], io: CliIO) => Promise<CommandResult>;

/** Ends a command: `toolexec: <message>` on stderr and the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function usageError(command: string, message: string): CliError {
  return new CliError(`${command}: ${message} (see: toolexec ${command} --help)`, EXIT_USAGE);
}

/** One line: the messages of what we print never carry the newlines of what they quote. */
export function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}

export function warn(io: CliIO, message: string): void {
  io.stderr.write(`toolexec: warning: ${oneLine(message)}\n`);
}
