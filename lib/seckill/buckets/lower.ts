/**
 * Lowering a bucketed sale's total stock (the console's stock edit, docs/buckets.md#lowering-the-stock).
 *
 * Each bucket is its own slot, so no one script can take k units from the sale: the units are
 * taken bucket by bucket, richest first, each by the same atomic script an unbucketed sale uses
 * (lua/voucher-shift-stock-2.lua: stock and the bucket's initial −t, refused when the bucket has
 * fewer than t unsold). Under the voucher's move lock, so no stock move runs meanwhile, and with
 * the move seqlock odd, so no grab concludes "sold out" from a survey taken halfway (a lowering
 * that comes up short gives its units back). Grabs keep running: a bucket that sold units between
 * the survey and the take is asked again for what it has left.
 */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { withLock } from '@/lib/lock';
import { journaledMoves, MOVE_LEASE_MS, moveLockName, seqTo } from '@/lib/seckill/buckets/move';
import { surveyBuckets } from '@/lib/seckill/buckets/rebalance';
import { bucketTag } from '@/lib/seckill/buckets/tags';

/** Units taken per bucket (index → units). */
export type Taken = Map<number, number>;

/** Moves one bucket's stock and initial by `delta`: the units moved, -1 short, -2 not preheated. */
function shiftBucket(redis: RedisClient, vid: string, n: number, b: number, delta: number): Promise<number> {
  const t = bucketTag(vid, b, n);
  return runScript<number>(redis, 'voucher-shift-stock', [keys.seckillMeta(t), keys.seckillStock(t)], [delta]);
}

/**
 * Puts units taken by takeFromBuckets back where they came from. Each bucket's entry is removed
 * once its units are back, so a give-back that failed halfway and is tried again never returns a
 * bucket's units twice.
 */
export async function giveBackToBuckets(redis: RedisClient, vid: string, n: number, taken: Taken): Promise<void> {
  for (const [b, units] of taken) {
    if (units > 0) await shiftBucket(redis, vid, n, b, units);
    taken.delete(b);
  }
}

/**
 * Takes `units` unsold units out of the sale's buckets. 'ok' with what came from where, 'short'
 * when fewer are unsold (nothing taken then), 'absent' when a bucket is not preheated (nothing taken).
 */
export async function takeFromBuckets(redis: RedisClient, vid: string, n: number, units: number): Promise<{ status: 'ok'; taken: Taken } | { status: 'short' | 'absent' }> {
  return withLock(moveLockName(vid), { leaseMs: MOVE_LEASE_MS, waitMs: 5000 }, async () => {
    await seqTo(redis, vid, 1);
    const taken: Taken = new Map();
    try {
      const { stock } = await surveyBuckets(redis, vid, n);
      let need = units;
      for (const [b, seen] of [...stock].sort((x, y) => y[1] - x[1])) {
        let ask = Math.min(need, seen);
        while (ask > 0) {
          const r = await shiftBucket(redis, vid, n, b, -ask);
          if (r === -2) {
            await giveBackToBuckets(redis, vid, n, taken);
            return { status: 'absent' as const };
          }
          if (r >= 0) {
            taken.set(b, ask);
            need -= ask;
            break;
          }
          // Grabs sold some meanwhile: ask for what is left now.
          ask = Math.min(need, Math.max(0, Number(await redis.get(keys.seckillStock(bucketTag(vid, b, n))))));
        }
        if (need === 0) return { status: 'ok' as const, taken };
      }
      await giveBackToBuckets(redis, vid, n, taken);
      return { status: 'short' as const };
    } catch (err) {
      // Redis failed halfway: what was taken goes back (if that fails too, the next preheat's
      // shares put the total right: MySQL was not lowered).
      await giveBackToBuckets(redis, vid, n, taken).catch(() => undefined);
      throw err;
    } finally {
      // Even again unless a dead mover's move is still journaled (recovery evens it after delivering).
      if ((await journaledMoves(redis, vid, n)).length === 0) await seqTo(redis, vid, 0);
    }
  });
}
