/** A sale's waitlist counts for the console and /metrics (docs/fair-sale.md#per-sale-numbers). */
import type { RedisClient } from '@/lib/redis/types';
import { waitKeys } from '@/lib/seckill/waitlist/tag';

export interface WaitlistNumbers {
  waiting: number;
  offersOpen: number;
  offered: number;
  claimed: number;
  expired: number;
}

/** The console's and /metrics' numbers of one sale (one MULTI in one slot). */
export async function waitlistNumbers(redis: RedisClient, voucherId: string): Promise<WaitlistNumbers> {
  const w = waitKeys(voucherId);
  const res = await redis.multi().zcard(w.waitlist).zcard(w.offers).hmget(w.stats, 'offered', 'claimed', 'expired').exec();
  if (!res) throw new Error('redis transaction aborted');
  for (const [err] of res) if (err) throw err;
  const [offered, claimed, expired] = (res[2]![1] as (string | null)[]).map((v) => Number(v ?? 0));
  return { waiting: Number(res[0]![1]), offersOpen: Number(res[1]![1]), offered: offered!, claimed: claimed!, expired: expired! };
}
