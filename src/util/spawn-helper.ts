/**
 * The spawn helper: a small process that starts commands for the service
 * (util/spawner.ts). On Linux, Node 20 forks to spawn, and a fork copies the
 * parent's page tables while the parent's event loop waits: milliseconds per
 * command in a service holding a few hundred MB, during which every other
 * request waits. This process stays small, so its forks are cheap.
 *
 * It hands each command's stdout and stderr pipes to the service over its IPC
 * channel, so the output never passes through here. The command waits at a
 * gate until the service has both pipes: `/bin/sh` reads a line from fd 3,
 * then execs the command (same pid, same process group). Without the gate a
 * command that exits at once could have its output read here, by Node's
 * flushing of an exited child's pipes, before the second pipe was handed over.
 *
 * Messages in: {t:'spawn', id, file, args, cwd, env, stdin (null: none)},
 * {t:'go', id}. Messages out: {t:'out', id, pid, fd} with the pipe as the
 * handle (no handle if the pipe had already closed), {t:'exit', id, code,
 * signal}, {t:'error', id, message}. When the service goes away (the channel
 * closes), every command still running is killed with its group, and the
 * helper exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/** Waits for the go line on fd 3, closes it, and becomes the command. */
const GATE = 'read -r _ <&3 || exit 125; exec 3<&-; exec "$0" "$@"';

interface SpawnMessage {
  t: 'spawn';
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: string | null;
}
type InMessage = SpawnMessage | { t: 'go'; id: number };

const running = new Map<number, ChildProcess>();

function send(m: object, handle?: unknown): void {
  if (!process.connected) return;
  try {
    process.send!(m, handle as never, undefined, () => {
      /* a failed send means the service is gone: 'disconnect' follows */
    });
  } catch {
    /* the channel closed under us */
  }
}

function start(m: SpawnMessage): void {
  let c: ChildProcess;
  try {
    c = spawn('/bin/sh', ['-c', GATE, m.file, ...m.args], {
      cwd: m.cwd,
      env: m.env,
      detached: true,
      stdio: [m.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (e) {
    send({ t: 'error', id: m.id, message: (e as Error).message });
    return;
  }
  c.on('error', (e) => {
    running.delete(m.id);
    send({ t: 'error', id: m.id, message: e.message });
  });
  if (c.pid === undefined) return; // 'error' follows
  running.set(m.id, c);
  c.on('exit', (code, signal) => {
    running.delete(m.id);
    send({ t: 'exit', id: m.id, code, signal });
  });
  const gate = c.stdio[3] as Writable | null;
  gate?.on('error', () => {
    /* the command was killed at the gate */
  });
  if (c.stdin) {
    c.stdin.on('error', () => {
      /* the command may exit without reading its input (EPIPE) */
    });
    c.stdin.end(m.stdin ?? '');
  }
  send({ t: 'out', id: m.id, pid: c.pid, fd: 1 }, c.stdout);
  send({ t: 'out', id: m.id, pid: c.pid, fd: 2 }, c.stderr);
}

process.on('message', (m: InMessage) => {
  if (m.t === 'spawn') start(m);
  else if (m.t === 'go') {
    const gate = running.get(m.id)?.stdio[3] as Writable | null | undefined;
    gate?.end('\n');
  }
});

// The service is gone: nothing it started may outlive it.
function serviceGone(): void {
  for (const c of running.values()) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  process.exit(0);
}
process.on('disconnect', serviceGone);
// And should the channel's end not be seen (its other end held open by some
// other process), a new parent (the service died: init or a subreaper took
// this process) says the same.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) serviceGone();
}, 1000).unref();
