/**
 * Fixtures for the lifecycle tests and the bench: a flash sale in a given shop, grabs that are
 * persisted by the real worker, and small readers of the outcome.
 */
import { randomInt } from 'node:crypto';
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { insertSeckillVoucher } from '@/lib/seckill/seckill.repository';
import { grabVoucher } from '@/lib/seckill/grab';
import { readSeckillState } from '@/lib/seckill/state';
import { waitFor } from '@/lib/seckill/testing';
import { orderSnapshots } from '@/lib/order/lifecycle-testing.repository';

export async function createSaleInShop(db: DB, redis: RedisClient, shopId: string, stock: number): Promise<string> {
  const now = Date.now();
  const id = await insertSeckillVoucher(db, {
    shopId,
    title: `测试秒杀券 ${randomInt(0, 1e9)}`,
    payValue: 990,
    actualValue: 5000,
    stock,
    beginTime: new Date(now - 60_000),
    endTime: new Date(now + 3_600_000),
  });
  await preheatVoucher(db, redis, id);
  return id;
}

/** Grabs through the service (each user from its own address, so no per-IP limit), returns the order ids. */
export async function grabAll(db: DB, redis: RedisClient, voucherId: string, userIds: string[], concurrency = 50): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, userIds.length) }, async () => {
      while (next < userIds.length) {
        const i = next++;
        const r = await grabVoucher(db, redis, { voucherId, userId: userIds[i]!, ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
        ids.push(r.orderId);
      }
    }),
  );
  return ids;
}

/** Until the worker has written `n` orders of the voucher and the outbox is empty. */
export async function waitPersisted(db: DB, redis: RedisClient, voucherId: string, n: number, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    `${n} orders persisted`,
    async () => (await readSeckillState(redis, voucherId))?.pending === 0 && (await orderSnapshots(db, voucherId, 0)).length >= n,
    timeoutMs,
    100,
  );
}
