/**
 * Buy → cancel must not be free (proof suite). A flash-sale unit given back by its buyer (cancel,
 * payment timeout, refund) is forfeited: the grab script refuses that user with FORFEITED, under
 * concurrency too, and the forfeit set survives Redis losing it (preheat rebuilds it from MySQL).
 * Normal vouchers: cancelled-in-24h plus unpaid orders of one voucher are capped per user, decided
 * under the user's row lock, so parallel buy + cancel loops from one account stop at the cap.
 * The grabs go through the grab route, and through the hot server with TEST_DOOR=hot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeMq } from '@/lib/mq/connection';
import { env } from '@/lib/env';
import { VoucherStatus } from '@/lib/db/schema';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { POST as buyRoute } from '@/app/api/vouchers/[id]/buy/route';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { createTestUsers, waitFor, waitOutShortLivedKeys, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createSaleInShop } from '@/e2e/support/fixtures/order-lifecycle';
import { insertNormalVoucher } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { expireEndedSale } from '@/lib/seckill/sale-expiry';
import { readSeckillState } from '@/lib/seckill/state';
import { assertInvariants } from '@/lib/seckill/invariants';

let f: ConsoleFixture;
let worker: OrderWorker;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1000 });
});
afterAll(async () => {
  await worker.stop();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

let ipSeq = 0;
/** Each call from a fresh address, so only the per-user limits apply. */
const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `198.18.${(++ipSeq >> 8) & 255}.${ipSeq & 255}` } });
const cancel = (u: TestUser, id: string) => callRoute(cancelRoute, { method: 'POST', token: u.token, params: { id } });
const persisted = (id: string) => waitFor(`order ${id} persisted`, async () => (await db.selectFrom('tb_voucher_order').select('id').where('id', '=', id).executeTakeFirst()) !== undefined, 30_000);
const returned = (id: string) =>
  waitFor(`unit of ${id} back in Redis`, async () => (await db.selectFrom('tb_voucher_order').select('stock_return').where('id', '=', id).executeTakeFirstOrThrow()).stock_return === 2, 30_000);
const ordersOf = async (voucherId: string, userId: string) =>
  Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM tb_voucher_order WHERE voucher_id = ${voucherId} AND user_id = ${userId}`.execute(db)).rows[0]!.n);

/** Grab, wait until the worker wrote it, cancel, wait until the unit is back on sale. */
async function grabAndCancel(u: TestUser, voucherId: string): Promise<string> {
  const g = await grab(u, voucherId);
  expect(g.status, JSON.stringify(g.json)).toBe(200);
  const id = g.json.data.orderId as string;
  await persisted(id);
  expect((await cancel(u, id)).status).toBe(200);
  await returned(id);
  return id;
}

describe('flash sale: a unit given back is forfeited', () => {
  it('grab → cancel → grab again: 409 FORFEITED with its own message, the unit stays on sale for others', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 2);
    const [a, b] = await createTestUsers(db, redis, 2);
    await grabAndCancel(a!, voucherId);
    const again = await grab(a!, voucherId);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('FORFEITED');
    expect(again.json.error.message).toMatch(/取消/);
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(2);
    expect((await grab(b!, voucherId)).status).toBe(200);
    expect(await ordersOf(voucherId, a!.userId)).toBe(1);
  });

  it('20 buyers cancel at once, then all grab again at once: every re-grab is refused, the stock is whole', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 20);
    const users = await createTestUsers(db, redis, 20);
    const firsts = await Promise.all(users.map((u) => grab(u, voucherId)));
    expect(firsts.map((r) => r.status)).toEqual(Array(20).fill(200));
    const ids = firsts.map((r) => r.json.data.orderId as string);
    await Promise.all(ids.map(persisted));
    expect((await Promise.all(users.map((u, i) => cancel(u, ids[i]!)))).map((r) => r.status)).toEqual(Array(20).fill(200));
    await Promise.all(ids.map(returned));
    const again = await Promise.all(users.flatMap((u) => [grab(u, voucherId), grab(u, voucherId), grab(u, voucherId)]));
    expect(again.map((r) => r.json?.error?.code)).toEqual(Array(60).fill('FORFEITED'));
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(20);
  });

  it('parallel grab → cancel → grab loops from one account end with one order', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 10);
    const [a] = await createTestUsers(db, redis, 1);
    const codes: string[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let round = 0; round < 3; round++) {
          const g = await grab(a!, voucherId);
          if (g.status !== 200) {
            codes.push(g.json.error.code as string);
            await new Promise((r) => setTimeout(r, 300));
            continue;
          }
          const id = g.json.data.orderId as string;
          await persisted(id);
          await cancel(a!, id);
          await returned(id);
        }
      }),
    );
    expect(codes).toContain('FORFEITED');
    expect(await ordersOf(voucherId, a!.userId)).toBe(1);
  });

  it('Redis losing the forfeit set: a preheat rebuilds it from the cancelled orders; sale expiry covers it', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 3);
    const [a] = await createTestUsers(db, redis, 1);
    await grabAndCancel(a!, voucherId);
    await redis.del(keys.seckillForfeit(voucherId));
    await preheatVoucher(db, redis, voucherId);
    expect(await redis.sismember(keys.seckillForfeit(voucherId), a!.userId)).toBe(1);
    expect((await grab(a!, voucherId)).json.error.code).toBe('FORFEITED');
    await expireEndedSale(redis, voucherId, 120);
    expect(await redis.ttl(keys.seckillForfeit(voucherId))).toBeGreaterThan(0);
    await preheatVoucher(db, redis, voucherId); // a re-opened sale keeps it
    expect(await redis.ttl(keys.seckillForfeit(voucherId))).toBe(-1);
  });

  it('Redis forgetting a return (a failover to a replica behind): a preheat puts the unit back on sale, the buyer stays forfeited', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 2);
    const [a, b, c] = await createTestUsers(db, redis, 3);
    const orderId = await grabAndCancel(a!, voucherId);
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(2);
    // Redis as it was before the return ran: A a buyer again, the unit taken, the return unknown.
    await redis.multi().sadd(keys.seckillBuyers(voucherId), a!.userId).srem(keys.seckillForfeit(voucherId), a!.userId).srem(keys.seckillReturned(voucherId), orderId).decr(keys.seckillStock(voucherId)).exec();
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(1);
    await preheatVoucher(db, redis, voucherId);
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(2);
    expect(await redis.sismember(keys.seckillBuyers(voucherId), a!.userId)).toBe(0);
    expect((await grab(a!, voucherId)).json.error.code).toBe('FORFEITED');
    // Both units sell.
    for (const u of [b!, c!]) expect((await grab(u, voucherId)).status).toBe(200);
    await waitFor('orders persisted', async () => (await readSeckillState(redis, voucherId))?.pending === 0);
    await assertInvariants(voucherId, { drained: true });
  });

  it('a unit given back in an ended sale\'s grace period (its keys already expiring) leaves every key of the sale expiring', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 2);
    const [a] = await createTestUsers(db, redis, 1);
    const g = await grab(a!, voucherId);
    expect(g.status).toBe(200);
    await persisted(g.json.data.orderId);
    // What the sweeper does once a sale has ended and its outbox is empty; then a late cancel or payment timeout.
    await expireEndedSale(redis, voucherId, 600);
    expect((await cancel(a!, g.json.data.orderId)).status).toBe(200);
    await returned(g.json.data.orderId);
    // The two sets the return made, and every other key of the sale there is (-2: none), expire.
    for (const k of [keys.seckillReturned(voucherId), keys.seckillForfeit(voucherId)]) expect(await redis.ttl(k), k).toBeGreaterThan(0);
    for (const k of [keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId)]) expect(await redis.ttl(k), k).not.toBe(-1);
  });

  it('a unit given back while the sale is not in Redis (its keys expired after the end, or lost) makes no key there, none would ever expire; a preheat counts it from MySQL', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 1);
    const [a] = await createTestUsers(db, redis, 1);
    const g = await grab(a!, voucherId);
    expect(g.status).toBe(200);
    await persisted(g.json.data.orderId);
    // The sale's keys are gone, as sale expiry does a while after the end (here at once, the sale still on).
    await expireEndedSale(redis, voucherId, 1);
    await waitFor('the sale left Redis', async () => (await redis.exists(keys.seckillMeta(voucherId), keys.seckillBuyers(voucherId))) === 0, 5000, 100);
    expect((await cancel(a!, g.json.data.orderId)).status).toBe(200);
    await returned(g.json.data.orderId);
    for (const k of [keys.seckillReturned(voucherId), keys.seckillForfeit(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId)]) {
      expect(await redis.exists(k), k).toBe(0);
    }
    // Brought back, the sale has the unit on sale and the buyer forfeited, both from MySQL.
    await preheatVoucher(db, redis, voucherId);
    expect((await readSeckillState(redis, voucherId))!.remaining).toBe(1);
    expect(await redis.sismember(keys.seckillForfeit(voucherId), a!.userId)).toBe(1);
  });
});

describe('normal vouchers: buy → cancel is capped per user and voucher', () => {
  it(`12 parallel buy → cancel loops from one account stop at ${env.NORMAL_VOUCHER_CANCEL_CAP} cancellations`, async () => {
    const voucherId = await insertNormalVoucher(db, f.shopA);
    const [a] = await createTestUsers(db, redis, 1);
    const refusals: string[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let round = 0; round < 5; round++) {
          const b = await callRoute(buyRoute, { method: 'POST', token: a!.token, params: { id: voucherId } });
          if (b.status !== 200) {
            refusals.push(b.json.error.code as string);
            return;
          }
          await cancel(a!, b.json.data.id as string);
        }
      }),
    );
    const rows = await db.selectFrom('tb_voucher_order').select(['status']).where('voucher_id', '=', voucherId).where('user_id', '=', a!.userId).execute();
    expect(rows.length).toBe(env.NORMAL_VOUCHER_CANCEL_CAP);
    expect(rows.every((r) => r.status === 4)).toBe(true);
    expect(refusals.length).toBe(12);
    expect(new Set(refusals)).toEqual(new Set(['CANCEL_LIMIT']));
    const next = await callRoute(buyRoute, { method: 'POST', token: a!.token, params: { id: voucherId } });
    expect(next.status).toBe(409);
    expect(next.json.error).toMatchObject({ code: 'CANCEL_LIMIT' });
    expect(next.json.error.message).toMatch(/取消/);
    // Another voucher, and another user, are not affected.
    const other = await insertNormalVoucher(db, f.shopA);
    expect((await callRoute(buyRoute, { method: 'POST', token: a!.token, params: { id: other } })).status).toBe(200);
  });

  it('a take-down that commits while a buy is past its check leaves nothing bought (409), not an order of a voucher off sale', async () => {
    const voucherId = await insertNormalVoucher(db, f.shopA);
    const [a] = await createTestUsers(db, redis, 1);
    // The buyer's row is held (as another buy of theirs would), so this buy checks the status, then waits its turn.
    let release!: () => void;
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const holder = db.transaction().execute(async (trx) => {
      await trx.selectFrom('tb_user').select('id').where('id', '=', a!.userId).forUpdate().execute();
      held();
      await new Promise<void>((r) => (release = r));
    });
    await isHeld;
    const buying = callRoute(buyRoute, { method: 'POST', token: a!.token, params: { id: voucherId } });
    await new Promise((r) => setTimeout(r, 300));
    await db.updateTable('tb_voucher').set({ status: VoucherStatus.TAKEN_DOWN }).where('id', '=', voucherId).execute();
    release();
    await holder;
    const b = await buying;
    expect(b.status).toBe(409);
    expect(b.json.error.message).toBe('该券已下架');
    expect(await ordersOf(voucherId, a!.userId)).toBe(0);
  });
});
