/**
 * Background Bash tasks (`run_in_background: true`), as Claude Code has them:
 * the call answers at once with a task id, the command runs on, and
 * TaskOutput / TaskStop read and stop it. A task belongs to the session that
 * started it; other sessions cannot see it.
 *
 * Each task runs in its own process group, like a foreground Bash call, with
 * stdout and stderr appended (in the order they arrive) to one file in a
 * directory private to this service instance. The file is capped
 * (`maxOutputBytes`): past it the output is read and dropped, so a chatty
 * server neither fills the disk nor blocks on a full pipe. When the command
 * exits, what it left running in its group is stopped, as at the end of a
 * foreground call. A task is stopped by TaskStop, at its lifetime
 * (`maxLifetimeMs`), and when the service closes. Finished tasks are kept
 * (`keepFinishedMs`, at most `maxFinishedPerSession` per session) so that
 * their output can still be read, then forgotten with their files.
 *
 * A service killed outright (SIGKILL, a crash) cannot stop its tasks. Every
 * task's processes carry TOOLEXEC_BACKGROUND_TASK=<dir>/<id> in their
 * environment, and the directory is named after the service's pid and start
 * time: the next service to start finds the directories of services no longer
 * running, stops the processes whose environment names them (Linux /proc),
 * and removes them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_KILL_GRACE_MS, afterDrain, terminateGroup } from '../util/child.js';
import { spawnCommand, type Spawned } from '../util/spawner.js';

export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed';

export interface BackgroundTaskLimits {
  /** Running tasks one session may have. */
  maxRunningPerSession: number;
  /** Running tasks in the whole service. */
  maxRunning: number;
  /** Output kept per task, in bytes; the rest is read and dropped. */
  maxOutputBytes: number;
  /** A task still running after this long is stopped. */
  maxLifetimeMs: number;
  /** How long a finished task's output stays readable. */
  keepFinishedMs: number;
  /** Finished tasks kept per session (the oldest are forgotten first). */
  maxFinishedPerSession: number;
  /** Output all tasks keep together, in bytes: past it, the oldest finished tasks are forgotten. */
  maxKeptBytes: number;
}

export const DEFAULT_BACKGROUND_LIMITS: BackgroundTaskLimits = {
  maxRunningPerSession: 8,
  maxRunning: 64,
  maxOutputBytes: 32 * 1024 * 1024,
  maxLifetimeMs: 60 * 60 * 1000,
  keepFinishedMs: 60 * 60 * 1000,
  maxFinishedPerSession: 32,
  maxKeptBytes: 1024 * 1024 * 1024,
};

export interface StartTask {
  sessionId: string;
  command: string;
  description: string | undefined;
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Runs once the task has ended (a sandbox's scratch directory). */
  cleanup?: () => void;
}

export class BackgroundTask {
  status: TaskStatus = 'running';
  exitCode: number | null = null;
  signal: NodeJS.Signals | null = null;
  endedAt: number | undefined = undefined;
  /** Bytes of output the task wrote, kept or not. */
  bytesWritten = 0;
  /** What stopped it, when something did. */
  stoppedBy: 'TaskStop' | 'lifetime' | 'shutdown' | undefined = undefined;
  readonly startedAt = Date.now();
  /** Resolves once the task has ended and its output file is complete. */
  readonly ended: Promise<void>;
  markEnded!: () => void;
  child: Spawned | undefined;

  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly command: string,
    readonly description: string | undefined,
    readonly outputFile: string,
  ) {
    this.ended = new Promise<void>((r) => (this.markEnded = r));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }
}

export class TaskLimitError extends Error {}

/** The environment variable that ties a task's processes to it. */
export const TASK_MARKER = 'TOOLEXEC_BACKGROUND_TASK';
const DIR_PREFIX = 'toolexec-tasks-';

/**
 * A process's start time (clock ticks since boot, /proc/<pid>/stat field 22),
 * which tells a process from a later one given the same pid; undefined when
 * there is no such process (or no /proc).
 */
function startTime(pid: number | 'self'): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let ownStart: string | undefined;
/** This process's start time, read once. */
function selfStart(): string {
  return (ownStart ??= startTime('self') ?? '0');
}

/** This service's directory name prefix: its pid and start time, so that a reused pid is not taken for it. */
function instancePrefix(): string {
  return `${DIR_PREFIX}${process.pid}-${selfStart()}-`;
}

/** Whether the service that made a directory named `<prefix><pid>-<start>-…` is gone. */
function ownerGone(name: string): boolean {
  const m = /^toolexec-tasks-(\d+)-(\d+)-/.exec(name);
  if (!m) return false;
  const pid = Number(m[1]);
  if (pid === process.pid && m[2] === selfStart()) return false;
  const now = startTime(pid);
  if (now !== undefined) return now !== m[2];
  try {
    process.kill(pid, 0);
    return false; // alive, and no /proc to tell more
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Stops what the tasks of services that died without closing left running,
 * and removes their directories under `tmp`. Returns how many processes were
 * killed. Only directories this user made as toolexec makes them (real
 * directories, owned by this user, closed to others) are taken: anything else
 * under that name is left alone. Best effort, and never throws: without
 * /proc only the directories go.
 */
export function reapOrphans(tmp = os.tmpdir(), log?: Logger): number {
  let entries: string[];
  try {
    entries = fs.readdirSync(tmp);
  } catch {
    return 0;
  }
  const uid = process.getuid?.();
  const dead: string[] = [];
  for (const e of entries) {
    if (!e.startsWith(DIR_PREFIX) || !ownerGone(e)) continue;
    const d = path.join(tmp, e);
    try {
      const st = fs.lstatSync(d);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) continue;
    } catch {
      continue;
    }
    dead.push(d);
  }
  if (dead.length === 0) return 0;
  let killed = 0;
  let procs: string[] = [];
  try {
    procs = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    /* no /proc: nothing to find */
  }
  const markers = dead.map((d) => Buffer.from(`${TASK_MARKER}=${d}/`));
  for (const p of procs) {
    let env: Buffer;
    try {
      env = fs.readFileSync(`/proc/${p}/environ`);
    } catch {
      continue;
    }
    if (!markers.some((m) => env.includes(m))) continue;
    try {
      process.kill(Number(p), 'SIGKILL');
      killed += 1;
    } catch {
      /* already gone */
    }
  }
  for (const d of dead) {
    try {
      fs.rmSync(d, { recursive: true, force: true });
    } catch (e) {
      log?.warn({ err: e, directory: d }, 'could not remove the directory of a service that did not close');
    }
  }
  if (killed > 0) log?.warn({ processes: killed, directories: dead.length }, 'stopped background tasks left running by a service that did not close');
  return killed;
}

export class BackgroundTasks {
  private readonly tasks = new Map<string, BackgroundTask>();
  private dir: string | undefined;
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly limits: BackgroundTaskLimits = DEFAULT_BACKGROUND_LIMITS,
    private readonly log?: Logger,
    private readonly killGraceMs = DEFAULT_KILL_GRACE_MS,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, limits.keepFinishedMs))).unref();
    // After start-up, not during it: a crash's leftovers are no reason to start slower.
    setImmediate(() => {
      if (!this.closed) reapOrphans(os.tmpdir(), this.log);
    }).unref();
  }

  /** Tasks running now, in the whole service. */
  get running(): number {
    let n = 0;
    for (const t of this.tasks.values()) if (t.status === 'running') n += 1;
    return n;
  }

  get(sessionId: string, id: string): BackgroundTask | undefined {
    const t = this.tasks.get(id);
    return t !== undefined && t.sessionId === sessionId ? t : undefined;
  }

  list(sessionId: string): BackgroundTask[] {
    return [...this.tasks.values()].filter((t) => t.sessionId === sessionId);
  }

  /** Starts a task; throws TaskLimitError when a limit is reached or the service is closing. */
  start(s: StartTask): BackgroundTask {
    if (this.closed) throw new TaskLimitError('The service is shutting down; no background task can be started.');
    this.sweep();
    const mine = this.list(s.sessionId).filter((t) => t.status === 'running').length;
    if (mine >= this.limits.maxRunningPerSession) {
      throw new TaskLimitError(
        `This session already has ${mine} background tasks running, the most it may have. Stop one with TaskStop, or wait for one to finish (TaskOutput).`,
      );
    }
    if (this.running >= this.limits.maxRunning) {
      throw new TaskLimitError(`The service already runs ${this.running} background tasks, the most it allows. Try again once some have finished.`);
    }
    let id: string;
    do id = `b${randomBytes(4).toString('hex')}`;
    while (this.tasks.has(id));
    const file = path.join(this.outputDir(), `${id}.output`);
    const fd = fs.openSync(file, 'wx', 0o600);
    const task = new BackgroundTask(id, s.sessionId, s.command, s.description, file);
    this.tasks.set(id, task);
    this.run(task, s, fd);
    return task;
  }

  /** Waits until the task ends, `ms` pass or `signal` aborts; true when it has ended. */
  async wait(task: BackgroundTask, ms: number, signal: AbortSignal): Promise<boolean> {
    if (task.status !== 'running') {
      await task.ended;
      return true;
    }
    if (ms <= 0 || signal.aborted) return false;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
      onAbort = () => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([task.ended.then(() => true as const), gaveUp]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Stops a running task (SIGTERM to its group, SIGKILL after the grace) and
   * waits for it to end. False when it had already exited by itself (it may
   * still be draining its output): nothing was stopped.
   */
  async stop(task: BackgroundTask, by: NonNullable<BackgroundTask['stoppedBy']> = 'TaskStop'): Promise<boolean> {
    let stopped = false;
    if (task.status === 'running' && task.exitCode === null && task.signal === null) {
      task.stoppedBy ??= by;
      stopped = task.stoppedBy === by;
      task.child?.withPid((pid) => terminateGroup(pid, this.killGraceMs));
    }
    await task.ended;
    return stopped;
  }

  /**
   * Reads a task's kept output in pieces (it may be large), from `fromByte`.
   * The task's output is appended on this event loop, so a read sees one
   * consistent length.
   */
  readOutput(task: BackgroundTask, onText: (s: string) => void, fromByte = 0): void {
    let fd: number;
    try {
      fd = fs.openSync(task.outputFile, 'r');
    } catch {
      return;
    }
    try {
      const buf = Buffer.allocUnsafe(256 * 1024);
      const decoder = new TextDecoder('utf-8');
      for (let at = fromByte; ; ) {
        const n = fs.readSync(fd, buf, 0, buf.length, at);
        if (n === 0) break;
        at += n;
        const s = decoder.decode(buf.subarray(0, n), { stream: true });
        if (s) onText(s);
      }
      const tail = decoder.decode();
      if (tail) onText(tail);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Bytes of output kept for the task so far. */
  keptBytes(task: BackgroundTask): number {
    return Math.min(task.bytesWritten, this.limits.maxOutputBytes);
  }

  /** Bytes the task wrote that were dropped past the cap. */
  dropped(task: BackgroundTask): number {
    return Math.max(0, task.bytesWritten - this.limits.maxOutputBytes);
  }

  get maxOutputBytes(): number {
    return this.limits.maxOutputBytes;
  }

  /** Stops every running task and removes the output directory (shutdown). Never throws. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.tasks.values()].map((t) => this.stop(t, 'shutdown')));
    this.tasks.clear();
    if (this.dir) {
      try {
        fs.rmSync(this.dir, { recursive: true, force: true });
      } catch (e) {
        this.log?.warn({ err: e, directory: this.dir }, 'could not remove the background tasks’ directory');
      }
    }
    this.dir = undefined;
  }

  private outputDir(): string {
    if (this.dir === undefined || !fs.existsSync(this.dir)) this.dir = fs.mkdtempSync(path.join(os.tmpdir(), instancePrefix()));
    return this.dir;
  }

  private run(task: BackgroundTask, s: StartTask, fd: number): void {
    let kept = 0;
    let fdOpen = true;
    const append = (b: Buffer): void => {
      task.bytesWritten += b.length;
      if (!fdOpen || kept >= this.limits.maxOutputBytes) return;
      const part = b.length > this.limits.maxOutputBytes - kept ? b.subarray(0, this.limits.maxOutputBytes - kept) : b;
      try {
        fs.writeSync(fd, part);
        kept += part.length;
      } catch (e) {
        // A full disk: the task runs on, its output is no longer kept.
        fdOpen = false;
        try {
          fs.closeSync(fd);
        } catch {
          /* already unusable */
        }
        this.log?.warn({ err: e, task_id: task.id }, 'could not write a background task’s output');
      }
    };
    let ended = false;
    let lifetime: NodeJS.Timeout | undefined;
    let cancelDrain: (() => void) | undefined;
    const end = (status: TaskStatus): void => {
      if (ended) return;
      ended = true;
      clearTimeout(lifetime);
      cancelDrain?.();
      task.child?.stopReading();
      // Whatever the command left running in its group goes with it.
      task.child?.withPid((pid) => terminateGroup(pid, this.killGraceMs));
      if (fdOpen) {
        try {
          fs.closeSync(fd);
        } catch {
          /* nothing more to keep */
        }
      }
      fdOpen = false;
      task.status = task.stoppedBy !== undefined ? 'killed' : status;
      task.endedAt = Date.now();
      try {
        s.cleanup?.();
      } catch {
        /* best effort */
      }
      task.markEnded();
      this.sweep();
    };

    let child: Spawned;
    try {
      const env = { ...s.env, [TASK_MARKER]: path.join(path.dirname(task.outputFile), task.id) };
      child = spawnCommand({ file: s.file, args: s.args, cwd: s.cwd, env, stdin: null });
    } catch (e) {
      append(Buffer.from(`Could not run bash: ${(e as Error).message}\n`));
      end('failed');
      return;
    }
    task.child = child;
    child.onData(1, append);
    child.onData(2, append);
    child.onError((message) => {
      append(Buffer.from(`Could not run bash: ${message}\n`));
      end('failed');
    });
    let open = 2;
    const closed = (): void => {
      open -= 1;
      if (open === 0 && (task.exitCode !== null || task.signal !== null)) end(task.exitCode === 0 ? 'completed' : 'failed');
    };
    child.onClose(1, closed);
    child.onClose(2, closed);
    child.onExit((code, sig) => {
      task.exitCode = code;
      task.signal = sig;
      const status: TaskStatus = code === 0 ? 'completed' : 'failed';
      if (open === 0) end(status);
      // Children it left behind may hold the pipes open: a moment to drain, then the task is over.
      else cancelDrain = afterDrain(100, () => end(status));
    });
    lifetime = setTimeout(() => {
      this.log?.info({ task_id: task.id, session_id: task.sessionId }, 'background task stopped at its lifetime');
      void this.stop(task, 'lifetime');
    }, this.limits.maxLifetimeMs);
    lifetime.unref();
  }

  /** forgetOld, from a timer or an event handler: an exception there would end the process. */
  private sweep(): void {
    try {
      this.forgetOld();
    } catch (e) {
      this.log?.warn({ err: e }, 'could not forget old background tasks');
    }
  }

  /**
   * Forgets finished tasks past keepFinishedMs, the oldest past
   * maxFinishedPerSession, and the oldest while what all tasks keep is over
   * maxKeptBytes.
   */
  private forgetOld(): void {
    const now = Date.now();
    const finishedBySession = new Map<string, BackgroundTask[]>();
    for (const t of this.tasks.values()) {
      if (t.status === 'running' || t.endedAt === undefined) continue;
      if (now - t.endedAt >= this.limits.keepFinishedMs) this.forget(t);
      else {
        const list = finishedBySession.get(t.sessionId) ?? [];
        list.push(t);
        finishedBySession.set(t.sessionId, list);
      }
    }
    const finished: BackgroundTask[] = [];
    for (const list of finishedBySession.values()) {
      list.sort((a, b) => a.endedAt! - b.endedAt!);
      const over = Math.max(0, list.length - this.limits.maxFinishedPerSession);
      for (const t of list.slice(0, over)) this.forget(t);
      finished.push(...list.slice(over));
    }
    let kept = 0;
    for (const t of this.tasks.values()) kept += Math.min(t.bytesWritten, this.limits.maxOutputBytes);
    finished.sort((a, b) => a.endedAt! - b.endedAt!);
    for (const t of finished) {
      if (kept <= this.limits.maxKeptBytes) break;
      kept -= Math.min(t.bytesWritten, this.limits.maxOutputBytes);
      this.forget(t);
    }
  }

  private forget(t: BackgroundTask): void {
    this.tasks.delete(t.id);
    fs.rmSync(t.outputFile, { force: true });
  }
}
