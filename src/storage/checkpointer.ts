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
 * the WAL over, and `journal_size_limit` truncates the file.
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
function checkpoint() {
  try { return db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch (e) { parentPort.postMessage({ error: String(e && e.message || e) }); return undefined; }
}
function tick() {
  if (stopped) return;
  const r = checkpoint();
  if (r && r.log >= workerData.restartFrames) {
    // The rest is copied while the writer holds its commits ('held'), then it is released.
    parentPort.postMessage('hold');
    return;
  }
  setTimeout(tick, workerData.intervalMs);
}
parentPort.postMessage('ready');
parentPort.on('message', (m) => {
  if (m === 'held') {
    if (!stopped) checkpoint();
    parentPort.postMessage('release');
    if (!stopped) setTimeout(tick, workerData.intervalMs);
  }
  if (m === 'now') checkpoint();
  if (m === 'stop') { stopped = true; try { db.close(); } catch {} parentPort.postMessage('stopped'); }
});
tick();
`;

/** Frames in the WAL (4 KiB pages) past which the writer is held for a checkpoint that lets the WAL start over. */
export const RESTART_FRAMES = 1000;
/** The longest the writer is held, should the worker not answer. */
const MAX_HOLD_MS = 2000;

export class Checkpointer {
  private readonly worker: Worker;
  private stopped = false;
  lastError: string | undefined;

  private holdTimer: NodeJS.Timeout | undefined;
  /** Holds granted to the worker (each let the WAL start over). */
  holds = 0;
  /** Settles once the worker has its connection (or failed to open it). */
  readonly ready: Promise<void>;

  constructor(
    db: Db,
    dbPath: string,
    private readonly writer?: GroupCommitWriter,
    intervalMs = 500,
    restartFrames = RESTART_FRAMES,
  ) {
    db.pragma('wal_autocheckpoint = 0');
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path: dbPath, driver, intervalMs, restartFrames } });
    this.worker.unref();
    let ready!: () => void;
    this.ready = new Promise<void>((r) => (ready = r));
    this.worker.once('error', () => ready());
    this.worker.on('message', (m: unknown) => {
      if (m === 'ready') ready();
      if (m && typeof m === 'object' && 'error' in m) this.lastError = String((m as { error: unknown }).error);
      if (m === 'hold') {
        // Commits run on this thread: none is half done while this message is handled.
        if (writer && !this.stopped) {
          writer.hold();
          this.holds += 1;
          this.holdTimer = setTimeout(() => this.release(), MAX_HOLD_MS);
          this.holdTimer.unref();
        }
        this.worker.postMessage('held');
      }
      if (m === 'release') this.release();
    });
    this.worker.on('error', (e) => {
      this.lastError = e.message;
    });
  }

  private release(): void {
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.writer?.release();
  }

  /** Stops the worker and closes its connection (before the main connection closes). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.release();
    await new Promise<void>((resolve) => {
      // Other messages ('ready', 'hold') may come first: wait for 'stopped' itself.
      const onMessage = (m: unknown): void => {
        if (m !== 'stopped') return;
        clearTimeout(t);
        this.worker.off('message', onMessage);
        resolve();
      };
      const t = setTimeout(() => {
        this.worker.off('message', onMessage);
        resolve();
      }, 2000);
      this.worker.on('message', onMessage);
      this.worker.postMessage('stop');
    });
    await this.worker.terminate();
  }
}
