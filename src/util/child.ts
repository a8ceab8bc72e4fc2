/**
 * Child processes for hooks and Bash: each runs in its own process group so
 * that a timeout or a cancel kills the whole tree (SIGTERM, then SIGKILL after
 * a grace), output is capped, and a background child that keeps the pipes
 * open never holds the call open: the call ends when the main process exits.
 */
import { StringDecoder } from 'node:string_decoder';
import { spawnCommand, type Spawned } from './spawner.js';

export interface RunOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes kept per stream when it is collected (not when streamed). */
  maxOutputBytes?: number;
  killGraceMs?: number;
  /** Stream stdout instead of collecting it. */
  onStdout?: (text: string) => void;
  /** Stream stderr instead of collecting it. */
  onStderr?: (text: string) => void;
  /** Sees stdout as it comes while it is still collected (the part kept under the cap). */
  watchStdout?: (text: string) => void;
  /** How long to wait for the pipes to drain after the main process exits. */
  drainMs?: number;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  durationMs: number;
  spawnError: string | undefined;
}

export const DEFAULT_KILL_GRACE_MS = 2000;

/**
 * Signals a whole process group; ignores groups that are already gone. Only
 * when the group cannot be signalled for another reason is its leader
 * signalled alone: once the group is gone, its leader's pid may already be
 * another process's.
 */
export function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return;
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
}

/** Whether a process group still has a member (a signal to a group that is gone could reach a later one). */
export function groupExists(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGTERM to what is left of a process group, and SIGKILL after the grace if anything still is. */
export function terminateGroup(pid: number | undefined, graceMs: number): void {
  if (pid === undefined || !groupExists(pid)) return;
  killGroup(pid, 'SIGTERM');
  setTimeout(() => {
    if (groupExists(pid)) killGroup(pid, 'SIGKILL');
  }, graceMs).unref();
}

/**
 * Runs `fn` once the pipes have had `ms` to drain after their process exited,
 * and after one more poll phase of the event loop. The timers phase comes
 * before the poll phase: with the loop blocked for longer than `ms`, a bare
 * timer would end the read while the output is still waiting in the pipe.
 * Returns a function that cancels it.
 */
export function afterDrain(ms: number, fn: () => void): () => void {
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(fn);
  }, ms);
  return () => {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  };
}

class Capture {
  private chunks: string[] = [];
  private bytes = 0;
  truncated = false;
  private readonly decoder = new StringDecoder('utf8');
  constructor(
    private readonly max: number,
    private readonly sink: ((s: string) => void) | undefined,
    private readonly watch?: (s: string) => void,
  ) {}
  push(b: Buffer): void {
    if (this.sink) {
      const s = this.decoder.write(b);
      if (s) this.sink(s);
      return;
    }
    if (this.bytes >= this.max) {
      this.truncated = true;
      return;
    }
    const room = this.max - this.bytes;
    const part = b.length > room ? b.subarray(0, room) : b;
    if (part.length < b.length) this.truncated = true;
    this.bytes += part.length;
    const s = this.decoder.write(part);
    if (s) {
      this.chunks.push(s);
      this.watch?.(s);
    }
  }
  end(): string {
    const tail = this.decoder.end();
    if (this.sink) {
      if (tail) this.sink(tail);
      return '';
    }
    if (tail) {
      this.chunks.push(tail);
      this.watch?.(tail);
    }
    return this.chunks.join('');
  }
}

/** The result of a child that never ran: aborted before it was spawned, or not spawned at all (`spawnError`). */
function notRun(aborted: boolean, durationMs: number, spawnError: string | undefined): RunResult {
  return { exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, aborted, truncated: false, durationMs, spawnError };
}

export function runChild(opts: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const grace = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const max = opts.maxOutputBytes ?? 1024 * 1024;
  return new Promise<RunResult>((resolve) => {
    const out = new Capture(max, opts.onStdout, opts.watchStdout);
    const err = new Capture(max, opts.onStderr);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let cancelDrain: (() => void) | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;

    if (opts.signal?.aborted) {
      resolve(notRun(true, 0, undefined));
      return;
    }

    let child: Spawned;
    try {
      child = spawnCommand({ file: opts.file, args: opts.args, cwd: opts.cwd, env: opts.env, stdin: opts.stdin ?? '' });
    } catch (e) {
      resolve(notRun(false, performance.now() - started, (e as Error).message));
      return;
    }

    const terminate = (): void => {
      child.withPid((pid) => killGroup(pid, 'SIGTERM'));
      if (!killTimer) {
        killTimer = setTimeout(() => child.withPid((pid) => killGroup(pid, 'SIGKILL')), grace);
        killTimer.unref();
      }
    };

    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, opts.timeoutMs);
    timer.unref();

    const onAbort = (): void => {
      aborted = true;
      terminate();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      cancelDrain?.();
      opts.signal?.removeEventListener('abort', onAbort);
      child.stopReading();
      // Whatever is left in the group (background children) goes with the call.
      child.withPid((pid) => terminateGroup(pid, grace));
      if (killTimer) clearTimeout(killTimer);
      resolve({
        exitCode,
        signal: exitSignal,
        stdout: out.end(),
        stderr: err.end(),
        timedOut,
        aborted,
        truncated: out.truncated || err.truncated,
        durationMs: performance.now() - started,
        spawnError,
      });
    };

    child.onData(1, (b) => out.push(b));
    child.onData(2, (b) => err.push(b));
    child.onError((message) => finish(message));
    let openStreams = 2;
    const streamDone = (): void => {
      openStreams -= 1;
      if (openStreams === 0 && (exitCode !== null || exitSignal !== null)) finish();
    };
    child.onClose(1, streamDone);
    child.onClose(2, streamDone);
    child.onExit((code, sig) => {
      exitCode = code;
      exitSignal = sig;
      if (openStreams === 0) finish();
      // Background children may hold the pipes open: give them a moment, then stop reading.
      else cancelDrain = afterDrain(opts.drainMs ?? 100, () => finish());
    });
  });
}
