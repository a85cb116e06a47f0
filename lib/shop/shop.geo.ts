/**
 * "Nearest first" shop lists: one Redis GEO set per type (geo:shop:{typeId}), loaded from the DB
 * on first use and kept current by every shop write (syncShopGeo). Every change to one type's
 * set runs under the lock `geo:<typeId>` and reads the DB inside it, so a full reload and an
 * edit's sync can never interleave into a stale position. Redis down → the same order computed
 * from the DB.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { withLock } from '@/lib/lock';
import { cacheFor } from '@/lib/cache';
import { jitteredMs } from '@/lib/cache/entry';
import { findShopById, listShopPositionsByType } from '@/lib/shop/shop.repository';

/** Wider than half the Earth's circumference: every shop of the type, nearest first. */
const ALL_KM = 20_100;
/** The index is rebuilt from the DB this often even if no edit was missed. */
const GEO_RELOAD_SECONDS = 6 * 3600;

export interface NearbyPage {
  hits: { id: string; distance: number }[];
  hasMore: boolean;
}

const geoLock = (typeId: string) => `geo:${typeId}`;

async function reload(db: Executor, redis: RedisClient, typeId: string): Promise<void> {
  const rows = await listShopPositionsByType(db, typeId);
  const m = redis.multi().del(keys.shopGeo(typeId));
  if (rows.length) m.geoadd(keys.shopGeo(typeId), ...rows.flatMap((r) => [r.x, r.y, String(r.id)]));
  m.set(keys.shopGeoReady(typeId), '1', 'PX', jitteredMs(GEO_RELOAD_SECONDS, env.CACHE_TTL_JITTER));
  await m.exec();
}

/** Loads a type's index unless loaded; `force` reloads (warm-up). One loader per type at a time. */
export async function loadShopGeo(db: Executor, redis: RedisClient, typeId: string, force = false): Promise<void> {
  if (!force && (await redis.exists(keys.shopGeoReady(typeId)))) return;
  await withLock(geoLock(typeId), { waitMs: env.CACHE_LOCK_WAIT_MS }, async () => {
    if (!force && (await redis.exists(keys.shopGeoReady(typeId)))) return;
    await reload(db, redis, typeId);
  });
}

/** One page of a type's shops nearest to (x, y) first, with distances in metres. */
export async function nearbyShops(db: Executor, redis: RedisClient, typeId: string, x: number, y: number, page: number, size: number): Promise<NearbyPage> {
  const from = (page - 1) * size;
  return cacheFor(redis).withFallback(
    keys.shopGeo(typeId),
    async () => {
      await loadShopGeo(db, redis, typeId);
      // Ask for one more than the page to know whether another page follows.
      const raw = (await redis.geosearch(keys.shopGeo(typeId), 'FROMLONLAT', x, y, 'BYRADIUS', ALL_KM, 'km', 'ASC', 'COUNT', from + size + 1, 'WITHDIST')) as [string, string][];
      return toPage(raw.map(([id, km]) => ({ id, distance: Math.round(Number(km) * 1000) })), from, size);
    },
    async () => {
      const rows = await listShopPositionsByType(db, typeId);
      const all = rows.map((r) => ({ id: String(r.id), distance: Math.round(haversineMetres(x, y, r.x, r.y)) })).sort((a, b) => a.distance - b.distance);
      return toPage(all, from, size);
    },
    env.CACHE_LOCK_WAIT_MS + env.CACHE_REDIS_TIMEOUT_MS,
  );
}

function toPage(sorted: { id: string; distance: number }[], from: number, size: number): NearbyPage {
  return { hits: sorted.slice(from, from + size), hasMore: sorted.length > from + size };
}

/**
 * After a shop write has committed: puts the shop where the DB now says it is, in each type it
 * was or is in. Reading the DB inside the type's lock means the last sync always wins with the
 * latest row. A type whose index is not loaded is left alone (it loads fresh on first use).
 */
export async function syncShopGeo(db: Executor, redis: RedisClient, shopId: string, typeIds: string[]): Promise<void> {
  for (const typeId of new Set(typeIds)) {
    await withLock(geoLock(typeId), { waitMs: env.CACHE_LOCK_WAIT_MS }, async () => {
      if (!(await redis.exists(keys.shopGeoReady(typeId)))) return;
      const row = await findShopById(db, shopId);
      if (row && String(row.type_id) === typeId) await redis.geoadd(keys.shopGeo(typeId), row.x, row.y, shopId);
      else await redis.zrem(keys.shopGeo(typeId), shopId);
    });
  }
}

/** Great-circle distance; Redis uses the same Earth radius (6372797.560856 m). */
export function haversineMetres(x1: number, y1: number, x2: number, y2: number): number {
  const rad = Math.PI / 180;
  const dLat = (y2 - y1) * rad;
  const dLon = (x2 - x1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(y1 * rad) * Math.cos(y2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6372797.560856 * Math.asin(Math.min(1, Math.sqrt(a)));
}
