/**
 * The shop service against the real MySQL and Redis: DB loads counted by statement, several
 * "instances" (own Redis connection, own cache client), a real redis-server killed mid-test.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@/lib/redis/types';
import { db, closeDb } from '@/lib/db/client';
import { createRedis, redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeLocks } from '@/lib/lock';
import { startRedisServer } from '@/e2e/support/redis-server';
import { countingDb, ShopFixtures } from '@/e2e/support/fixtures/shop';
import { getShop, getShopVouchers, listShops, listShopTypes, updateShop } from '@/lib/shop/shop.service';
import type { SessionUser } from '@/lib/auth/session';

const fx = new ShopFixtures(db, redis);
const counted = countingDb();
const conns: RedisClient[] = [];
let typeA: string;
let typeB: string;
let owner: SessionUser;

const shopSelects = () => counted.queries.filter((q) => /from `tb_shop`/.test(q)).length;

beforeAll(async () => {
  typeA = await fx.type('甲');
  typeB = await fx.type('乙');
  const u = await fx.user('merchant');
  owner = { id: u.id, nickName: 'm', icon: '', role: 'merchant' };
});

afterAll(async () => {
  await fx.cleanup();
  await counted.db.destroy();
  // disconnect, not quit: QUIT to a killed server can wait forever in the offline queue.
  for (const c of conns) c.disconnect();
  await closeDb();
  await closeLocks();
  await closeRedis();
});

function connections(n: number): RedisClient[] {
  const out = Array.from({ length: n }, () => createRedis());
  conns.push(...out);
  return out;
}

describe('shop detail cache', () => {
  it('1000 concurrent cold reads of one shop from 10 instances → exactly one DB load', async () => {
    const id = await fx.shop(typeA);
    const instances = connections(10);
    counted.queries.length = 0;
    const shops = await Promise.all(Array.from({ length: 1000 }, (_, i) => getShop(counted.db, instances[i % 10]!, id)));
    expect(shopSelects()).toBe(1);
    expect(shops.every((s) => s?.id === id && s.name.startsWith('测试店'))).toBe(true);
  });

  it('1000 reads of a missing id → one DB load, then the "" marker', async () => {
    const missing = String(9_000_000_000_000_000_000n + BigInt(randomInt(0, 1_000_000_000)));
    const instances = connections(4);
    counted.queries.length = 0;
    const shops = await Promise.all(Array.from({ length: 1000 }, (_, i) => getShop(counted.db, instances[i % 4]!, missing)));
    expect(shops.every((s) => s === null)).toBe(true);
    expect(shopSelects()).toBe(1);
    expect(await redis.get(keys.shop(missing))).toBe('');
    expect(await redis.pttl(keys.shop(missing))).toBeLessThanOrEqual(72_000); // 60 s + ≤ 20 % jitter
    await redis.del(keys.shop(missing));
  });

  it('a hot shop is stored with logical expiry and no near TTL', async () => {
    const id = await fx.shop(typeA);
    await redis.sadd(keys.hotShops(), id);
    try {
      await getShop(db, redis, id);
      const entry = JSON.parse((await redis.get(keys.shop(id)))!) as { e: number };
      expect(entry.e).toBeGreaterThan(Date.now());
      expect(await redis.pttl(keys.shop(id))).toBeGreaterThan(24 * 3600_000);
    } finally {
      await redis.srem(keys.hotShops(), id);
    }
  });

  it('an update by the owner is seen by the very next read, and audited', async () => {
    const id = await fx.shop(typeA, { ownerId: owner.id });
    expect((await getShop(db, redis, id))?.avgPrice).toBe(5000);
    const updated = await updateShop(db, redis, owner, id, { avgPrice: 8800, openHours: '09:00-21:00' });
    expect(updated.avgPrice).toBe(8800);
    const next = await getShop(db, redis, id);
    expect(next?.avgPrice).toBe(8800);
    expect(next?.openHours).toBe('09:00-21:00');
    const audit = await db.selectFrom('tb_audit_log').selectAll().where('target_type', '=', 'shop').where('target_id', '=', id).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_id).toBe(owner.id);
    expect(JSON.parse(audit[0]!.before_json!).avgPrice).toBe(5000);
    expect(JSON.parse(audit[0]!.after_json!).avgPrice).toBe(8800);
  });

  it('another merchant may not edit the shop; nothing changes', async () => {
    const id = await fx.shop(typeA, { ownerId: owner.id });
    const other = await fx.user('merchant');
    await expect(updateShop(db, redis, { id: other.id, nickName: 'x', icon: '', role: 'merchant' }, id, { avgPrice: 1 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await db.selectFrom('tb_shop').select('avg_price').where('id', '=', id).executeTakeFirstOrThrow()).avg_price).toBe('5000');
  });
});

describe('lists and GEO', () => {
  it('pages a type by sold, and nearest first when a position is given', async () => {
    const ids: string[] = [];
    // 12 shops on a line going east; sold decreasing, so both orders agree on the first page.
    for (let i = 0; i < 12; i++) ids.push(await fx.shop(typeB, { x: 120.1 + i * 0.01, y: 30.25, sold: 1000 - i }));
    const p1 = await listShops(db, redis, { typeId: typeB, page: 1 });
    const p2 = await listShops(db, redis, { typeId: typeB, page: 2 });
    expect(p1.items.map((s) => s.id)).toEqual(ids.slice(0, 10));
    expect(p1.hasMore).toBe(true);
    expect(p2.items.map((s) => s.id)).toEqual(ids.slice(10));
    expect(p2.hasMore).toBe(false);

    // Standing at the east end: the last shop is nearest.
    const near = await listShops(db, redis, { typeId: typeB, page: 1, x: 120.1 + 11 * 0.01, y: 30.25 });
    expect(near.items.map((s) => s.id)).toEqual([...ids].reverse().slice(0, 10));
    expect(near.items[0]!.distance).toBeLessThan(5);
    expect(near.items[1]!.distance).toBeGreaterThan(900);
    const near2 = await listShops(db, redis, { typeId: typeB, page: 2, x: 120.1 + 11 * 0.01, y: 30.25 });
    expect(near2.items.map((s) => s.id)).toEqual([ids[1], ids[0]]);
  });

  it('moving a shop to another type updates GEO, the id lists and the type counts', async () => {
    const id = await fx.shop(typeA, { ownerId: owner.id, x: 121.5, y: 31.2 });
    const countOf = async (t: string) => (await listShopTypes(db, redis)).find((x) => x.id === t)!.shopCount;
    const here = { page: 1, x: 121.5, y: 31.2 };
    expect((await listShops(db, redis, { typeId: typeA, ...here })).items[0]!.id).toBe(id);
    const [beforeA, beforeB] = [await countOf(typeA), await countOf(typeB)];
    await listShops(db, redis, { typeId: typeB, ...here }); // load B's index before the move

    await updateShop(db, redis, owner, id, { typeId: typeB, x: 121.6, y: 31.3 });
    expect((await listShops(db, redis, { typeId: typeA, ...here })).items.some((s) => s.id === id)).toBe(false);
    const inB = await listShops(db, redis, { typeId: typeB, page: 1, x: 121.6, y: 31.3 });
    expect(inB.items[0]!.id).toBe(id);
    expect(inB.items[0]!.distance).toBeLessThan(5);
    const listed = [...(await listShops(db, redis, { typeId: typeB, page: 1 })).items, ...(await listShops(db, redis, { typeId: typeB, page: 2 })).items];
    expect(listed.map((s) => s.id)).toContain(id);
    expect(await countOf(typeA)).toBe(beforeA - 1);
    expect(await countOf(typeB)).toBe(beforeB + 1);
  });

  it('an unknown type is a 404, not an empty GEO key', async () => {
    await expect(listShops(db, redis, { typeId: '987654321987', page: 1, x: 120, y: 30 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await redis.exists(keys.shopGeoReady('987654321987'))).toBe(0);
  });
});

describe('vouchers', () => {
  it('seckill vouchers show the DB stock until preheated, then the live Redis stock', async () => {
    const shop = await fx.shop(typeA);
    await fx.voucher(shop);
    const begin = new Date(Date.now() - 3600_000);
    const end = new Date(Date.now() + 3600_000);
    const vid = await fx.voucher(shop, { stock: 40, begin, end });
    const before = await getShopVouchers(db, redis, shop);
    expect(before).toHaveLength(2);
    const sk = before.find((v) => v.id === vid)!;
    expect(sk.type).toBe('seckill');
    expect(sk.seckill).toMatchObject({ remaining: 40, initialStock: 40, live: false, beginTime: begin.toISOString() });
    expect(before.find((v) => v.id !== vid)!.seckill).toBeNull();

    // What the seckill preheat writes (docs/security.md#redis-keys).
    await redis.hset(keys.seckillMeta(vid), { initial: 40, begin: begin.getTime(), end: end.getTime() });
    await redis.set(keys.seckillStock(vid), 17);
    const live = (await getShopVouchers(db, redis, shop)).find((v) => v.id === vid)!;
    expect(live.seckill).toMatchObject({ remaining: 17, initialStock: 40, live: true });
  });

  it('vouchers of a missing shop → NOT_FOUND', async () => {
    await expect(getShopVouchers(db, redis, '8999999999999999999')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('Redis stopped (a real redis-server, killed)', () => {
  it('detail, lists by distance and vouchers still answer from the DB', async () => {
    const shop = await fx.shop(typeA, { x: 122.0, y: 29.9 });
    await fx.voucher(shop, { stock: 5, begin: new Date(Date.now() - 1000), end: new Date(Date.now() + 3600_000) });
    const server = await startRedisServer();
    const doomed = createRedis(server.url);
    try {
      expect((await getShop(db, doomed, shop))?.id).toBe(shop);
      expect((await listShops(db, doomed, { typeId: typeA, page: 1, x: 122.0, y: 29.9 })).items[0]!.id).toBe(shop);
      await server.kill();

      counted.queries.length = 0;
      expect((await getShop(counted.db, doomed, shop))?.id).toBe(shop);
      expect(shopSelects()).toBeGreaterThan(0); // really served by the DB
      const near = await listShops(counted.db, doomed, { typeId: typeA, page: 1, x: 122.0, y: 29.9 });
      expect(near.items[0]!.id).toBe(shop);
      expect(near.items[0]!.distance).toBeLessThan(5);
      const vouchers = await getShopVouchers(counted.db, doomed, shop);
      expect(vouchers[0]!.seckill?.remaining).toBe(5);
    } finally {
      await server.kill();
      doomed.disconnect();
    }
  });
});
