/**
 * The order lifecycle through its routes, against the real worker (persist + payment timeouts),
 * MySQL, Redis and RabbitMQ: pay (dev provider, Idempotency-Key), the signed notify (replayed,
 * forged, late), cancel, refund, redeem, strangers refused, the unit returned exactly once, a
 * crash between the MySQL and the Redis half of a return, the timeout, normal vouchers.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '5';
  process.env.PAYMENT_NOTIFY_SECRET = 'test-notify-secret-0123456789abcdef0123';
  process.env.NORMAL_VOUCHER_USER_CAP = '2';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, type ConsoleFixture, type ConsoleUser } from '@/e2e/support/fixtures/admin';
import { POST as payRoute } from '@/app/api/orders/[id]/pay/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { POST as refundRoute } from '@/app/api/orders/[id]/refund/route';
import { GET as orderRoute } from '@/app/api/orders/[id]/route';
import { POST as notifyRoute } from '@/app/api/payments/notify/route';
import { POST as redeemRoute } from '@/app/api/admin/redeem/route';
import { POST as approveRoute } from '@/app/api/admin/orders/[id]/refund/route';
import { GET as voucherOrdersRoute } from '@/app/api/admin/vouchers/[id]/orders/route';
import { POST as buyRoute } from '@/app/api/vouchers/[id]/buy/route';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { startTimeoutWorker, type TimeoutWorker } from '@/lib/order/timeout';
import { markCancelled, returnStockRow } from '@/lib/order/lifecycle.repository';
import { completeReturn, returnUnitToRedis } from '@/lib/order/stock-return';
import { signNotify } from '@/lib/payment/signature';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, waitFor, waitOutShortLivedKeys, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { backdateOrder, insertNormalVoucher, orderRow, paymentsOf } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { insertNormalOrder } from '@/lib/order/lifecycle.repository';
import { nextOrderId } from '@/lib/id';

let worker: OrderWorker;
let timeouts: TimeoutWorker;
let f: ConsoleFixture;

beforeAll(async () => {
  worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1000 });
  timeouts = await startTimeoutWorker({ sweepIntervalMs: 1000 });
  f = await createConsoleFixture(db, redis);
});

afterAll(async () => {
  await Promise.all([worker.stop(), timeouts.stop()]);
  await waitOutShortLivedKeys(redis);
  await closeMq();
  await Promise.all([closeDb(), closeRedis()]);
});

const asUser = (u: TestUser | ConsoleUser) => ('userId' in u ? u.token : u.token);
const post = (handler: typeof payRoute, u: TestUser | ConsoleUser, id: string, headers: Record<string, string> = {}) =>
  callRoute(handler, { method: 'POST', token: asUser(u), params: { id }, headers });
const status = async (id: string) => (await orderRow(db, id)).status;

/** A sale of `stock` in merchant A's shop with `buyers` persisted orders. */
async function saleWithOrders(stock: number, buyers: number) {
  const voucherId = await createSaleInShop(db, redis, f.shopA, stock);
  const users = await createTestUsers(db, redis, buyers);
  const orderIds = await grabAll(db, redis, voucherId, users.map((u) => u.userId));
  await waitPersisted(db, redis, voucherId, buyers);
  const byUser = new Map<string, string>();
  for (const id of orderIds) byUser.set((await orderRow(db, id)).user_id, id);
  return { voucherId, users, orderOf: (u: TestUser) => byUser.get(u.userId)! };
}

const notify = (body: object, sign = true) => {
  const raw = JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  headers['x-payment-signature'] = sign ? signNotify(process.env.PAYMENT_NOTIFY_SECRET!, raw) : signNotify('forged-secret', raw);
  return callRoute(notifyRoute, { method: 'POST', rawBody: raw, headers });
};

describe('pay', () => {
  it('the owner pays once: 2 paid with a redeem code; a repeat is 409, a repeated Idempotency-Key answers the same', async () => {
    const { users, orderOf } = await saleWithOrders(3, 2);
    const [a, b] = users as [TestUser, TestUser];
    const key = { 'idempotency-key': `k-${orderOf(a)}` };
    const [r1, r2] = await Promise.all([post(payRoute, a, orderOf(a), key), post(payRoute, a, orderOf(a), key)]);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(r1.json.data).toEqual({ orderId: orderOf(a), status: 'paid' });
    expect(r2.json.data).toEqual(r1.json.data);
    expect((await post(payRoute, a, orderOf(a))).status).toBe(409);
    expect(await paymentsOf(db, [orderOf(a)])).toEqual([{ orderId: orderOf(a), status: 'paid' }]);
    const view = (await callRoute(orderRoute, { token: a.token, params: { id: orderOf(a) } })).json.data;
    expect(view).toMatchObject({ orderStatus: 2, payDeadline: null });
    expect(view.redeemCode).toMatch(/^\d{12}$/);
    // The same key on another order is refused, not silently answered with the first order.
    expect((await post(payRoute, a, orderOf(b), key)).status).toBe(404);
  });

  it("someone else's pay / cancel / refund → 404 and nothing changes", async () => {
    const { users, orderOf, voucherId } = await saleWithOrders(2, 2);
    const [a, b] = users as [TestUser, TestUser];
    for (const h of [payRoute, cancelRoute, refundRoute]) expect((await post(h, b, orderOf(a))).status).toBe(404);
    expect(await status(orderOf(a))).toBe(1);
    expect(await paymentsOf(db, [orderOf(a)])).toEqual([]);
    await assertInvariants(voucherId, { drained: true });
  });

  it('a notify replayed 10× at once pays once; a forged signature → 401 and nothing changes', async () => {
    const { users, orderOf } = await saleWithOrders(2, 2);
    const [a, b] = users as [TestUser, TestUser];
    const forged = await notify({ orderId: orderOf(b), txnId: 'txn-forged', amount: 990 }, false);
    expect(forged.status).toBe(401);
    expect(await status(orderOf(b))).toBe(1);
    expect(await paymentsOf(db, [orderOf(b)])).toEqual([]);

    const body = { orderId: orderOf(a), txnId: `txn-${orderOf(a)}`, amount: 990 };
    const replies = await Promise.all(Array.from({ length: 10 }, () => notify(body)));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await status(orderOf(a))).toBe(2);
    expect(await paymentsOf(db, [orderOf(a)])).toEqual([{ orderId: orderOf(a), status: 'paid' }]);
    expect((await notify({ ...body, amount: 1 })).status).toBe(400);
  });

  it('a notify after the cancel is refused (409), refunded, and never revives the order', async () => {
    const { users, orderOf } = await saleWithOrders(1, 1);
    const a = users[0]!;
    expect((await post(cancelRoute, a, orderOf(a))).status).toBe(200);
    const r = await notify({ orderId: orderOf(a), txnId: `late-${orderOf(a)}`, amount: 990 });
    expect(r.status).toBe(409);
    expect(await status(orderOf(a))).toBe(4);
    expect(await paymentsOf(db, [orderOf(a)])).toEqual([{ orderId: orderOf(a), status: 'refunded' }]);
  });
});

describe('cancel and the unit returned exactly once', () => {
  it('cancel → 4, the unit is back in MySQL and Redis for someone else (the buyer forfeits it); a second cancel is 409', async () => {
    const { users, orderOf, voucherId } = await saleWithOrders(1, 1);
    const a = users[0]!;
    const [b] = await createTestUsers(db, redis, 1);
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(0);
    const r = await post(cancelRoute, a, orderOf(a));
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ orderStatus: 4, cancelReason: 'buyer' });
    expect((await post(cancelRoute, a, orderOf(a))).status).toBe(409);
    expect((await post(payRoute, a, orderOf(a))).status).toBe(409);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 1, dbStock: 1, dbOrders: 0, buyers: 0 });
    await expect(grabAll(db, redis, voucherId, [a.userId])).rejects.toMatchObject({ code: 'FORFEITED' });
    const again = await grabAll(db, redis, voucherId, [b!.userId]);
    await waitPersisted(db, redis, voucherId, 2);
    expect(await status(again[0]!)).toBe(1);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 0, dbStock: 0, dbOrders: 1 });
  });

  it('a crash between the MySQL commit and the Redis return: the backstop completes it; a late retry after the unit was grabbed again changes nothing', async () => {
    const { users, orderOf, voucherId } = await saleWithOrders(2, 1);
    const a = users[0]!;
    const [b] = await createTestUsers(db, redis, 1);
    // The MySQL half alone, as if the process died right after the commit.
    await db.transaction().execute(async (trx) => {
      expect(await markCancelled(trx, orderOf(a), 'buyer', 5)).toBe(true);
      expect(await returnStockRow(trx, voucherId)).toBe(true);
    });
    expect(await assertInvariants(voucherId)).toMatchObject({ returnsOwed: 1, redisStock: 1, dbStock: 2, buyers: 1, dbOrders: 0 });
    // Generous: a backstop round may be busy with a backlog of other files' overdue orders first.
    await waitFor('backstop completed the return', async () => (await orderRow(db, orderOf(a))).stock_return === 2, 60_000, 200);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 2, dbStock: 2, buyers: 0, returnsOwed: 0 });

    // Someone else grabs the unit (and pays); then a stale retry of the old return arrives: it must
    // neither remove a buyer nor add a unit.
    const [again] = await grabAll(db, redis, voucherId, [b!.userId]);
    await waitPersisted(db, redis, voucherId, 2);
    expect((await post(payRoute, b!, again!)).status).toBe(200);
    const old = { id: orderOf(a), voucherId, userId: a.userId };
    expect(await returnUnitToRedis(db, redis, old)).toBe(false);
    await completeReturn(db, redis, old);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 1, dbStock: 1, dbOrders: 1, buyers: 1, returnsOwed: 0 });
  });
});

describe('refund and redeem in the console', () => {
  it('refund: request → 5; the other merchant → 403; the owner approves → 6 and the unit is back', async () => {
    const { users, orderOf, voucherId } = await saleWithOrders(1, 1);
    const a = users[0]!;
    expect((await post(payRoute, a, orderOf(a))).status).toBe(200);
    expect((await post(refundRoute, a, orderOf(a))).json.data.orderStatus).toBe(5);
    expect((await post(refundRoute, a, orderOf(a))).status).toBe(409);
    expect((await post(approveRoute, f.merchantB, orderOf(a))).status).toBe(403);
    expect((await post(approveRoute, f.consumer, orderOf(a))).status).toBe(403);
    expect(await status(orderOf(a))).toBe(5);
    expect((await post(approveRoute, f.merchantA, orderOf(a))).status).toBe(200);
    expect((await post(approveRoute, f.merchantA, orderOf(a))).status).toBe(409);
    expect(await status(orderOf(a))).toBe(6);
    expect(await paymentsOf(db, [orderOf(a)])).toEqual([{ orderId: orderOf(a), status: 'refunded' }]);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 1, dbStock: 1, dbOrders: 0 });
    // A refunded unit is forfeited too: pay → refund → grab would be the same free loop, only slower.
    await expect(grabAll(db, redis, voucherId, [a.userId])).rejects.toMatchObject({ code: 'FORFEITED' });
  });

  it('redeem: a foreign merchant → 403, a wrong code → 404, the owner → used once, a second time → 409', async () => {
    const { users, orderOf, voucherId } = await saleWithOrders(1, 1);
    const a = users[0]!;
    await post(payRoute, a, orderOf(a));
    const code = (await orderRow(db, orderOf(a))).redeem_code!;
    const redeem = (u: ConsoleUser, c: string) => callRoute(redeemRoute, { method: 'POST', token: u.token, body: { code: c } });
    expect((await redeem(f.merchantB, code)).status).toBe(403);
    expect((await redeem(f.merchantA, code === '100000000000' ? '100000000001' : '100000000000')).status).toBe(404);
    expect((await redeem(f.merchantA, 'abc')).status).toBe(400);
    expect(await status(orderOf(a))).toBe(2);
    const [x, y] = await Promise.all([redeem(f.merchantA, code), redeem(f.merchantA, code)]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
    expect(await status(orderOf(a))).toBe(3);
    expect((await post(refundRoute, a, orderOf(a))).status).toBe(409);
    const list = await callRoute(voucherOrdersRoute, { token: f.merchantA.token, params: { id: voucherId }, query: { status: '3' } });
    expect(list.json.data.items.map((i: { id: string }) => i.id)).toEqual([orderOf(a)]);
    expect((await callRoute(voucherOrdersRoute, { token: f.merchantB.token, params: { id: voucherId } })).status).toBe(403);
  });
});

describe('timeout', () => {
  it('an unpaid order is cancelled by the timeout message within its bound and the unit goes back', async () => {
    const { users, orderOf, voucherId } = await saleWithOrders(1, 1);
    const a = users[0]!;
    const row = await waitFor('cancelled by the timeout', async () => {
      const r = await orderRow(db, orderOf(a));
      return r.status === 4 && r;
    }, 12_000, 100);
    expect(row.cancel_reason).toBe('timeout');
    const lateness = row.cancel_time!.getTime() - (row.create_time.getTime() + 5000);
    expect(lateness).toBeGreaterThanOrEqual(0);
    expect(lateness).toBeLessThan(2000);
    expect(timeouts.stats.byMessage).toBeGreaterThan(0);
    expect((await post(payRoute, a, orderOf(a))).status).toBe(409);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 1, dbStock: 1, dbOrders: 0 });
    // Letting the payment time out forfeits the unit like a cancel does.
    await expect(grabAll(db, redis, voucherId, [a.userId])).rejects.toMatchObject({ code: 'FORFEITED' });
  });
});

describe('timeout backstop', () => {
  it('an overdue order whose timeout message was lost is cancelled by the SQL backstop', async () => {
    const voucherId = await insertNormalVoucher(db, f.shopA);
    const [u] = await createTestUsers(db, redis, 1);
    const id = await nextOrderId(redis);
    expect(await insertNormalOrder(db, { id, userId: u!.userId, voucherId })).toBe(true); // no message scheduled
    await backdateOrder(db, id, 60);
    const before = timeouts.stats.byBackstop;
    const row = await waitFor('cancelled by the backstop', async () => {
      const r = await orderRow(db, id);
      return r.status === 4 && r;
      // Generous: in a shared test database the backstop may first work through other files' overdue orders.
    }, 60_000, 200);
    expect(row).toMatchObject({ cancel_reason: 'timeout', stock_return: 0 });
    expect(timeouts.stats.byBackstop).toBeGreaterThan(before);
  });
});

describe('normal vouchers', () => {
  it('购买 creates an unpaid order at once; pay and redeem as usual; the per-user cap holds', async () => {
    const voucherId = await insertNormalVoucher(db, f.shopA);
    const [u] = await createTestUsers(db, redis, 1);
    const buy = () => callRoute(buyRoute, { method: 'POST', token: u!.token, params: { id: voucherId } });
    const first = await buy();
    expect(first.status).toBe(200);
    expect(first.json.data).toMatchObject({ state: 'created', orderStatus: 1, kind: 0 });
    expect((await buy()).status).toBe(200);
    expect((await buy()).status).toBe(409);
    const id = first.json.data.id as string;
    expect((await post(payRoute, u!, id)).status).toBe(200);
    const code = (await orderRow(db, id)).redeem_code!;
    expect((await callRoute(redeemRoute, { method: 'POST', token: f.merchantA.token, body: { code } })).status).toBe(200);
    expect(await status(id)).toBe(3);
  });
});
