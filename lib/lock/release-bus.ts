/**
 * Waiting for a lock without polling. One subscriber connection per Redis client per process
 * (a `duplicate()`, made on first need) listens on the release channel of every lock someone here
 * waits for. Waiters of one lock queue in arrival order and each release message wakes only the
 * first one not yet woken, so 200 local waiters cost one attempt per release, not 200.
 */
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';
import { openSubscriber } from '@/lib/redis/subscriber';

export class Waiter {
  woken = false;
  private wakeUp: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly ready: Promise<void>) {}

  /** Resolves on a release message or after `ms` (the holder's remaining lease), whichever is first. */
  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wakeUp = resolve;
      this.timer = setTimeout(() => this.settle(), ms);
    });
  }

  wake(): void {
    this.woken = true;
    if (this.wakeUp) {
      this.woken = false;
      this.settle();
    }
  }

  private settle(): void {
    clearTimeout(this.timer);
    const resolve = this.wakeUp;
    this.wakeUp = undefined;
    resolve?.();
  }
}

interface Channel {
  waiters: Waiter[];
  subscribed: Promise<void>;
}

export class ReleaseBus {
  private subscriber: RedisClient | undefined;
  private readonly channels = new Map<string, Channel>();

  constructor(private readonly client: RedisClient) {}

  /** Queues a waiter on `channel`; `waiter.ready` settles once the subscription is live. */
  join(channel: string): Waiter {
    let ch = this.channels.get(channel);
    if (!ch) {
      const subscribed = this.connection()
        .subscribe(channel)
        .then(
          () => undefined,
          // Without the subscription the waiter still wakes when the lease runs out.
          (err: Error) => log.warn({ channel, err: err.message }, 'lock release subscription failed'),
        );
      ch = { waiters: [], subscribed };
      this.channels.set(channel, ch);
    }
    const waiter = new Waiter(ch.subscribed);
    ch.waiters.push(waiter);
    return waiter;
  }

  /** Leaves the queue; a wake-up this waiter got but did not use goes to the next in line. */
  leave(channel: string, waiter: Waiter, acquired: boolean): void {
    const ch = this.channels.get(channel);
    if (!ch) return;
    ch.waiters = ch.waiters.filter((w) => w !== waiter);
    if (waiter.woken && !acquired) this.wakeNext(ch);
    if (ch.waiters.length === 0) {
      this.channels.delete(channel);
      this.subscriber?.unsubscribe(channel).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    this.channels.clear();
    if (sub) await sub.quit().catch(() => sub.disconnect());
  }

  private wakeNext(ch: Channel): void {
    ch.waiters.find((w) => !w.woken)?.wake();
  }

  private connection(): RedisClient {
    if (!this.subscriber) {
      this.subscriber = openSubscriber(this.client, 'lock', (channel: string) => {
        const ch = this.channels.get(channel);
        if (ch) this.wakeNext(ch);
      });
    }
    return this.subscriber;
  }
}
