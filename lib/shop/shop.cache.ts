/**
 * What the shop domain caches, and how (lib/cache does the mechanics):
 *   cache:shop:{id}            shop detail: "" marker + mutex; hot shops logical expiry
 *   cache:shop-type:{list}     all types with their shop counts: mutex, long TTL
 *   cache:shop-ids:{typeId}    a type's ids, most sold first (default list order): mutex
 *   cache:shop-vouchers:{id}   a shop's on-sale vouchers (live stock is overlaid per read): mutex, short TTL
 * and `afterShopWrite`, the one place every shop write goes through after its commit.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import type { Shop } from '@/lib/db/schema';
import { VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { cacheFor, type CacheSpec } from '@/lib/cache';
import {
  findShopById,
  listShopIdsByType,
  listShopTypesWithCounts,
  listVouchersOfShop,
  shopTypeExists,
} from '@/lib/shop/shop.repository';
import { syncShopGeo } from '@/lib/shop/shop.geo';
import { SHOP_VIEW_SHAPE, toShopView, type ShopTypeView, type ShopView, type VoucherView } from '@/lib/shop/shop.types';

const VOUCHER_TTL_SECONDS = 60;

/** Hot = configured, or in the set `npm run cache:warm` computes (top N by sold). */
export async function isHotShop(redis: RedisClient, id: string): Promise<boolean> {
  return env.CACHE_HOT_SHOP_IDS.includes(id) || (await redis.sismember(keys.hotShops(), id)) === 1;
}

export function shopSpec(db: Executor, redis: RedisClient, id: string): CacheSpec<ShopView> {
  return {
    key: keys.shop(id),
    shape: SHOP_VIEW_SHAPE,
    ttlSeconds: env.CACHE_SHOP_TTL_SECONDS,
    logical: () => isHotShop(redis, id),
    load: async () => {
      const row = await findShopById(db, id);
      return row ? toShopView(row) : null;
    },
  };
}

export function shopTypeListSpec(db: Executor): CacheSpec<ShopTypeView[]> {
  return {
    key: keys.shopTypeList(),
    ttlSeconds: env.CACHE_SHOP_TTL_SECONDS * 4,
    load: async () =>
      (await listShopTypesWithCounts(db)).map((t) => ({ id: String(t.id), name: t.name, icon: t.icon, sort: t.sort, shopCount: Number(t.shop_count) })),
  };
}

export function shopIdsByTypeSpec(db: Executor, typeId: string): CacheSpec<string[]> {
  return {
    key: keys.shopIdsByType(typeId),
    ttlSeconds: env.CACHE_SHOP_TTL_SECONDS,
    load: async () => {
      const ids = await listShopIdsByType(db, typeId);
      return ids.length || (await shopTypeExists(db, typeId)) ? ids : null;
    },
  };
}

/** Vouchers as the DB has them; `remaining` is the DB stock until the live overlay replaces it. */
export function shopVouchersSpec(db: Executor, shopId: string): CacheSpec<VoucherView[]> {
  return {
    key: keys.shopVouchers(shopId),
    ttlSeconds: VOUCHER_TTL_SECONDS,
    load: async () =>
      (await listVouchersOfShop(db, shopId)).map((v) => ({
        id: String(v.id),
        shopId: String(v.shop_id),
        title: v.title,
        subTitle: v.sub_title,
        rules: v.rules,
        payValue: Number(v.pay_value),
        actualValue: Number(v.actual_value),
        type: v.type === VoucherType.SECKILL ? 'seckill' : 'normal',
        seckill:
          v.type === VoucherType.SECKILL && v.begin_time && v.end_time
            ? { beginTime: v.begin_time.toISOString(), endTime: v.end_time.toISOString(), initialStock: v.initial_stock ?? 0, remaining: v.stock ?? 0, live: false }
            : null,
      })),
  };
}

/** For voucher writers (admin): drop a shop's cached voucher list after the DB change commits. */
export async function invalidateShopVouchers(redis: RedisClient, shopId: string): Promise<void> {
  await cacheFor(redis).invalidate(keys.shopVouchers(shopId));
}

/**
 * Every shop write ends here, after its transaction committed: delete the detail entry, and when
 * the type or position changed, the list entries and the GEO positions too. Never throws: the DB
 * is already right; a failed invalidation is retried by lib/cache when Redis is back, and GEO is
 * rebuilt from the DB when its index next reloads.
 */
export async function afterShopWrite(db: Executor, redis: RedisClient, before: Shop | null, after: Shop | null): Promise<void> {
  const id = String((after ?? before)!.id);
  const typeIds = [before?.type_id, after?.type_id].filter((t): t is string => !!t).map(String);
  const typeChanged = before?.type_id !== after?.type_id;
  const moved = typeChanged || before?.x !== after?.x || before?.y !== after?.y;
  const stale = [keys.shop(id)];
  if (typeChanged) stale.push(keys.shopTypeList(), ...typeIds.map((t) => keys.shopIdsByType(t)));
  await cacheFor(redis).invalidate(...stale);
  if (!moved) return;
  try {
    await syncShopGeo(db, redis, id, typeIds);
  } catch (e) {
    log.error({ shopId: id, err: e instanceof Error ? e.message : String(e) }, 'GEO sync after shop write failed; the index reloads from the DB later');
  }
}
