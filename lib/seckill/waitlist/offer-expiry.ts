/**
 * Expired waitlist offers move on (docs/fair-sale.md#waitlist): a pass in the background worker
 * runs lua/seckill-offer-expire-8.lua for every sale the outbox sweeper knows (`seckill:active`:
 * every preheated sale until it has ended and drained); a waitlist join by the holder of an offer
 * past its expiry runs it for that sale first (./waitlist.ts). Each call is one atomic step that closes
 * the offers past their expiry and gives each unit to the next waiter or back to the stock, so
 * several workers running the pass at once, or a claim racing it, never move a unit twice.
 */
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { redis as defaultRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { notifySeckillChanged } from '@/lib/seckill/refusal-memory';
import { waitKeys, waitTag } from '@/lib/seckill/waitlist/tag';

export interface ExpiryStats {
  expired: number;
  offered: number;
  toStock: number;
}

/** Most offers one call closes; a longer backlog is finished by the next calls of the same pass. */
const MAX_PER_CALL = 200;

/** Closes one sale's expired offers; loops until none is left due. */
export async function expireOffers(redis: RedisClient, voucherId: string, offerMs = env.WAITLIST_OFFER_MS): Promise<ExpiryStats> {
  const t = waitTag(voucherId);
  const w = waitKeys(voucherId);
  const total: ExpiryStats = { expired: 0, offered: 0, toStock: 0 };
  for (;;) {
    const [expired, offered, toStock] = await runScript<[number, number, number]>(
      redis,
      'seckill-offer-expire',
      [keys.seckillStock(t), keys.seckillBuyers(t), keys.seckillForfeit(t), keys.seckillMeta(t), w.waitlist, w.offers, w.stats, w.lapsed],
      [offerMs, MAX_PER_CALL],
    );
    total.expired += expired;
    total.offered += offered;
    total.toStock += toStock;
    if (expired < MAX_PER_CALL) break;
  }
  // Units back on open sale: no process may keep answering "sold out" from memory.
  if (total.toStock > 0) await notifySeckillChanged(redis, voucherId);
  return total;
}

/** One pass over every active sale. */
export async function expireAllOffers(redis: RedisClient, offerMs = env.WAITLIST_OFFER_MS): Promise<ExpiryStats> {
  const total: ExpiryStats = { expired: 0, offered: 0, toStock: 0 };
  for (const vid of await redis.smembers(keys.seckillActive())) {
    const s = await expireOffers(redis, vid, offerMs);
    total.expired += s.expired;
    total.offered += s.offered;
    total.toStock += s.toStock;
  }
  return total;
}

export interface OfferExpiry {
  stop(): Promise<void>;
}

/** The worker's timer (WAITLIST_SWEEP_INTERVAL_MS; 0 = off). A slow pass is never overlapped. */
export function startOfferExpiry(options: { redis?: RedisClient; intervalMs?: number } = {}): OfferExpiry {
  const redis = options.redis ?? defaultRedis;
  const intervalMs = options.intervalMs ?? env.WAITLIST_SWEEP_INTERVAL_MS;
  let running: Promise<unknown> | undefined;
  const timer =
    intervalMs > 0
      ? setInterval(() => {
          if (running) return;
          running = expireAllOffers(redis)
            .then((s) => s.expired > 0 && log.info(s, 'waitlist offers expired and moved on'))
            .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'waitlist offer pass failed; next interval retries'))
            .finally(() => (running = undefined));
        }, intervalMs)
      : undefined;
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
