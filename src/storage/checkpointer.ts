/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs
 * inside whichever commit crosses the threshold and copies pages to the
 * database file on the main thread; measured at about 40% of the cost of a
 * small insert under sustained load. Here the main connection turns it off
 * and a worker thread with its own connection runs PASSIVE checkpoints, which
 * never block the writer.
 *
 * A PASSIVE checkpoint alone never lets the WAL start over under sustained
 * load: SQLite reuses the WAL from its start only when a write begins with
 * every frame copied back, and commits keep landing while the checkpoint
 * runs. Measured before this was handled: 1.2 GB of WAL after 220,000 calls,
 * each commit appending to a growing file (about 10 µs more of the kernel's
 * time per commit than writing over the start of the file). So once the WAL
 * holds `restartFrames` frames, the worker asks the writer to hold its
 * commits (GroupCommitWriter.hold: callers wait, the event loop does not),
 * copies the few frames left, and releases it: the next commit then starts
 * the WAL over, and `journal_size_limit` truncates the file. A hold is
 * bounded (MAX_HOLD_MS); one that runs out (a disk slow to sync) makes the
 * writer decline holds for a while, so commits are never stalled for long.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db, GroupCommitWriter } from './db.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 1000');
let stopped = false;
let holdId = 0;
function checkpoint() {
  try { return db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch (e) { parentPort.postMessage({ error: String(e && e.message || e) }); return undefined; }
}
function tick() {
  if (stopped) return;
  const r = checkpoint();
  if (r && r.log >= workerData.restartFrames) {
    // The rest is copied while the writer holds its commits ('held'), then it is released.
    parentPort.postMessage({ hold: ++holdId });
    return;
  }
  setTimeout(tick, workerData.intervalMs);
}
parentPort.postMessage('ready');
parentPort.on('message', (m) => {
  if (m && typeof m === 'object' && 'held' in m) {
    // heldDelayMs stands for a disk slow to sync (tests).
    setTimeout(() => {
      if (!stopped) checkpoint();
      parentPort.postMessage({ release: m.held });
      if (!stopped) setTimeout(tick, workerData.intervalMs);
    }, workerData.heldDelayMs);
  }
  if (m && typeof m === 'object' && 'declined' in m && !stopped) setTimeout(tick, workerData.intervalMs);
  if (m === 'stop') { stopped = true; try { db.close(); } catch {} parentPort.postMessage('stopped'); }
});
tick();
`;

/**
 * Frames in the WAL (4 KiB pages) past which the writer is held for a
 * checkpoint that lets the WAL start over: 16 MiB. A hold lasts the copy of
 * the frames written since the last checkpoint and two fsyncs (measured 5-21
 * ms, about every 0.6 s at 14,000 calls a second).
 */
export const RESTART_FRAMES = 4096;
/** The longest the writer is held: past it, commits go on and the WAL starts over another time. */
const MAX_HOLD_MS = 100;
/** After a hold that ran out, holds are declined for this long, doubling up to a minute (a disk slow to sync). */
const BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

export interface CheckpointerOptions {
  /** How often the worker checkpoints (ms). */
  intervalMs?: number;
  /** WAL frames past which the writer is held for a restart. */
  restartFrames?: number;
  /** The longest a hold lasts. */
  maxHoldMs?: number;
  /** A delay before the held checkpoint, standing for a disk slow to sync (tests). */
  heldDelayMs?: number;
  /**
   * Start the worker this long after construction rather than at once (0). Its thread and
   * connection cost ~3-5 ms of the main thread and 40-80 ms of another's CPU, which a
   * service starting on two busy cores spends better on getting ready; the WAL just grows
   * from its first commits a little longer before the first checkpoint.
   */
  startAfterMs?: number;
}

export class Checkpointer {
  /** Undefined until started (startAfterMs), or when it could not be. */
  private worker: Worker | undefined;
  private startTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  lastError: string | undefined;

  private holdTimer: NodeJS.Timeout | undefined;
  /** The hold in progress (the worker's number for it). */
  private holding: number | undefined;
  private backoffMs = BACKOFF_MS;
  private declineUntil = 0;
  /** Holds granted to the worker (each let the WAL start over). */
  holds = 0;
  /** Holds that ran out before the worker was done (the WAL did not start over then). */
  holdsTimedOut = 0;
  /** Holds asked for while declining them after one ran out. */
  holdsDeclined = 0;
  /** Settles once the worker has its connection (or failed to open it, or was stopped before it started). */
  readonly ready: Promise<void>;
  private readonly settleReady: () => void;

  private readonly maxHoldMs: number;

  constructor(
    private readonly db: Db,
    dbPath: string,
    private readonly writer?: GroupCommitWriter,
    opts: CheckpointerOptions = {},
  ) {
    db.pragma('wal_autocheckpoint = 0');
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.maxHoldMs = opts.maxHoldMs ?? MAX_HOLD_MS;
    const workerData = {
      path: dbPath,
      driver,
      intervalMs: opts.intervalMs ?? 500,
      restartFrames: opts.restartFrames ?? RESTART_FRAMES,
      heldDelayMs: opts.heldDelayMs ?? 0,
    };
    let ready!: () => void;
    this.ready = new Promise<void>((r) => (ready = r));
    this.settleReady = ready;
    const startAfterMs = opts.startAfterMs ?? 0;
    if (startAfterMs <= 0) {
      this.start(workerData);
    } else {
      this.startTimer = setTimeout(() => {
        this.startTimer = undefined;
        try {
          this.start(workerData);
        } catch (e) {
          // No thread to be had (resource limits): SQLite's own checkpoints again, on this thread, rather than a WAL that grows for ever.
          this.lastError = (e as Error).message;
          this.db.pragma('wal_autocheckpoint = 1000');
          ready();
        }
      }, startAfterMs);
      this.startTimer.unref();
    }
  }

  /** Whether the worker has been started (startAfterMs). */
  get started(): boolean {
    return this.worker !== undefined;
  }

  private start(workerData: Record<string, unknown>): void {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
    this.worker = worker;
    worker.unref();
    const ready = this.settleReady;
    worker.once('error', () => ready());
    worker.on('message', (m: unknown) => {
      if (m === 'ready') return ready();
      if (m === null || typeof m !== 'object') return;
      const msg = m as { error?: unknown; hold?: unknown; release?: unknown };
      if ('error' in msg) this.lastError = String(msg.error);
      if ('hold' in msg) this.onHold(Number(msg.hold));
      if ('release' in msg && msg.release === this.holding) {
        this.backoffMs = BACKOFF_MS;
        this.release();
      }
    });
    worker.on('error', (e) => {
      this.lastError = e.message;
    });
  }

  private onHold(id: number): void {
    // Commits run on this thread: none is half done while this message is handled.
    if (!this.writer || this.stopped || Date.now() < this.declineUntil) {
      if (this.writer && !this.stopped) this.holdsDeclined += 1;
      this.worker?.postMessage({ declined: id });
      return;
    }
    this.writer.hold();
    this.holding = id;
    this.holds += 1;
    this.holdTimer = setTimeout(() => {
      // The worker is slow (a disk slow to sync): let the commits go on, and hold less often for a while.
      this.holdsTimedOut += 1;
      this.declineUntil = Date.now() + this.backoffMs;
      this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
      this.release();
    }, this.maxHoldMs);
    this.holdTimer.unref();
    this.worker?.postMessage({ held: id });
  }

  private release(): void {
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.holding = undefined;
    this.writer?.release();
  }

  /** Stops the worker and closes its connection (before the main connection closes). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.release();
    if (this.startTimer !== undefined) clearTimeout(this.startTimer);
    this.startTimer = undefined;
    const worker = this.worker;
    if (!worker) {
      // Stopped before it started: nothing runs, and nothing will.
      this.settleReady();
      return;
    }
    await new Promise<void>((resolve) => {
      // Other messages ('ready', 'hold') may come first: wait for 'stopped' itself.
      const onMessage = (m: unknown): void => {
        if (m !== 'stopped') return;
        clearTimeout(t);
        worker.off('message', onMessage);
        resolve();
      };
      const t = setTimeout(() => {
        worker.off('message', onMessage);
        resolve();
      }, 2000);
      worker.on('message', onMessage);
      worker.postMessage('stop');
    });
    await worker.terminate();
  }
}
