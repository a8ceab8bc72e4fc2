/**
 * Running the `toolexec` command in tests: in-process (runCli with captured
 * streams, fast) for what a command prints and returns, and as the built
 * binary (dist/cli.js, built by global-setup) for what only a process shows:
 * exit codes, signals, the shebang, a server that keeps running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { runCli } from '../src/cli.js';
import type { CliIO } from '../src/cli/io.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const BIN = path.join(ROOT, 'dist', 'cli.js');

export interface Outcome {
  code: number | 'running';
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stdin?: string;
  signal?: AbortSignal;
}

/** The environment without the variables the CLI reads, so the caller's shell cannot leak in. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLEXEC_')) env[k] = v;
  return { ...env, ...extra };
}

export async function cli(args: string[], opts: RunOptions = {}): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: opts.env ?? cleanEnv(),
    cwd: opts.cwd ?? ROOT,
    signal: opts.signal,
    readStdin: async () => opts.stdin ?? '',
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** Resolves once stdout+stderr match the pattern; rejects if the process ends first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

export function spawnBin(args: string[], opts: RunOptions & { command?: string[] } = {}): Proc {
  const [cmd, ...pre] = opts.command ?? [process.execPath, BIN];
  const child = spawn(cmd!, [...pre, ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const poke = (): void => {
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    poke();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString('utf8');
    poke();
  });
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  else child.stdin!.end();
  let ended = false;
  const exited = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => {
      ended = true;
      poke();
      resolve(code ?? signal ?? -1);
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${pattern}; stdout: ${out.slice(-2000)} stderr: ${err.slice(-2000)}`));
        }, timeoutMs);
        function check(): void {
          const m = (out + err).match(pattern);
          if (m) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(m);
          } else if (ended) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the process ended before ${pattern}; stdout: ${out.slice(-2000)} stderr: ${err.slice(-2000)}`));
          }
        }
        waiters.add(check);
        check();
      });
    },
  };
}

/** Runs the binary to its end. */
export async function runBin(args: string[], opts: RunOptions & { command?: string[] } = {}): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const p = spawnBin(args, opts);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

export interface Served {
  proc: Proc;
  url: string;
  stop(): Promise<number | string>;
}

/** `toolexec serve` as a process on a free loopback port; resolves once it listens. */
export async function serveBin(args: string[], opts: RunOptions & { command?: string[] } = {}): Promise<Served> {
  const proc = spawnBin(['serve', '--port', '0', ...args], opts);
  const m = await proc.waitFor(/listening on http:\/\/[^:]+:(\d+)/);
  const url = `http://127.0.0.1:${m[1]}`;
  return {
    proc,
    url,
    async stop() {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
      return proc.exited;
    },
  };
}
