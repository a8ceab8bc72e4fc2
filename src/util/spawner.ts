/**
 * How commands (Bash, hooks, rg, background tasks) are started: by the spawn
 * helper (util/spawn-helper.ts), a small process whose forks are cheap, when
 * `execution.spawner` is "helper" (the default); directly otherwise, each a
 * fork of this process that blocks its event loop for as long as copying its
 * page tables takes. Both give their users one small interface: output
 * pieces, each stream's close, the exit, a spawn error, and the pid once
 * known. The output is read by this process either way: the helper hands the
 * command's pipes over.
 *
 * The helper is shared by the services of this process (counted with
 * acquire/release) and started by the first command that needs it (a
 * service that never runs one, `toolexec tools` or `check`, starts none), and
 * again after it died: the commands it was running then fail with a spawn
 * error, and their groups are killed.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the command's stdin, which is then closed; null: no stdin (/dev/null). */
  stdin: string | null;
}

/** A started command. */
export interface Spawned {
  /** Its pid (its process group's id), once known. */
  readonly pid: number | undefined;
  onData(fd: 1 | 2, fn: (b: Buffer) => void): void;
  onClose(fd: 1 | 2, fn: () => void): void;
  onExit(fn: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  onError(fn: (message: string) => void): void;
  /** Stops reading its output; each stream still closes once. */
  stopReading(): void;
  /** Calls fn with the pid now, or once it is known (never, if the command could not start). */
  withPid(fn: (pid: number) => void): void;
}

/** The helper's script; from the TypeScript sources (tests), the built one. */
function helperPath(): string {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) return path.join(path.dirname(here), 'spawn-helper.js');
  return path.join(path.dirname(here), '..', '..', 'dist', 'util', 'spawn-helper.js');
}

let users = 0;
let helper: Helper | undefined;

/** A service that wants its commands started by the helper says so, and says when it is done. */
export function acquireSpawnHelper(): () => void {
  users += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    users -= 1;
    if (users === 0) {
      helper?.close();
      helper = undefined;
    }
  };
}

/** The helper's pid while it runs (tests, diagnostics). */
export function spawnHelperPid(): number | undefined {
  return helper && !helper.dead ? helper.pid : undefined;
}

export function spawnCommand(req: SpawnRequest): Spawned {
  if (users > 0) {
    if (!helper || helper.dead) helper = new Helper();
    return helper.spawn(req);
  }
  return new DirectChild(req);
}

class DirectChild implements Spawned {
  private readonly child: ChildProcess;

  constructor(req: SpawnRequest) {
    this.child = spawn(req.file, req.args as string[], {
      cwd: req.cwd,
      env: req.env,
      detached: true,
      stdio: [req.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    if (this.child.stdin) {
      this.child.stdin.on('error', () => {
        /* the child may exit without reading its input (EPIPE) */
      });
      this.child.stdin.end(req.stdin ?? '');
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
  onData(fd: 1 | 2, fn: (b: Buffer) => void): void {
    (fd === 1 ? this.child.stdout : this.child.stderr)?.on('data', fn);
  }
  onClose(fd: 1 | 2, fn: () => void): void {
    (fd === 1 ? this.child.stdout : this.child.stderr)?.on('close', fn);
  }
  onExit(fn: (code: number | null, signal: NodeJS.Signals | null) => void): void {
    this.child.on('exit', fn);
  }
  onError(fn: (message: string) => void): void {
    this.child.on('error', (e) => fn(e.message));
  }
  stopReading(): void {
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }
  withPid(fn: (pid: number) => void): void {
    if (this.child.pid !== undefined) fn(this.child.pid);
  }
}

/** A command the helper started; its pipes arrive as sockets. */
class RemoteChild extends EventEmitter implements Spawned {
  pid: number | undefined = undefined;
  private waitingForPid: Array<(pid: number) => void> = [];
  private readonly streams: { 1?: Socket | null; 2?: Socket | null } = {};
  private reading = true;
  exited = false;

  constructor(readonly id: number) {
    super();
  }

  onData(fd: 1 | 2, fn: (b: Buffer) => void): void {
    this.on(`data${fd}`, fn);
  }
  onClose(fd: 1 | 2, fn: () => void): void {
    this.once(`close${fd}`, fn);
  }
  onExit(fn: (code: number | null, signal: NodeJS.Signals | null) => void): void {
    this.on('exit', fn);
  }
  onError(fn: (message: string) => void): void {
    this.on('error', fn);
  }
  withPid(fn: (pid: number) => void): void {
    if (this.pid !== undefined) fn(this.pid);
    else this.waitingForPid.push(fn);
  }

  /** Whether both pipes have arrived (the command may then pass its gate). */
  get ready(): boolean {
    return this.streams[1] !== undefined && this.streams[2] !== undefined;
  }

  /** Nothing more is expected from the helper about it. */
  get done(): boolean {
    return this.exited && this.ready;
  }

  received(pid: number, fd: 1 | 2, socket: Socket | undefined): void {
    if (this.pid === undefined) {
      this.pid = pid;
      for (const fn of this.waitingForPid.splice(0)) fn(pid);
    }
    this.streams[fd] = socket ?? null;
    // After stopReading, its close was told already.
    if (!this.reading) socket?.destroy();
    else if (!socket) this.emit(`close${fd}`);
    else {
      socket.on('data', (b: Buffer) => this.emit(`data${fd}`, b));
      socket.on('error', () => {
        /* a read error ends the stream: 'close' follows */
      });
      socket.on('close', () => this.emit(`close${fd}`));
    }
  }

  stopReading(): void {
    if (!this.reading) return;
    this.reading = false;
    for (const fd of [1, 2] as const) {
      const s = this.streams[fd];
      if (s) s.destroy();
      // A pipe not handed over yet closes now (and is destroyed on arrival).
      else if (s === undefined) this.emit(`close${fd}`);
    }
  }

  /** The command could not start, or the helper died: the error, and its group killed. */
  failed(message: string, kill: boolean): void {
    if (kill && this.pid !== undefined) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    this.exited = true;
    this.emit('error', message);
  }
}

type OutMessage =
  | { t: 'out'; id: number; pid: number; fd: 1 | 2 }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'error'; id: number; message: string };

class Helper {
  private readonly proc: ChildProcess;
  private readonly running = new Map<number, RemoteChild>();
  private nextId = 1;
  dead = false;

  constructor() {
    this.proc = fork(helperPath(), [], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // A bare process: no inspector, no flags meant for the service, and none
      // of its environment (its secrets would show in /proc/<pid>/environ, and
      // `ps e` on the commands' parent). Each command gets its own environment.
      execArgv: [],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    this.proc.unref();
    this.channel(false);
    this.proc.on('message', (m: OutMessage, handle: Socket | undefined) => this.receive(m, handle));
    this.proc.on('error', () => this.died());
    this.proc.on('exit', () => this.died());
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** While commands run, the channel keeps this process alive (a one-shot CLI waits for them). */
  private channel(ref: boolean): void {
    const ch = this.proc.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (ref) ch?.ref?.();
    else ch?.unref?.();
  }

  spawn(req: SpawnRequest): Spawned {
    const c = new RemoteChild(this.nextId++);
    if (this.running.size === 0) this.channel(true);
    this.running.set(c.id, c);
    this.proc.send({ t: 'spawn', id: c.id, file: req.file, args: [...req.args], cwd: req.cwd, env: req.env, stdin: req.stdin }, (e) => {
      if (e) this.died();
    });
    return c;
  }

  close(): void {
    this.dead = true;
    if (this.proc.connected) this.proc.disconnect();
  }

  private forget(id: number): void {
    this.running.delete(id);
    if (this.running.size === 0) this.channel(false);
  }

  private receive(m: OutMessage, handle: Socket | undefined): void {
    const c = this.running.get(m.id);
    if (!c) {
      handle?.destroy();
      return;
    }
    switch (m.t) {
      case 'out':
        c.received(m.pid, m.fd, handle);
        if (c.ready && !c.exited) this.proc.send({ t: 'go', id: c.id }, () => undefined);
        break;
      case 'exit':
        c.exited = true;
        c.emit('exit', m.code, m.signal);
        break;
      case 'error':
        this.forget(m.id);
        c.failed(m.message, false);
        return;
    }
    if (c.done) this.forget(m.id);
  }

  /** The helper is gone: what it was running fails, and those groups go too. */
  private died(): void {
    if (this.dead && this.running.size === 0) return;
    this.dead = true;
    const running = [...this.running.values()];
    this.running.clear();
    for (const c of running) c.failed('the spawn helper exited', true);
  }
}
