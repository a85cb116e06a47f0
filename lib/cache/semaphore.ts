/**
 * A counting semaphore with a bounded queue. It guards this process's DB pool when the cache is
 * gone: N loads run, a bounded number wait their turn, the rest are refused at once (503) instead
 * of piling up until every request times out.
 */
import { AppError } from '@/lib/errors';

export class Semaphore {
  private active = 0;
  private peak = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly max: number,
    readonly maxQueue: number,
  ) {
    if (max < 1) throw new Error('Semaphore max must be at least 1');
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) {
      if (this.waiting.length >= this.maxQueue) throw new AppError('SERVICE_UNAVAILABLE', '服务繁忙，请稍后再试');
      // The releasing caller hands its slot straight over, so `active` never overshoots.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    this.peak = Math.max(this.peak, this.active);
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Most loads ever in flight at once (tests assert the cap with it). */
  get highWater(): number {
    return this.peak;
  }
}
