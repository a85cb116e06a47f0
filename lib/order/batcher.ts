/**
 * Collects deliveries into batches: a batch goes as soon as it is full, or WORKER_BATCH_WAIT_MS
 * after its first message, and batches run one after another (they would queue on the voucher's
 * stock row anyway). Prefetch bounds how much waits here.
 */
import type { Delivery } from '@/lib/order/handler';

export class Batcher<D extends Delivery> {
  private buffer: D[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly handle: (batch: D[]) => Promise<void>,
    private readonly size: number,
    private readonly waitMs: number,
    private readonly onError: (err: unknown, batch: D[]) => void,
    private readonly onDepth: (n: number) => void = () => {},
  ) {}

  push(d: D): void {
    this.buffer.push(d);
    this.onDepth(this.buffer.length);
    if (this.buffer.length >= this.size) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.waitMs);
  }

  /** Drops what a dead channel delivered: it can no longer be acked and the broker redelivers it. */
  discard(keep: (d: D) => boolean): void {
    this.buffer = this.buffer.filter(keep);
    this.onDepth(this.buffer.length);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves when everything pushed so far has been handled. */
  async idle(): Promise<void> {
    while (this.running || this.buffer.length > 0) {
      this.flush();
      await this.running;
    }
  }

  private async loop(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.size);
      this.onDepth(this.buffer.length);
      try {
        await this.handle(batch);
      } catch (err) {
        this.onError(err, batch);
      }
    }
  }
}
