/**
 * LOCK_BACKEND=zookeeper with no ZooKeeper server answering: a console edit, which runs under the
 * voucher lock, is answered 503 SERVICE_UNAVAILABLE with Retry-After (not a 500 carrying the
 * connection error) once its 10 s lock wait is over, and nothing was written.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { closeLocks } from '@/lib/lock';
import { callRoute } from '@/e2e/support/helpers';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { PATCH as patchRoute } from '@/app/api/admin/vouchers/[id]/route';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

// Before lib/env is imported. 2309 is the last port of the ensemble lib/lock/product-locks.test.ts
// starts and stops; nothing listens on it otherwise.
vi.hoisted(() => {
  process.env.LOCK_BACKEND = 'zookeeper';
  process.env.ZOOKEEPER_CONNECT = '127.0.0.1:2309';
});

let f: ConsoleFixture;
beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});
afterAll(async () => {
  await closeLocks();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

it('a console edit while the lock service is unreachable: 503 after the lock wait, no change', async () => {
  const created = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 10 }) });
  expect(created.status).toBe(201);
  const id = created.json.data.id as string;

  const startedAt = Date.now();
  const r = await callRoute(patchRoute, { method: 'PATCH', token: f.merchantA.token, params: { id }, body: { stock: 20 } });
  expect(r.status).toBe(503);
  expect(r.json.error.code).toBe('SERVICE_UNAVAILABLE');
  expect(r.headers.get('retry-after')).toBe('2');
  expect(JSON.stringify(r.json)).not.toContain('2309');
  expect(Date.now() - startedAt).toBeGreaterThanOrEqual(9_000); // it waited for the lock, as for a busy one

  const row = await db.selectFrom('tb_seckill_voucher').select('stock').where('voucher_id', '=', id as never).executeTakeFirst();
  expect(Number(row?.stock)).toBe(10);
});
