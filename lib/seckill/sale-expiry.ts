/**
 * A flash sale's Redis keys (`seckill:{vid}:meta/stock/buyers/pending/returned/forfeit`) must not live forever:
 * Redis runs with noeviction, so keys of long-finished sales would one day make it refuse every
 * write, sessions and grabs included. Once a sale has ended and its outbox is empty (the outbox
 * sweeper decides), its keys get SECKILL_ENDED_KEY_TTL_SECONDS — a grace period for the admin's
 * view and late repairs; after that a repair (preheat) rebuilds them from MySQL as usual. A preheat
 * re-opens a sale, so it makes the keys permanent again. All keys share the `{vid}` hash tag: one
 * MULTI, Cluster-safe.
 */
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';

// The returned, forfeit, reserved and winners sets and the waitlist's keys too: they only matter while the sale's other keys exist, and a
// preheat rebuilds the forfeit, reserved and winners sets from MySQL with them.
const saleKeys = (vid: string) => [
  keys.seckillMeta(vid),
  keys.seckillStock(vid),
  keys.seckillBuyers(vid),
  keys.seckillPending(vid),
  keys.seckillReturned(vid),
  keys.seckillForfeit(vid),
  keys.seckillReserved(vid),
  keys.seckillWinners(vid),
  keys.seckillWaitlist(vid),
  keys.seckillOffers(vid),
  keys.seckillWaitStats(vid),
  keys.seckillWaitLapsed(vid),
  // A bucketed sale's stock-move journal and delivered moves (docs/buckets.md); `vid` is the bucket's tag then.
  keys.seckillMovesOut(vid),
  keys.seckillMovesIn(vid),
  keys.seckillMoveSeq(vid),
];

export async function expireEndedSale(redis: RedisClient, vid: string, ttlSeconds = env.SECKILL_ENDED_KEY_TTL_SECONDS): Promise<void> {
  const m = redis.multi();
  for (const k of saleKeys(vid)) m.expire(k, ttlSeconds);
  await m.exec();
}

export async function keepSaleKeys(redis: RedisClient, vid: string): Promise<void> {
  const m = redis.multi();
  for (const k of saleKeys(vid)) m.persist(k);
  await m.exec();
}
