/**
 * Flash-sale keys do not live forever (proof suite): once a sale has ended and its outbox is empty,
 * the sweeper gives every `seckill:{vid}:*` key the grace TTL; a preheat (re-opening or repairing
 * the sale) makes them permanent again. The console's memory figures and the health warning read
 * the real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { sweepOutbox } from '@/lib/seckill/sweeper';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { memoryWarning, redisMemory, saleMemoryBytes } from '@/lib/admin/redis-memory';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';

let f: ConsoleFixture;
beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});
afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const saleKeys = (vid: string) => [keys.seckillMeta(vid), keys.seckillStock(vid), keys.seckillBuyers(vid), keys.seckillPending(vid)];

describe('ended sales', () => {
  it('get the grace TTL once ended with an empty outbox; a preheat keeps them again', async () => {
    const vid = (await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 4 }) })).json.data.id as string;
    await redis.sadd(keys.seckillBuyers(vid), '999999'); // so every kind of key exists
    await redis.hset(keys.seckillPending(vid), 'placeholder', '{}');
    await redis.hdel(keys.seckillPending(vid), 'placeholder');
    expect(await saleMemoryBytes(redis, vid)).toBeGreaterThan(0);

    const deps = { db, redis, publish: async () => {}, staleMs: 1000, claimMs: 1 };
    await sweepOutbox(deps); // still running: nothing expires
    for (const k of saleKeys(vid)) if (await redis.exists(k)) expect(await redis.ttl(k), k).toBe(-1);

    await redis.hset(keys.seckillMeta(vid), 'end', Date.now() - 120_000); // the sale ended two minutes ago
    await redis.sadd(keys.seckillActive(), vid);
    await new Promise((r) => setTimeout(r, 5));
    await sweepOutbox(deps);
    const present = [];
    for (const k of saleKeys(vid)) {
      if (!(await redis.exists(k))) continue;
      present.push(k);
      const ttl = await redis.ttl(k);
      expect(ttl, k).toBeGreaterThan(0);
      expect(ttl, k).toBeLessThanOrEqual(env.SECKILL_ENDED_KEY_TTL_SECONDS);
    }
    expect(present.length).toBeGreaterThanOrEqual(3);
    expect(await redis.sismember(keys.seckillActive(), vid)).toBe(0);

    await preheatVoucher(db, redis, vid);
    for (const k of saleKeys(vid)) if (await redis.exists(k)) expect(await redis.ttl(k), k).toBe(-1);
  });
});

describe('Redis memory', () => {
  it('reads used and max memory, and warns only past the threshold', async () => {
    const m = await redisMemory(redis);
    expect(m.usedBytes).toBeGreaterThan(0);
    expect(memoryWarning({ usedBytes: 900, maxBytes: 1000 }, 0.8, 0)).toMatch(/over 80%/);
    expect(memoryWarning({ usedBytes: 700, maxBytes: 1000 }, 0.8, 0)).toBeUndefined();
    expect(memoryWarning({ usedBytes: 900, maxBytes: 0 }, 0.8, 1000)).toMatch(/over 80%/);
    expect(memoryWarning({ usedBytes: 900, maxBytes: 0 }, 0.8, 0)).toBeUndefined();
  });
});
