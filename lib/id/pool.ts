/**
 * Order ids without a Redis round trip per grab. A process leases blocks of the daily sequence
 * (one INCRBY per block, taken ahead of need) and composes each id from a leased sequence number
 * and Redis' seconds (as of the lease, advanced by the local monotonic clock) clamped to the
 * lease's day. Ids stay unique: a sequence number is unique within its day's counter and the
 * seconds place the id in that day. A grab takes a candidate id and gives it back when the grab
 * is refused, so only accepted grabs use ids; the daily counter counts orders plus at most the
 * unused rest of each process's blocks. Within a process ids increase; across processes they are
 * ordered by time only to the second (one shared counter per id would make them strictly increasing).
 */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { composeId, dayKey } from '@/lib/id';

const DAY = 86_400;
/** A block older than this is dropped, so ids stay near the real time even when traffic is thin. */
const BLOCK_MAX_AGE_MS = 10_000;

interface Block {
  day: number;
  next: number;
  end: number;
  redisSeconds: number;
  leasedAt: number;
}

export interface TakenId {
  id: string;
  giveBack: () => void;
}

export class OrderIdPool {
  private blocks: Block[] = [];
  /** Sequence numbers handed out and given back, by block; reused before new ones. */
  private returned: { block: Block; seq: number }[] = [];
  private leasing: Promise<void> | undefined;
  /** Takers waiting for a lease: a burst bigger than a block gets one lease big enough for all. */
  private waiting = 0;
  /** When the oldest block held (in `blocks` or behind a `returned` id) goes stale: until then take() filters nothing. */
  private staleAt = Infinity;

  constructor(
    private readonly redis: RedisClient,
    private readonly blockSize = 256,
  ) {}

  /**
   * A candidate id. `giveBack()` only when the grab was definitely refused (never after an error:
   * the script may have run and recorded the order). Waits only for a lease when the pool is empty.
   */
  async take(): Promise<TakenId> {
    for (;;) {
      const taken = this.takeNow();
      if (taken) return taken;
      // Every lease brings at least blockSize ids, so waiting always makes progress; a failed
      // lease (Redis down) rejects every waiter.
      this.waiting++;
      try {
        await this.lease();
      } finally {
        this.waiting--;
      }
    }
  }

  /** take() without a promise: the id when the pool holds one (nearly always), else null. */
  takeNow(): TakenId | null {
    this.dropStale();
    let next = this.returned.pop();
    if (!next && this.blocks[0]) {
      const b = this.blocks[0];
      next = { block: b, seq: b.next++ };
      if (b.next > b.end) this.blocks.shift();
      if (this.remaining() < this.blockSize / 4) void this.lease().catch(() => {});
    }
    if (!next) return null;
    const taken = next;
    const pool = this; // eslint-disable-line @typescript-eslint/no-this-alias -- read by the method below
    // A method, not an arrow property: under tsx's keepNames an arrow would get a defineProperty per grab.
    return {
      id: compose(taken.block, taken.seq),
      giveBack() {
        pool.returned.push(taken);
      },
    };
  }

  private remaining(): number {
    return this.blocks.reduce((n, b) => n + b.end - b.next + 1, 0);
  }

  private dropStale(): void {
    const now = performance.now();
    if (now < this.staleAt) return; // the common case: no new arrays per take
    this.blocks = this.blocks.filter((b) => now - b.leasedAt < BLOCK_MAX_AGE_MS);
    this.returned = this.returned.filter((r) => now - r.block.leasedAt < BLOCK_MAX_AGE_MS);
    let oldest = Infinity;
    for (const b of this.blocks) oldest = Math.min(oldest, b.leasedAt);
    for (const r of this.returned) oldest = Math.min(oldest, r.block.leasedAt);
    this.staleAt = oldest + BLOCK_MAX_AGE_MS;
  }

  private lease(): Promise<void> {
    this.leasing ??= (async () => {
      let day = Math.floor(Date.now() / 1000 / DAY);
      const size = Math.max(this.blockSize, this.waiting);
      for (let i = 0; i < 3; i++) {
        const [a, b] = await runScript<[number, number]>(this.redis, 'seckill-order-id', [keys.orderSeq(dayKey(day))], [day, size]);
        if (a >= 0) {
          const leasedAt = performance.now();
          this.blocks.push({ day, next: b - size + 1, end: b, redisSeconds: a, leasedAt });
          this.staleAt = Math.min(this.staleAt, leasedAt + BLOCK_MAX_AGE_MS);
          return;
        }
        day = b;
      }
      throw new Error('order id: could not agree on the day with Redis');
    })().finally(() => (this.leasing = undefined));
    return this.leasing;
  }
}

function compose(b: Block, seq: number): string {
  const elapsed = Math.floor((performance.now() - b.leasedAt) / 1000);
  const seconds = Math.min(Math.max(b.redisSeconds + elapsed, b.day * DAY), b.day * DAY + DAY - 1);
  return composeId(seconds, seq).toString();
}
