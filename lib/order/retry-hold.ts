/**
 * While an order waits in a retry queue, its outbox entry says so: the sweeper treats an entry as
 * due only `OUTBOX_STALE_MS` after its `rt`, so setting `rt` to the moment the retry copy comes
 * back keeps the sweeper from republishing extra copies of an order that is already being retried
 * (copies that could otherwise outlive an admin's discard).
 */
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';
import type { OrderMessage } from '@/lib/seckill/message';
import { redisNowMs, touchPendingEntry } from '@/lib/seckill/outbox';

export async function holdPendingEntry(redis: RedisClient, msg: OrderMessage, retryDelayMs: number): Promise<void> {
  try {
    const now = await redisNowMs(redis);
    await touchPendingEntry(redis, { ...msg, r: 0, rt: now + retryDelayMs });
  } catch (err) {
    // Only an economy: at worst the sweeper publishes a duplicate, which the tombstone still stops.
    log.warn({ err: (err as Error).message, orderId: msg.orderId }, 'could not mark the outbox entry as in retry');
  }
}
