/** The console's traffic view: daily UV and PV of the shops a merchant manages (an admin: all). */
import type { Executor } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { ownerScope, type Actor } from '@/lib/access/access';
import { listShopRefs } from '@/lib/access/access.repository';
import { shopTraffic, type DailyTraffic } from '@/lib/uv/uv';

/** An admin manages every shop; the chart page shows at most this many. */
const MAX_SHOPS = 50;

export interface ShopTraffic {
  shopId: string;
  name: string;
  days: DailyTraffic[];
}

export async function trafficOfMyShops(db: Executor, redis: RedisClient, actor: Actor, days = 30): Promise<ShopTraffic[]> {
  const shops = (await listShopRefs(db, ownerScope(actor))).slice(0, MAX_SHOPS);
  return Promise.all(shops.map(async (s) => ({ shopId: s.id, name: s.name, days: await shopTraffic(redis, s.id, days) })));
}
