/**
 * Shops: every read goes through the cache (lib/cache via shop.cache.ts), every write through
 * updateShop → afterShopWrite. Services take the DB and the Redis they should use, so tests can
 * hand in a counting DB or a Redis that is about to die.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB, Executor } from '@/lib/db/client';
import type { ShopUpdate } from '@/lib/db/schema';
import type { SessionUser } from '@/lib/auth/session';
import { AppError, notFound } from '@/lib/errors';
import { idSchema } from '@/lib/http/parse';
import { keys } from '@/lib/redis/keys';
import { cacheFor } from '@/lib/cache';
import { findShopById, findShopForUpdate, shopTypeExists, updateShopRow } from '@/lib/shop/shop.repository';
import { recordAudit } from '@/lib/audit/audit';
import { afterShopWrite, shopIdsByTypeSpec, shopSpec, shopTypeListSpec, shopVouchersSpec } from '@/lib/shop/shop.cache';
import { nearbyShops } from '@/lib/shop/shop.geo';
import type { ShopListQuery, ShopPatch } from '@/lib/shop/shop.schema';
import { toShopView, type ShopListItem, type ShopPage, type ShopTypeView, type ShopView, type VoucherView } from '@/lib/shop/shop.types';
import { bucketCount, knownBucketCount } from '@/lib/seckill/buckets/count';
import { bucketTags } from '@/lib/seckill/buckets/tags';

export const SHOP_PAGE_SIZE = 10;

/** Ids are checked before any lookup: a junk id costs neither a Redis key nor a query. */
function assertId(id: string, what: string): void {
  if (!idSchema.safeParse(id).success) throw new AppError('BAD_REQUEST', `${what} id 不合法`);
}

export async function getShop(db: Executor, redis: RedisClient, id: string): Promise<ShopView | null> {
  assertId(id, '商铺');
  return cacheFor(redis).get(shopSpec(db, redis, id));
}

export async function getShopOrThrow(db: Executor, redis: RedisClient, id: string): Promise<ShopView> {
  const shop = await getShop(db, redis, id);
  if (!shop) throw notFound('商铺');
  return shop;
}

export async function listShopTypes(db: Executor, redis: RedisClient): Promise<ShopTypeView[]> {
  return (await cacheFor(redis).get(shopTypeListSpec(db))) ?? [];
}

export async function listShops(db: Executor, redis: RedisClient, q: ShopListQuery): Promise<ShopPage> {
  assertId(q.typeId, '分类');
  // Also the existence check: an unknown type is cached as the "" marker, never a GEO key.
  const ids = await cacheFor(redis).get(shopIdsByTypeSpec(db, q.typeId));
  if (!ids) throw notFound('分类');
  const from = (q.page - 1) * SHOP_PAGE_SIZE;
  let hits: { id: string; distance?: number }[];
  let hasMore: boolean;
  if (q.x !== undefined && q.y !== undefined) {
    ({ hits, hasMore } = await nearbyShops(db, redis, q.typeId, q.x, q.y, q.page, SHOP_PAGE_SIZE));
  } else {
    hits = ids.slice(from, from + SHOP_PAGE_SIZE).map((id) => ({ id }));
    hasMore = ids.length > from + SHOP_PAGE_SIZE;
  }
  const shops = await Promise.all(hits.map((h) => getShop(db, redis, h.id)));
  const items: ShopListItem[] = [];
  shops.forEach((s, i) => {
    const distance = hits[i]!.distance;
    if (s) items.push(distance === undefined ? s : { ...s, distance });
  });
  return { items, page: q.page, hasMore };
}

/** A shop's on-sale vouchers; seckill ones carry the live Redis stock once preheated. */
export async function getShopVouchers(db: Executor, redis: RedisClient, shopId: string): Promise<VoucherView[]> {
  await getShopOrThrow(db, redis, shopId);
  const vouchers = (await cacheFor(redis).get(shopVouchersSpec(db, shopId))) ?? [];
  return overlayLiveStock(redis, vouchers);
}

async function overlayLiveStock(redis: RedisClient, vouchers: VoucherView[]): Promise<VoucherView[]> {
  const seckill = vouchers.filter((v) => v.seckill);
  if (!seckill.length) return vouchers;
  // One transaction per voucher (per stock bucket of a bucketed one, docs/buckets.md): its keys
  // share one slot, different vouchers and buckets may not.
  const readOne = async (tag: string) => {
    const res = await redis.multi().hmget(keys.seckillMeta(tag), 'initial', 'begin', 'end').get(keys.seckillStock(tag)).exec();
    const [initial, begin, end] = (res?.[0]?.[1] as (string | null)[] | undefined) ?? [];
    return { initial, begin, end, remaining: Math.max(0, Number(res?.[1]?.[1] ?? 0)) };
  };
  const readVoucher = async (vid: string) => {
    const n = knownBucketCount(vid) ?? (await bucketCount(redis, vid));
    if (n === 1) return readOne(vid);
    const parts = await Promise.all(bucketTags(vid, n).map(readOne));
    if (parts.some((p) => !p.initial)) return { ...parts[0]!, initial: null };
    // Σ shares: a unit in the middle of a stock move is briefly in neither (the page shows it a tick later).
    return { ...parts[0]!, initial: String(parts.reduce((a, p) => a + Number(p.initial), 0)), remaining: parts.reduce((a, p) => a + p.remaining, 0) };
  };
  const live = await cacheFor(redis).withFallback(
    'seckill live stock',
    () => Promise.all(seckill.map((v) => readVoucher(v.id))),
    async () => null, // Redis down: the DB numbers the list already carries
  );
  if (!live) return vouchers;
  const byId = new Map(seckill.map((v, i) => [v.id, live[i]]));
  return vouchers.map((v) => {
    const res = byId.get(v.id);
    const { initial, begin, end } = res ?? {};
    if (!v.seckill || !initial) return v; // not preheated: DB stock
    return {
      ...v,
      seckill: {
        initialStock: Number(initial),
        remaining: res!.remaining,
        beginTime: begin ? new Date(Number(begin)).toISOString() : v.seckill.beginTime,
        endTime: end ? new Date(Number(end)).toISOString() : v.seckill.endTime,
        live: true,
      },
    };
  });
}

function toRow(p: ShopPatch): ShopUpdate {
  const row: ShopUpdate = {};
  if (p.name !== undefined) row.name = p.name;
  if (p.typeId !== undefined) row.type_id = p.typeId;
  if (p.images !== undefined) row.images = p.images.join(',');
  if (p.area !== undefined) row.area = p.area;
  if (p.address !== undefined) row.address = p.address;
  if (p.x !== undefined) row.x = p.x;
  if (p.y !== undefined) row.y = p.y;
  if (p.avgPrice !== undefined) row.avg_price = p.avgPrice;
  if (p.openHours !== undefined) row.open_hours = p.openHours;
  return row;
}

/**
 * The owning merchant or an admin edits a shop: the row (locked), the audit entry, commit; then
 * the caches and the GEO index follow (afterShopWrite) — DB first, then delete the cache.
 */
export async function updateShop(db: DB, redis: RedisClient, actor: SessionUser, id: string, patch: ShopPatch): Promise<ShopView> {
  assertId(id, '商铺');
  const { before, after } = await db.transaction().execute(async (trx) => {
    const before = await findShopForUpdate(trx, id);
    if (!before) throw notFound('商铺');
    if (actor.role !== 'admin' && String(before.owner_id) !== actor.id) throw new AppError('FORBIDDEN', '只能修改自己的店铺');
    if (patch.typeId !== undefined && patch.typeId !== String(before.type_id) && !(await shopTypeExists(trx, patch.typeId))) {
      throw new AppError('VALIDATION', '分类不存在', { fields: { typeId: '分类不存在' } });
    }
    try {
      await updateShopRow(trx, id, toRow(patch));
    } catch (e) {
      if ((e as { code?: string }).code === 'ER_DUP_ENTRY') throw new AppError('CONFLICT', '店名已被使用', { fields: { name: '店名已被使用' } });
      throw e;
    }
    const after = (await findShopById(trx, id))!;
    await recordAudit(trx, { actorId: actor.id, action: 'shop.update', targetType: 'shop', targetId: id, before: toShopView(before), after: toShopView(after) });
    return { before, after };
  });
  await afterShopWrite(db, redis, before, after);
  return toShopView(after);
}
