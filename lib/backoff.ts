/**
 * The one backoff for retry loops (broker reconnects, a database that stopped answering, Redis
 * that must agree after an admin change): the wait starts at `firstMs`, doubles after each
 * failure up to `maxMs`, and starts over once the thing answers again.
 */
export class Backoff {
  private current: number;

  constructor(
    readonly firstMs: number,
    readonly maxMs: number,
  ) {
    this.current = firstMs;
  }

  /** The wait before the next try; the one after it is twice as long (at most maxMs). */
  next(): number {
    const wait = this.current;
    this.current = Math.min(this.current * 2, this.maxMs);
    return wait;
  }

  /** What the next wait would be, without taking it (for logs). */
  peek(): number {
    return this.current;
  }

  /** It answered: the next failure waits the shortest time again. */
  reset(): void {
    this.current = this.firstMs;
  }

  /** Waits out the next delay; `unref` lets a background loop not keep a stopping process alive. */
  sleep(unref = false): Promise<void> {
    const ms = this.next();
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      if (unref) t.unref();
    });
  }
}
