/**
 * The client side of a stdio MCP server: a child process that speaks
 * newline-delimited JSON-RPC on stdin/stdout. Unlike the SDK's
 * StdioClientTransport, the child runs in its own process group, so that
 * closing the connection (or the server dying) takes its whole tree with it
 * (an `npx` launcher and the server it started); its stderr is kept as a
 * bounded tail for the server's last error; and a message larger than the
 * limit closes the connection instead of growing a buffer without end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterDrain, killGroup } from '../util/child.js';

export interface StdioParams {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Largest single message accepted from the server, in bytes. */
  maxMessageBytes?: number;
  /** Bytes of stderr kept for error reports. */
  stderrTailBytes?: number;
  /** Between SIGTERM and SIGKILL on close. */
  killGraceMs?: number;
}

export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const DEFAULT_STDERR_TAIL = 4096;
/** How long stdout may keep delivering after the process exited. */
const DRAIN_AFTER_EXIT_MS = 100;

/** Splits a byte stream into lines without re-copying what it holds (a large message arrives in many chunks). */
class LineSplitter {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}

  /** The complete lines in `chunk` (joined with what came before); throws past the size limit. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const whole = this.chunks.length === 0 ? piece : Buffer.concat([...this.chunks, piece]);
      this.chunks = [];
      this.size = 0;
      if (whole.length > this.max) throw new Error(`the server sent a message larger than ${this.max} bytes`);
      lines.push(whole.toString('utf8').replace(/\r$/, ''));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.size += rest.length;
      if (this.size > this.max) {
        this.chunks = [];
        this.size = 0;
        throw new Error(`the server sent a message larger than ${this.max} bytes`);
      }
      this.chunks.push(rest);
    }
    return lines;
  }
}

export class ProcessStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  private child: ChildProcess | undefined;
  private stderrBuf = '';
  private closed = false;
  private exited: Promise<void> | undefined;
  /** How the process ended, for the server's last error. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Why this side closed the connection (a message over the limit), for the server's last error. */
  failure: string | undefined;

  constructor(private readonly params: StdioParams) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last bytes the server wrote to stderr. */
  stderrTail(): string {
    return this.stderrBuf;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('the transport is already started'));
    const p = this.params;
    const splitter = new LineSplitter(p.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    const tailMax = p.stderrTailBytes ?? DEFAULT_STDERR_TAIL;
    return new Promise<void>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(p.command, p.args as string[], {
          cwd: p.cwd,
          env: p.env,
          detached: true,
          stdio: ['pipe', 'pipe', 'pipe'],
          windowsHide: true,
        });
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      this.child = child;
      let spawned = false;
      let stdoutEnded = false;
      let exitedAt = false;
      let cancelDrain: (() => void) | undefined;
      let resolveExited!: () => void;
      this.exited = new Promise<void>((r) => (resolveExited = r));

      const finish = (): void => {
        cancelDrain?.();
        cancelDrain = undefined;
        resolveExited();
        // The group may hold children the server started; nothing is left to talk to them.
        killGroup(child.pid, 'SIGKILL');
        if (!this.closed) {
          this.closed = true;
          this.onclose?.();
        }
      };

      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('error', (e) => {
        if (!spawned) {
          this.closed = true;
          resolveExited();
          reject(e);
        } else this.onerror?.(e);
      });
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        exitedAt = true;
        if (stdoutEnded) finish();
        else cancelDrain = afterDrain(DRAIN_AFTER_EXIT_MS, finish);
      });
      child.stdout!.on('data', (chunk: Buffer) => {
        let lines: string[];
        try {
          lines = splitter.push(chunk);
        } catch (e) {
          this.failure = (e as Error).message;
          this.onerror?.(e as Error);
          void this.close();
          return;
        }
        for (const line of lines) {
          if (line.length === 0) continue;
          let msg: JSONRPCMessage;
          try {
            msg = deserializeMessage(line);
          } catch {
            // A server that logs to stdout: not fatal, but reported, with the line (the parser's issues say less).
            const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
            this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC: ${JSON.stringify(shown)}`));
            continue;
          }
          this.onmessage?.(msg);
        }
      });
      child.stdout!.once('end', () => {
        stdoutEnded = true;
        if (exitedAt) finish();
      });
      child.stdout!.on('error', (e) => this.onerror?.(e));
      child.stdin!.on('error', (e) => this.onerror?.(e));
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (s: string) => {
        this.stderrBuf += s;
        if (this.stderrBuf.length > tailMax * 2) this.stderrBuf = this.stderrBuf.slice(-tailMax);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || !stdin.writable) return Promise.reject(new Error('Not connected'));
    return new Promise<void>((resolve, reject) => {
      const ok = stdin.write(serializeMessage(message), (e) => {
        if (e) reject(e);
      });
      if (ok) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: stdin closed and SIGTERM to its group, SIGKILL after the grace. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (this.exit === undefined) {
      try {
        child.stdin?.end();
      } catch {
        /* already closed */
      }
      killGroup(child.pid, 'SIGTERM');
      const grace = this.params.killGraceMs ?? 2000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.exited,
        new Promise<void>((r) => {
          timer = setTimeout(() => {
            killGroup(child.pid, 'SIGKILL');
            r();
          }, grace);
        }),
      ]);
      if (timer) clearTimeout(timer);
      await this.exited;
    } else {
      await this.exited;
    }
  }
}
