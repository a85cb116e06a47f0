/**
 * Pre-warm (npm run cache:warm, called by npm run up after seeding): decide the hot shops, store
 * them with logical expiry so they never go missing under load, and load the type list, the
 * per-type id lists and the GEO indexes, so the first visitors after a deploy hit a warm cache.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { cacheFor } from '@/lib/cache';
import { listShopTypeIds, topShopIdsBySold } from '@/lib/shop/shop.repository';
import { shopIdsByTypeSpec, shopSpec, shopTypeListSpec } from '@/lib/shop/shop.cache';
import { loadShopGeo } from '@/lib/shop/shop.geo';

export interface WarmResult {
  hotShopIds: string[];
  types: number;
}

export async function warmShopCaches(db: Executor, redis: RedisClient): Promise<WarmResult> {
  const cache = cacheFor(redis);
  const hot = [...new Set([...env.CACHE_HOT_SHOP_IDS, ...(await topShopIdsBySold(db, env.CACHE_HOT_TOP_N))])];
  const m = redis.multi().del(keys.hotShops());
  if (hot.length) m.sadd(keys.hotShops(), ...hot);
  await m.exec();
  for (const id of hot) await cache.refresh(shopSpec(db, redis, id));

  await cache.refresh(shopTypeListSpec(db));
  const typeIds = await listShopTypeIds(db);
  for (const typeId of typeIds) {
    await cache.refresh(shopIdsByTypeSpec(db, typeId));
    await loadShopGeo(db, redis, typeId, true);
  }
  return { hotShopIds: hot, types: typeIds.length };
}
