/**
 * Preheat / repair of a bucketed flash sale (docs/buckets.md#preheat-and-repair): each bucket is
 * preheated like a whole sale (lua/seckill-preheat-4.lua in its own slot) with its share of the
 * stock and the MySQL buyers whose home it is. Run by lib/seckill/preheat.ts inside the voucher's
 * row-lock transaction, and under the move lock, so no live move changes a share while the shares
 * are read and written; a move whose mover died is in the journal, counted as in flight, and
 * delivered at the end.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { withLock } from '@/lib/lock';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { MOVE_LEASE_MS, moveLockName, movesInFlight, recoverMoves } from '@/lib/seckill/buckets/move';
import { bucketShares } from '@/lib/seckill/buckets/shares';
import { bucketTags, homeBucket } from '@/lib/seckill/buckets/tags';
import { buyerIdPages, forfeitIdPages, goneBuyerIdPages } from '@/lib/seckill/seckill.repository';

export interface BucketedSale {
  initialStock: number;
  beginTime: Date;
  endTime: Date;
  buckets: number;
}

/** Groups user ids by home bucket. */
function byHome(ids: string[], n: number): string[][] {
  const out: string[][] = Array.from({ length: n }, () => []);
  for (const id of ids) out[homeBucket(id, n)]!.push(id);
  return out;
}

export async function preheatBuckets(trx: Executor, redis: RedisClient, vid: string, v: BucketedSale): Promise<{ initial: number; remaining: number; buyers: number }> {
  const n = v.buckets;
  const tags = bucketTags(vid, n);
  return withLock(moveLockName(vid), { leaseMs: MOVE_LEASE_MS, waitMs: 10_000 }, async () => {
    // N first, in every bucket: a process learns N from bucket 0's meta once it has an initial
    // (lib/seckill/buckets/count.ts), so N must be there before any preheat script writes one.
    const [current] = await Promise.all([
      Promise.all(tags.map((t) => redis.hget(keys.seckillMeta(t), 'initial'))),
      Promise.all(tags.map((t) => redis.hset(keys.seckillMeta(t), 'buckets', n))),
    ]);
    // As for N = 1 (lib/seckill/preheat.ts): forfeits first, then a return Redis forgot (a failover
    // to a replica that had not seen it) must not leave its buyer holding the unit for good.
    for await (const page of forfeitIdPages(trx, vid)) {
      await Promise.all(byHome(page, n).map((ids, b) => (ids.length ? redis.sadd(keys.seckillForfeit(tags[b]!), ...ids) : 0)));
    }
    for await (const page of goneBuyerIdPages(trx, vid)) {
      await Promise.all(byHome(page, n).map((ids, b) => (ids.length ? redis.srem(keys.seckillBuyers(tags[b]!), ...ids) : 0)));
    }
    // Buyers first (they only grow), so a share never lands below them.
    for await (const page of buyerIdPages(trx, vid)) {
      await Promise.all(byHome(page, n).map((ids, b) => (ids.length ? redis.sadd(keys.seckillBuyers(tags[b]!), ...ids) : 0)));
    }
    const [buyers, inFlight] = await Promise.all([Promise.all(tags.map((t) => redis.scard(keys.seckillBuyers(t)))), movesInFlight(redis, vid, n)]);
    const shares = bucketShares(
      v.initialStock,
      current.map((c) => (c === null ? null : Number(c))),
      inFlight.reduce((a, m) => a + m.units, 0),
      buyers,
    );
    const results = await Promise.all(
      tags.map((t, b) =>
        runScript<[number, number, number]>(redis, 'seckill-preheat', [keys.seckillMeta(t), keys.seckillStock(t), keys.seckillBuyers(t), keys.seckillOffers(t)], [
          shares[b]!,
          v.beginTime.getTime(),
          v.endTime.getTime(),
          '', // a gated sale is never bucketed (lib/seckill/preheat.ts refuses it)
          '', // nor one behind the waiting room; and its waitlist is refused, so it holds no offers
        ]),
      ),
    );
    // Moves whose mover died: their units were kept out of the shares above; deliver them now.
    await recoverMoves(redis, vid, n);
    const remaining = await Promise.all(tags.map((t) => redis.get(keys.seckillStock(t))));
    return {
      initial: v.initialStock,
      remaining: remaining.reduce((a, r) => a + Number(r ?? 0), 0),
      buyers: results.reduce((a, r) => a + r[2], 0),
    };
  });
}
