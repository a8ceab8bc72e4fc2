/**
 * Helpers for the websocket fuzz suite: a websocket client
 * that records every frame and every close, and that can wait for the answer
 * to one frame (the server answers a connection's frames in order, so a
 * `ping` sent after a frame is answered after it).
 */
import WebSocket from 'ws';

export type Frame = { type: string; [k: string]: unknown };

export class FuzzClient {
  frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: Array<() => void> = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d, isBinary) => {
      // The server only sends JSON text; anything else is a failure the test reports.
      const f = isBinary ? { type: '__binary__' } : (JSON.parse(String(d)) as Frame);
      this.frames.push(f);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
    ws.on('error', () => {});
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private changed(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nothing arrived in ${timeoutMs} ms; frames: ${JSON.stringify(this.frames.slice(-5))}`)), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Waits for the first frame matching `pred`, removes it and every frame before it, and returns them all. */
  async until(pred: (f: Frame) => boolean, timeoutMs = 10_000): Promise<{ hit: Frame; before: Frame[] }> {
    for (;;) {
      const i = this.frames.findIndex(pred);
      if (i >= 0) {
        const taken = this.frames.splice(0, i + 1);
        return { hit: taken[i]!, before: taken.slice(0, i) };
      }
      if (this.closed) throw new Error(`connection closed (${this.closed.code} ${this.closed.reason}) before the frame`);
      await this.changed(timeoutMs);
    }
  }

  /** Waits for the close and returns its code. */
  async closedWith(timeoutMs = 10_000): Promise<number> {
    while (!this.closed) await this.changed(timeoutMs);
    return this.closed.code;
  }

  send(f: unknown): void {
    this.ws.send(typeof f === 'string' || Buffer.isBuffer(f) ? f : JSON.stringify(f));
  }

  /**
   * Sends a frame then a ping, and returns what the server sent in between
   * (the answer to the frame, plus any events).
   */
  async roundTrip(f: unknown): Promise<Frame[]> {
    this.send(f);
    this.send({ type: 'ping' });
    return (await this.until((x) => x.type === 'pong')).before;
  }
}

export async function connectWs(port: number, token: string): Promise<FuzzClient> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${token}` } });
  const c = new FuzzClient(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await c.until((f) => f.type === 'hello');
  return c;
}
