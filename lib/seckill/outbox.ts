/**
 * The per-voucher outbox `seckill:{vid}:pending` (orderId → order message JSON): written by the
 * grab script, cleared by the worker after commit, swept for stragglers by the sweeper.
 */
import type { RedisClient } from '@/lib/redis/types';
import { z } from 'zod';
import { orderMessageSchema, type OrderMessage } from '@/lib/seckill/message';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { env } from '@/lib/env';
import { notifySeckillChanged } from '@/lib/seckill/refusal-memory';
import { bucketCount, homeTag } from '@/lib/seckill/buckets/count';
import { bucketTags } from '@/lib/seckill/buckets/tags';

/** An outbox entry: the order message plus the sweeper's republish count `r` and last time `rt`. */
export const pendingEntrySchema = orderMessageSchema.extend({
  r: z.number().int().nonnegative().optional(),
  rt: z.number().int().nonnegative().optional(),
});
export type PendingEntry = z.infer<typeof pendingEntrySchema>;

export function parsePendingEntry(raw: string): PendingEntry | null {
  try {
    const r = pendingEntrySchema.safeParse(JSON.parse(raw));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Finds a pending order by id alone: one HGET per outbox (a bucketed sale has one per bucket) that may hold it. */
export async function findPendingOrder(redis: RedisClient, orderId: string): Promise<OrderMessage | null> {
  const vids = await redis.smembers(keys.seckillActive());
  if (vids.length === 0) return null;
  const tags = (await Promise.all(vids.map(async (vid) => bucketTags(vid, await bucketCount(redis, vid))))).flat();
  // One HGET per outbox, not a pipeline: the outboxes live in different cluster slots.
  const res = await Promise.all(tags.map((t) => redis.hget(keys.seckillPending(t), orderId).catch(() => null)));
  for (const raw of res) {
    if (typeof raw === 'string') return parsePendingEntry(raw);
  }
  return null;
}

/** Records a republish on the entry unless the worker removed it meanwhile. */
export async function touchPendingEntry(redis: RedisClient, entry: PendingEntry): Promise<boolean> {
  const tag = await homeTag(redis, entry.voucherId, entry.userId);
  const r = await runScript<number>(redis, 'seckill-touch-pending', [keys.seckillPending(tag)], [entry.orderId, JSON.stringify(entry)]);
  return r === 1;
}

/**
 * Gives back the unit of an accepted order that will never be written (a discarded dead letter, an
 * unconfirmed publish voided): outbox entry, buyer and unit, together; a second call does nothing.
 * The unit goes to the head of the sale's waitlist if anyone waits (docs/fair-sale.md#waitlist),
 * as a returned one does, and only otherwise back on open sale. `offerUntil`: the order was a
 * claimed offer's (its expiry, ms): the offer goes back to the claimer instead.
 */
export async function releaseOrder(redis: RedisClient, voucherId: string, orderId: string, userId: string, offerUntil?: number): Promise<boolean> {
  const t = await homeTag(redis, voucherId, userId); // the buyer's home bucket: where the grab took it
  const [r] = await runScript<[number, string?]>(
    redis,
    'seckill-release',
    [
      keys.seckillStock(t),
      keys.seckillBuyers(t),
      keys.seckillPending(t),
      keys.seckillForfeit(t),
      keys.seckillMeta(t),
      keys.seckillWaitlist(t),
      keys.seckillOffers(t),
      keys.seckillWaitStats(t),
    ],
    [orderId, userId, env.WAITLIST_OFFER_MS, offerUntil ?? ''],
  );
  // Back on open sale: forget "sold out" everywhere. An offered unit is not on open sale.
  if (r === 1) await notifySeckillChanged(redis, voucherId);
  return r !== 0;
}

/**
 * Removes entries whose order the worker wrote (or folded) from one outbox: one HDEL per outbox,
 * since each is its own cluster slot. `tag`: the voucher id, or a bucket's tag (docs/buckets.md).
 * Returns how many were there.
 */
export async function removePendingEntries(redis: RedisClient, tag: string, orderIds: Iterable<string>): Promise<number> {
  const ids = [...orderIds];
  return ids.length === 0 ? 0 : redis.hdel(keys.seckillPending(tag), ...ids);
}

/** One HSCAN page of one outbox (`tag` as above): the next cursor and the raw entries. */
export async function scanPendingEntries(redis: RedisClient, tag: string, cursor: string, count: number): Promise<[next: string, flat: string[]]> {
  return redis.hscan(keys.seckillPending(tag), cursor, 'COUNT', count);
}

/** Every raw entry of a voucher's outbox (the console's sale chart reads their times). */
export async function pendingEntriesRaw(redis: RedisClient, voucherId: string): Promise<string[]> {
  const tags = bucketTags(voucherId, await bucketCount(redis, voucherId));
  return (await Promise.all(tags.map((t) => redis.hvals(keys.seckillPending(t))))).flat();
}

/** How many accepted grabs wait in one outbox (`tag`: the voucher id, or a bucket's tag). */
export function pendingCount(redis: RedisClient, tag: string): Promise<number> {
  return redis.hlen(keys.seckillPending(tag));
}

export async function redisNowMs(redis: RedisClient): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
