/**
 * Calls in flight: their current state, their AbortController, and the
 * promise of their outcome, indexed by execution id and by (session, tool_use
 * id) for idempotency. It is the pipeline's observer: state changes and
 * progress become events for websocket subscribers. With no subscriber, an
 * event costs one Set-size check.
 */
import type { CallAbort } from '../pipeline/cancel.js';
import type { Call, CallObserver, FinishedCall } from '../pipeline/types.js';
import { TERMINAL_STATUSES } from '../pipeline/types.js';
import type { ProgressEvent } from '../tool/types.js';

export type ExecutionEvent =
  | { type: 'execution.started'; call: Call }
  | { type: 'execution.state'; call: Call }
  | { type: 'execution.progress'; call: Call; progress: ProgressEvent }
  | { type: 'execution.finished'; call: FinishedCall };

export type ExecutionListener = (e: ExecutionEvent) => void;

export interface LiveExecution {
  call: Call;
  /** Cancels the call (its AbortSignal is made only if the call reads it). */
  readonly controller: CallAbort;
  done: Promise<FinishedCall> | undefined;
  /** Its key in the (session, tool_use id) index, made once. */
  readonly key: string;
}

/**
 * The session's length leads: ids are any strings, and with a bare separator
 * session "a\0b" with id "c" and session "a" with id "b\0c" had one key, so
 * the second call was answered with the first one's outcome, never run.
 */
export function toolUseKey(sessionId: string, toolUseId: string): string {
  return `${sessionId.length}:${sessionId}\u0000${toolUseId}`;
}

export class ExecutionRegistry implements CallObserver {
  private readonly live = new Map<string, LiveExecution>();
  private readonly byToolUse = new Map<string, string>();
  private readonly listeners = new Set<ExecutionListener>();
  /**
   * Listeners of finished calls only (statistics). Kept apart so that a call's
   * other state changes make no event at all when nobody else listens (the
   * websocket hub listens only while a connection subscribes).
   */
  private readonly finishListeners = new Set<(call: FinishedCall) => void>();

  add(call: Call, controller: CallAbort): LiveExecution {
    const key = toolUseKey(call.sessionId, call.toolUseId);
    const entry: LiveExecution = { call, controller, done: undefined, key };
    this.live.set(call.id, entry);
    this.byToolUse.set(key, call.id);
    return entry;
  }

  get(id: string): LiveExecution | undefined {
    return this.live.get(id);
  }

  findByToolUse(sessionId: string, toolUseId: string): LiveExecution | undefined {
    const id = this.byToolUse.get(toolUseKey(sessionId, toolUseId));
    return id === undefined ? undefined : this.live.get(id);
  }

  /** Aborts a running call; false when it is not running here. */
  cancel(id: string): boolean {
    const e = this.live.get(id);
    if (!e || TERMINAL_STATUSES.has(e.call.status)) return false;
    e.controller.abort();
    return true;
  }

  /** Forgets a call that ended without a committed record. */
  remove(id: string): void {
    const e = this.live.get(id);
    if (!e) return;
    this.live.delete(id);
    if (this.byToolUse.get(e.key) === id) this.byToolUse.delete(e.key);
  }

  /** Every call in flight (shutdown, dashboards). */
  all(): LiveExecution[] {
    return [...this.live.values()];
  }

  get size(): number {
    return this.live.size;
  }

  subscribe(l: ExecutionListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Listens to finished calls only (as `execution.finished` events do, first). */
  onFinished(l: (call: FinishedCall) => void): () => void {
    this.finishListeners.add(l);
    return () => this.finishListeners.delete(l);
  }

  private emit(e: ExecutionEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  onState(call: Call): void {
    const entry = this.live.get(call.id);
    const prev = entry?.call.status;
    if (entry) entry.call = call;
    if (TERMINAL_STATUSES.has(call.status)) {
      this.live.delete(call.id);
      const key = entry ? entry.key : toolUseKey(call.sessionId, call.toolUseId);
      if (this.byToolUse.get(key) === call.id) this.byToolUse.delete(key);
      for (const l of this.finishListeners) {
        try {
          l(call as FinishedCall);
        } catch {
          /* a listener's failure is its own */
        }
      }
      if (this.listeners.size > 0) this.emit({ type: 'execution.finished', call: call as FinishedCall });
      return;
    }
    if (this.listeners.size === 0) return;
    if (prev === 'queued' && call.status !== 'queued') this.emit({ type: 'execution.started', call });
    else this.emit({ type: 'execution.state', call });
  }

  onProgress(call: Call, progress: ProgressEvent): void {
    if (this.listeners.size > 0) this.emit({ type: 'execution.progress', call, progress });
  }
}
