/** A voucher's live flash-sale numbers as RedisClient holds them (shop page, admin live stock). */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';

export interface SeckillState {
  initial: number;
  remaining: number;
  buyers: number;
  pending: number;
  /** Returned units held by an open offer to a waiting user (docs/fair-sale.md#waitlist): neither stock nor bought. */
  offers: number;
  beginTime: string | null;
  endTime: string | null;
}

const iso = (ms: string | undefined) => (ms && Number.isFinite(Number(ms)) ? new Date(Number(ms)).toISOString() : null);

/** null when the voucher has not been preheated. */
export async function readSeckillState(redis: RedisClient, voucherId: string): Promise<SeckillState | null> {
  const res = await redis
    .multi()
    .hgetall(keys.seckillMeta(voucherId))
    .get(keys.seckillStock(voucherId))
    .scard(keys.seckillBuyers(voucherId))
    .hlen(keys.seckillPending(voucherId))
    .zcard(keys.seckillOffers(voucherId))
    .exec();
  if (!res) throw new Error('redis transaction aborted');
  for (const [err] of res) if (err) throw err;
  const meta = res[0]![1] as Record<string, string>;
  if (!meta || meta.initial === undefined) return null;
  return {
    initial: Number(meta.initial),
    remaining: Number(res[1]![1] ?? 0),
    buyers: Number(res[2]![1]),
    pending: Number(res[3]![1]),
    offers: Number(res[4]![1]),
    beginTime: iso(meta.begin),
    endTime: iso(meta.end),
  };
}
