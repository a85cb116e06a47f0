/**
 * Preheat / repair and add-stock in the middle of a live sale, against real concurrent grabs:
 * Redis is rebuilt from MySQL without ever selling a unit twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { addSeckillStock, preheatVoucher } from '@/lib/seckill/preheat';
import { readSeckillState } from '@/lib/seckill/state';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { createTestUsers, createTestVoucher, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';

const suite = orderWorkerSuite({ options: { batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 2000 }, waitOutKeys: true });
beforeAll(suite.start);
afterAll(suite.end);

const grab = (u: TestUser, voucherId: string, i: number) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.77.${i >> 8}.${i & 255}` } });

const drained = (voucherId: string) =>
  waitFor('the drain', async () => {
    const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
    return s !== null && s.pending === 0 && c?.orders === s.buyers;
  });

describe('preheat and add-stock during a live sale', () => {
  it('reports null before the first preheat, then the DB numbers', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 7, preheat: false });
    expect(await readSeckillState(redis, voucherId)).toBeNull();
    expect(await preheatVoucher(db, redis, voucherId)).toEqual({ initial: 7, remaining: 7, buyers: 0 });
    const s = await readSeckillState(redis, voucherId);
    expect(s).toMatchObject({ initial: 7, remaining: 7, buyers: 0, pending: 0 });
    expect(Date.parse(s!.endTime!)).toBeGreaterThan(Date.parse(s!.beginTime!));
    expect(await redis.sismember(keys.seckillActive(), voucherId)).toBe(1);
  });

  it('preheats racing 400 grabs and a stock top-up: every unit sold once, nobody twice', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 100 });
    const users = await createTestUsers(db, redis, 400);
    const [results] = await Promise.all([
      Promise.all(users.map((u, i) => grab(u, voucherId, i))),
      Promise.all(Array.from({ length: 5 }, () => preheatVoucher(db, redis, voucherId))),
      addSeckillStock(db, redis, voucherId, 50),
    ]);
    // Whoever was told "sold out" before the top-up landed tries again once.
    const retry = await Promise.all(users.map((u, i) => (results[i]!.status === 410 ? grab(u, voucherId, i) : null)));
    const accepted = [...results, ...retry].filter((r) => r?.status === 200);
    expect(accepted).toHaveLength(150);
    await drained(voucherId);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ initial: 150, dbOrders: 150, redisStock: 0, dbStock: 0 });
  });

  it('a preheat waits for a stock change in flight instead of writing back the old total', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 10 });
    let preheat: Promise<unknown> | undefined;
    await db.transaction().execute(async (trx) => {
      // An admin edit raising the total holds the row, uncommitted...
      await trx.updateTable('tb_seckill_voucher').set({ initial_stock: 15, stock: 15 }).where('voucher_id', '=', voucherId).execute();
      preheat = preheatVoucher(db, redis, voucherId);
      await new Promise((r) => setTimeout(r, 300));
      // ...so the preheat has not read (let alone written) the old total meanwhile.
      expect(await readSeckillState(redis, voucherId)).toMatchObject({ initial: 10 });
    });
    await expect(preheat).resolves.toEqual({ initial: 15, remaining: 15, buyers: 0 });
    await assertInvariants(voucherId, { drained: true });
  });

  it('Redis loses the voucher mid-sale: the next grab rebuilds it from MySQL, earlier buyers stay buyers', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 10 });
    const users = await createTestUsers(db, redis, 6);
    for (let i = 0; i < 4; i++) expect((await grab(users[i]!, voucherId, i)).status).toBe(200);
    await drained(voucherId);
    await redis.del(keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId));

    expect((await grab(users[0]!, voucherId, 0)).json.error.code).toBe('ALREADY_BOUGHT');
    expect(await readSeckillState(redis, voucherId)).toMatchObject({ initial: 10, remaining: 6, buyers: 4 });
    expect((await grab(users[4]!, voucherId, 4)).status).toBe(200);
    await drained(voucherId);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 5, redisStock: 5, dbStock: 5 });
  });

  it('add-stock validates its amount and the voucher', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1 });
    await expect(addSeckillStock(db, redis, voucherId, 0)).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(addSeckillStock(db, redis, '9223372036854775806', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(preheatVoucher(db, redis, '9223372036854775806')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
