/**
 * Collects deliveries into batches: a batch goes as soon as it is full, or WORKER_BATCH_WAIT_MS
 * after its oldest delivery arrived, and batches run one after another (they would queue on the
 * voucher's stock row anyway). Prefetch bounds how much waits here.
 *
 * Every partial batch waits, not only the first of a quiet spell: under a steady stream a batch
 * that went the moment the one before it finished held only what arrived during that one (about
 * one web turn's orders, ~20 at 3 000/s), and each batch costs the same six queries, an ack, a
 * timeout message and an HDEL whatever its size. The wait costs no grab anything: a grab is
 * answered once its order is in RabbitMQ, before the worker sees it.
 */
import type { Delivery } from '@/lib/order/handler';

export class Batcher<D extends Delivery> {
  private buffer: D[] = [];
  /** When each buffered delivery arrived (ms), in buffer order. */
  private arrivals: number[] = [];
  private running: Promise<void> | undefined;
  /** Ends the current wait early: the buffer filled up, or idle() wants everything now. */
  private wake: (() => void) | undefined;
  private hurry = 0;

  constructor(
    private readonly handle: (batch: D[]) => Promise<void>,
    private readonly size: number,
    private readonly waitMs: number,
    private readonly onError: (err: unknown, batch: D[]) => void,
    private readonly onDepth: (n: number) => void = () => {},
  ) {}

  push(d: D): void {
    this.buffer.push(d);
    this.arrivals.push(Date.now());
    this.onDepth(this.buffer.length);
    if (this.buffer.length >= this.size) this.wakeUp();
    // loop() always awaits before it can end, so `running` is set before its finally clears it.
    this.running ??= this.loop();
  }

  /** Drops what a dead channel delivered: it can no longer be acked and the broker redelivers it. */
  discard(keep: (d: D) => boolean): void {
    const buffer: D[] = [];
    const arrivals: number[] = [];
    this.buffer.forEach((d, i) => {
      if (!keep(d)) return;
      buffer.push(d);
      arrivals.push(this.arrivals[i]!);
    });
    this.buffer = buffer;
    this.arrivals = arrivals;
    this.onDepth(this.buffer.length);
  }

  /** Resolves when everything pushed so far has been handled, without waiting for batches to fill. */
  async idle(): Promise<void> {
    this.hurry++;
    try {
      this.wakeUp();
      while (this.running) await this.running;
    } finally {
      this.hurry--;
    }
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async loop(): Promise<void> {
    try {
      while (this.buffer.length > 0) {
        const due = this.arrivals[0]! + this.waitMs - Date.now();
        if (this.buffer.length < this.size && this.hurry === 0 && due > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => this.wakeUp(), due);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          continue; // the buffer may have filled, or been emptied by discard()
        }
        const batch = this.buffer.splice(0, this.size);
        this.arrivals.splice(0, batch.length);
        this.onDepth(this.buffer.length);
        try {
          await this.handle(batch);
        } catch (err) {
          this.onError(err, batch);
        }
      }
    } finally {
      this.running = undefined; // right after the last look at the buffer, in the same microtask
    }
  }
}
