/**
 * Shop page UV and PV per Beijing day: uv:shop:{shopId}:{yyyyMMdd} is a HyperLogLog of visitor ids
 * (12 KB at most, however many visitors, ~0.81 % standard error), pv:shop:{shopId}:{yyyyMMdd} a
 * counter. Both share the shop's hash tag and expire after 40 days (the console shows 30).
 * Only shops that exist are counted (the route checks), so strangers cannot mint keys.
 */
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';
import { beijingDay, beijingDaysAgo } from '@/lib/sign/beijing-day';

const UV_TTL_SECONDS = 40 * 24 * 3600;
/** A visitor without an account: the random id of its cookie. */
export const VISITOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export async function recordShopView(redis: RedisClient, shopId: string, visitor: string, now = new Date()): Promise<void> {
  const day = beijingDay(now).yyyyMMdd;
  const uv = keys.shopUv(shopId, day);
  const pv = keys.shopPv(shopId, day);
  // One slot (the {shopId} tag), so one MULTI even on a Redis Cluster.
  await redis.multi().pfadd(uv, visitor).expire(uv, UV_TTL_SECONDS).incr(pv).expire(pv, UV_TTL_SECONDS).exec();
}

export interface DailyTraffic {
  date: string;
  uv: number;
  pv: number;
}

/** The last `days` Beijing days of one shop, oldest first. */
export async function shopTraffic(redis: RedisClient, shopId: string, days = 30, now = new Date()): Promise<DailyTraffic[]> {
  const list = Array.from({ length: days }, (_, i) => beijingDaysAgo(now, days - 1 - i));
  return Promise.all(
    list.map(async (d) => {
      const [uv, pv] = await Promise.all([redis.pfcount(keys.shopUv(shopId, d.yyyyMMdd)), redis.get(keys.shopPv(shopId, d.yyyyMMdd))]);
      return { date: d.iso, uv, pv: Number(pv ?? 0) };
    }),
  );
}
