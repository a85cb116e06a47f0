/**
 * The Redis half of giving a cancelled or refunded seckill order's unit back. MySQL already took
 * the unit back in the transition's transaction and recorded it as owed (stock_return = 1); this
 * step runs after the commit, and again from the backstop if a crash or a Redis outage came in
 * between: the script remembers the order ids it returned, so a retry never returns twice. The
 * same script puts the buyer in the sale's forfeit set: a unit given back is not theirs to grab
 * again (the grab script refuses them), and offers the unit to the sale's waitlist first.
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { markRedisReturned, owedRedisReturns } from '@/lib/order/lifecycle.repository';
import { notifySeckillChanged } from '@/lib/seckill/refusal-memory';
import { homeTag } from '@/lib/seckill/buckets/count';
import { findBucketCount } from '@/lib/seckill/seckill.repository';

export interface OwedReturn {
  id: string;
  voucherId: string;
  userId: string;
}

/**
 * The one place a unit goes back on sale in Redis (the buyer forfeits the sale). The same script
 * offers it to the head of the sale's waitlist if anyone waits (docs/fair-sale.md#waitlist), and
 * only otherwise raises the stock. Returns true if this call returned it, false if an earlier
 * call already had.
 */
export async function returnUnitToRedis(db: DB, redis: RedisClient, o: OwedReturn): Promise<boolean> {
  // Given back in the buyer's home bucket, where the grab took it (docs/buckets.md); that
  // bucket's waitlist gets the first claim on it (docs/fair-sale.md#waitlist). N from MySQL when
  // bucket 0 cannot say (Redis lost it, this process never learnt N): else the return would go to
  // bucket 0, find no sale there and be done, the unit left taken in the buyer's home bucket.
  const t = await homeTag(redis, o.voucherId, o.userId, () => findBucketCount(db, o.voucherId));
  const [r] = await runScript<[number, string?]>(
    redis,
    'seckill-return',
    [
      keys.seckillStock(t),
      keys.seckillBuyers(t),
      keys.seckillReturned(t),
      keys.seckillForfeit(t),
      keys.seckillMeta(t),
      keys.seckillWaitlist(t),
      keys.seckillOffers(t),
      keys.seckillWaitStats(t),
    ],
    [o.id, o.userId, env.WAITLIST_OFFER_MS],
  );
  // Back on open sale: forget "sold out" everywhere. An offered unit is not on open sale. A sale
  // Redis does not hold (3) owes nothing here: its next preheat counts the unit from MySQL.
  if (r === 1) await notifySeckillChanged(redis, o.voucherId);
  return r !== 0;
}

/** Redis step then the MySQL "done" flag; a failure leaves the flag owed for the backstop. */
export async function completeReturn(db: DB, redis: RedisClient, o: OwedReturn): Promise<void> {
  try {
    await returnUnitToRedis(db, redis, o);
    await markRedisReturned(db, o.id);
  } catch (err) {
    log.warn({ err: (err as Error).message, orderId: o.id }, 'stock return to Redis failed; the backstop retries it');
  }
}

/** Backstop: completes returns still owed to Redis after `graceMs`. Returns how many it completed. */
export async function completeOwedReturns(db: DB, redis: RedisClient, graceMs = 2000, limit = 500): Promise<number> {
  const owed = await owedRedisReturns(db, graceMs, limit);
  for (const o of owed) await completeReturn(db, redis, o);
  return owed.length;
}
