/**
 * The shop routes in-process, with the app's DB swapped for a real one that records every
 * statement: junk ids and bodies must be refused before a single query (or Redis key) happens.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Database } from '@/lib/db/schema';
import { redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeLocks } from '@/lib/lock';
import { callRoute } from '@/e2e/support/helpers';
import { ShopFixtures } from '@/e2e/support/fixtures/shop';
import type { KyselyPlugin } from 'kysely';
import { cacheFor } from '@/lib/cache';

const recorded = vi.hoisted(() => ({ queries: [] as string[] }));

vi.mock('@/lib/db/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('@/lib/db/client')>();
  const { Kysely, MysqlDialect } = await import('kysely');
  const counting = new Kysely<Database>({
    dialect: new MysqlDialect({ pool: real.createMysqlPool(undefined, 5) }),
    log: (e) => {
      if (e.level === 'query') recorded.queries.push(e.query.sql);
    },
  });
  return { ...real, db: counting, closeDb: async () => void (await Promise.all([counting.destroy(), real.closeDb()])) };
});

const { db, closeDb } = await import('@/lib/db/client');
const { GET: getShopRoute } = await import('@/app/api/shops/[id]/route');
const { GET: getVouchersRoute } = await import('@/app/api/shops/[id]/vouchers/route');
const { GET: listShopsRoute } = await import('@/app/api/shops/route');
const { GET: shopTypesRoute } = await import('@/app/api/shop-types/route');
const { PUT: updateShopRoute } = await import('@/app/api/admin/shops/[id]/route');
const { getShop } = await import('@/lib/shop/shop.service');

const fx = new ShopFixtures(db, redis);
let typeId: string;
let shopId: string;
let owner: { id: string; token: string };

beforeAll(async () => {
  typeId = await fx.type();
  owner = await fx.user('merchant');
  shopId = await fx.shop(typeId, { ownerId: owner.id });
});

afterAll(async () => {
  await fx.cleanup();
  await closeDb();
  await closeLocks();
  await closeRedis();
});

beforeEach(() => {
  recorded.queries.length = 0;
});

const BAD_IDS = ['-1', '0', 'abc', '1'.repeat(30), '1 OR 1=1', '1.5', '01', '9223372036854775808', ''];

describe('bad ids → 400 before any query', () => {
  it.each(BAD_IDS)('GET /api/shops/%j', async (id) => {
    const r = await callRoute(getShopRoute, { params: { id } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('BAD_REQUEST');
    expect(recorded.queries).toEqual([]);
    expect(await redis.exists(keys.shop(id))).toBe(0);
  });

  it.each(BAD_IDS)('GET /api/shops/%j/vouchers', async (id) => {
    const r = await callRoute(getVouchersRoute, { params: { id } });
    expect(r.status).toBe(400);
    expect(recorded.queries).toEqual([]);
  });

  it.each(BAD_IDS)('PUT /api/admin/shops/%j', async (id) => {
    const r = await callRoute(updateShopRoute, { method: 'PUT', params: { id }, token: owner.token, body: { avgPrice: 100 } });
    expect(r.status).toBe(400);
    expect(recorded.queries).toEqual([]);
  });

  it.each([
    ['typeId missing', {}],
    ['typeId junk', { typeId: '1 OR 1=1' }],
    ['typeId 30 digits', { typeId: '1'.repeat(30) }],
    ['page 0', { typeId: '1', page: '0' }],
    ['page junk', { typeId: '1', page: '1;DROP' }],
    ['x without y', { typeId: '1', x: '120.1' }],
    ['latitude out of range', { typeId: '1', x: '120.1', y: '89' }],
    ['x not a number', { typeId: '1', x: '1e3', y: '30' }],
    ['unknown parameter', { typeId: '1', sort: 'name' }],
  ])('GET /api/shops: %s → 400', async (_name, query) => {
    const r = await callRoute(listShopsRoute, { query: query as Record<string, string> });
    expect(r.status).toBe(400);
    expect(recorded.queries).toEqual([]);
  });
});

describe('reads', () => {
  it('a shop, its vouchers, its type list page and the types answer 200', async () => {
    const shop = await callRoute(getShopRoute, { params: { id: shopId } });
    expect(shop.status).toBe(200);
    expect(shop.json.data).toMatchObject({ id: shopId, typeId, avgPrice: 5000, images: ['/shops/1.svg', '/shops/2.svg'] });
    expect((await callRoute(getVouchersRoute, { params: { id: shopId } })).json.data).toEqual([]);
    const list = await callRoute(listShopsRoute, { query: { typeId, x: '120.15', y: '30.25' } });
    expect(list.status).toBe(200);
    expect(list.json.data.items[0].id).toBe(shopId);
    const types = await callRoute(shopTypesRoute);
    expect(types.json.data.find((t: { id: string }) => t.id === typeId).shopCount).toBe(1);
  });

  it('a missing shop → 404; read again → served by the marker, no query', async () => {
    const r = await callRoute(getShopRoute, { params: { id: '8888888888888888888' } });
    expect(r.status).toBe(404);
    recorded.queries.length = 0;
    expect((await callRoute(getShopRoute, { params: { id: '8888888888888888888' } })).status).toBe(404);
    expect(recorded.queries).toEqual([]);
    await redis.del(keys.shop('8888888888888888888'));
  });
});

describe('PUT /api/admin/shops/{id}', () => {
  const put = (id: string, body: unknown, token?: string) => callRoute(updateShopRoute, { method: 'PUT', params: { id }, body, token });

  it('who may edit: nobody 401, consumer 403, another merchant 403, owner 200, admin 200', async () => {
    const consumer = await fx.user('user');
    const other = await fx.user('merchant');
    const admin = await fx.user('admin');
    expect((await put(shopId, { avgPrice: 6000 })).status).toBe(401);
    expect((await put(shopId, { avgPrice: 6000 }, consumer.token)).status).toBe(403);
    const foreign = await put(shopId, { avgPrice: 6000 }, other.token);
    expect(foreign.status).toBe(403);
    expect(foreign.json.error.code).toBe('FORBIDDEN');
    expect((await callRoute(getShopRoute, { params: { id: shopId } })).json.data.avgPrice).toBe(5000);

    const mine = await put(shopId, { avgPrice: 6600, images: ['/shops/3.svg'] }, owner.token);
    expect(mine.status).toBe(200);
    expect(mine.json.data).toMatchObject({ avgPrice: 6600, images: ['/shops/3.svg'] });
    expect((await callRoute(getShopRoute, { params: { id: shopId } })).json.data.avgPrice).toBe(6600);
    expect((await put(shopId, { openHours: '08:00-20:00' }, admin.token)).status).toBe(200);
    expect((await callRoute(getShopRoute, { params: { id: shopId } })).json.data.openHours).toBe('08:00-20:00');
  });

  it.each([
    ['empty patch', {}],
    ['unknown field', { sold: 99999 }],
    ['owner change', { ownerId: '1' }],
    ['bad opening hours', { openHours: '9点-21点' }],
    ['negative price', { avgPrice: -1 }],
    ['fractional fen', { avgPrice: 1.5 }],
    ['x without y', { x: 120.2 }],
    ['script in image url', { images: ['javascript:alert(1)'] }],
    ['type id as number', { typeId: 2 }],
  ])('bad body: %s → 400, no query', async (_name, body) => {
    const r = await put(shopId, body, owner.token);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION');
    expect(recorded.queries).toEqual([]);
  });

  it('a read that starts after an edit answered sees the edit, even joining a slow load this process began before it', async () => {
    const id = await fx.shop(typeId, { ownerId: owner.id });
    await cacheFor(redis).invalidate(keys.shop(id));
    // An earlier read whose MySQL answer is slow: it read the row before the edit below.
    const slow: KyselyPlugin = { transformQuery: (a) => a.node, transformResult: async (a) => (await new Promise((r) => setTimeout(r, 800)), a.result) };
    const earlier = getShop(db.withPlugin(slow), redis, id);
    await new Promise((r) => setTimeout(r, 150));
    const edited = await put(id, { avgPrice: 7700 }, owner.token);
    expect(edited.status).toBe(200);
    // From the answer on, every read shows the edit: this one joins the earlier load (one per key and process).
    const after = await callRoute(getShopRoute, { params: { id } });
    expect(after.json.data.avgPrice).toBe(7700);
    expect((await earlier)?.avgPrice).toBe(7700); // its own store was refused: it answers a load made after the edit
  });

  it('an unknown type → 400; a taken name → 409; a missing shop → 404', async () => {
    const admin = await fx.user('admin');
    expect((await put(shopId, { typeId: '987654321987' }, owner.token)).status).toBe(400);
    const twin = await fx.shop(typeId);
    const twinName = (await callRoute(getShopRoute, { params: { id: twin } })).json.data.name;
    const dup = await put(shopId, { name: twinName }, owner.token);
    expect(dup.status).toBe(409);
    expect((await put('8999999999999999990', { avgPrice: 1 }, admin.token)).status).toBe(404);
  });
});
