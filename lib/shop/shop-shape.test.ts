/**
 * A shop cached before ShopView had a field is not served without it: the entry carries the
 * view's shape version (docs/shop-cache.md#shape-version), and an entry of another shape (here,
 * one written the old way, with no shape and without `openHours`) is rebuilt from MySQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeLocks } from '@/lib/lock';
import { encodeEntry } from '@/lib/cache/entry';
import { ShopFixtures } from '@/e2e/support/fixtures/shop';
import { getShop } from '@/lib/shop/shop.service';
import { SHOP_VIEW_SHAPE } from '@/lib/shop/shop.types';

const fx = new ShopFixtures(db, redis);
let shopId: string;

beforeAll(async () => {
  shopId = await fx.shop(await fx.type('形'));
});

afterAll(async () => {
  await fx.cleanup();
  await closeDb();
  await closeLocks();
  await closeRedis();
});

describe('shop cache entries carry the view shape', () => {
  it('an entry cached before a field existed is rebuilt, not served without it', async () => {
    const fresh = await getShop(db, redis, shopId);
    expect(fresh?.openHours).toEqual(expect.any(String));
    // What a process of the previous release wrote: no shape, and the view without openHours.
    const { openHours: _gone, ...older } = fresh!;
    for (const expiresAt of [0, Date.now() + 60_000]) {
      await redis.set(keys.shop(shopId), encodeEntry({ ...older, name: 'served from the old entry' }, expiresAt), 'PX', 60_000);
      const read = await getShop(db, redis, shopId);
      expect(read).toEqual(fresh);
      // and the rebuilt entry is of today's shape, served from Redis from now on
      expect(JSON.parse((await redis.get(keys.shop(shopId)))!).s).toBe(SHOP_VIEW_SHAPE);
    }
  });

  it('an entry of the current shape is served as it is (no rebuild)', async () => {
    await getShop(db, redis, shopId);
    const raw = JSON.parse((await redis.get(keys.shop(shopId)))!);
    await redis.set(keys.shop(shopId), encodeEntry({ ...raw.d, name: 'from redis' }, 0, SHOP_VIEW_SHAPE), 'PX', 60_000);
    expect((await getShop(db, redis, shopId))?.name).toBe('from redis');
  });
});
