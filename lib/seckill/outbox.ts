/**
 * The per-voucher outbox `seckill:{vid}:pending` (orderId → order message JSON): written by the
 * grab script, cleared by the worker after commit, swept for stragglers by the sweeper.
 */
import type { RedisClient } from '@/lib/redis/types';
import { z } from 'zod';
import { orderMessageSchema, type OrderMessage } from '@/lib/seckill/message';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { notifySeckillChanged } from '@/lib/seckill/refusal-memory';

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

/** Finds a pending order by id alone: one HGET per voucher that may have an outbox. */
export async function findPendingOrder(redis: RedisClient, orderId: string): Promise<OrderMessage | null> {
  const vids = await redis.smembers(keys.seckillActive());
  if (vids.length === 0) return null;
  // One HGET per outbox, not a pipeline: the outboxes live in different cluster slots.
  const res = await Promise.all(vids.map((vid) => redis.hget(keys.seckillPending(vid), orderId).catch(() => null)));
  for (const raw of res) {
    if (typeof raw === 'string') return parsePendingEntry(raw);
  }
  return null;
}

/** Records a republish on the entry unless the worker removed it meanwhile. */
export async function touchPendingEntry(redis: RedisClient, entry: PendingEntry): Promise<boolean> {
  const r = await runScript<number>(redis, 'seckill-touch-pending', [keys.seckillPending(entry.voucherId)], [entry.orderId, JSON.stringify(entry)]);
  return r === 1;
}

/**
 * Gives back the unit of an accepted order that will never be written (a discarded dead
 * letter): outbox entry, buyer and one unit of stock, together; a second call does nothing.
 */
export async function releaseOrder(redis: RedisClient, voucherId: string, orderId: string, userId: string): Promise<boolean> {
  const r = await runScript<number>(
    redis,
    'seckill-release',
    [keys.seckillStock(voucherId), keys.seckillBuyers(voucherId), keys.seckillPending(voucherId)],
    [orderId, userId],
  );
  if (r === 1) await notifySeckillChanged(redis, voucherId); // a unit is on sale again: forget "sold out" everywhere
  return r === 1;
}

/**
 * Removes entries whose order the worker wrote (or folded): one HDEL per voucher, since each
 * voucher's outbox is its own cluster slot. Returns how many were there.
 */
export async function removePendingEntries(redis: RedisClient, voucherId: string, orderIds: Iterable<string>): Promise<number> {
  const ids = [...orderIds];
  return ids.length === 0 ? 0 : redis.hdel(keys.seckillPending(voucherId), ...ids);
}

/** One HSCAN page of a voucher's outbox: the next cursor and the raw entries. */
export async function scanPendingEntries(redis: RedisClient, voucherId: string, cursor: string, count: number): Promise<[next: string, flat: string[]]> {
  return redis.hscan(keys.seckillPending(voucherId), cursor, 'COUNT', count);
}

/** Every raw entry of a voucher's outbox (the console's sale chart reads their times). */
export function pendingEntriesRaw(redis: RedisClient, voucherId: string): Promise<string[]> {
  return redis.hvals(keys.seckillPending(voucherId));
}

/** How many accepted grabs of the voucher wait in its outbox. */
export function pendingCount(redis: RedisClient, voucherId: string): Promise<number> {
  return redis.hlen(keys.seckillPending(voucherId));
}

export async function redisNowMs(redis: RedisClient): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
