/**
 * A signed notify is the provider telling us money moved. When its amount is not the order's price
 * (the buyer was charged a different sum), the order is not paid (400), but the money is recorded
 * (refund_due, once per transaction) and sent back. Before, the route wrote nothing: money the
 * provider took was known only to the provider (docs/order-lifecycle.md: "no money moves that the
 * books don't know of"). Found and proved by a review helper.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.PAYMENT_NOTIFY_SECRET = 'notify-wrong-amount-secret-0123456789abcdef';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { POST as buyRoute } from '@/app/api/vouchers/[id]/buy/route';
import { POST as notifyRoute } from '@/app/api/payments/notify/route';
import { POST as payRoute } from '@/app/api/orders/[id]/pay/route';
import { insertNormalVoucher, orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { setPaymentProviderForTests } from '@/lib/payment/provider';
import { countingProvider, type CountingProvider } from '@/e2e/support/fixtures/payment';
import { attemptRowsOf, paymentRowsOf } from '@/e2e/support/fixtures/payment.repository';
import { signNotify } from '@/lib/payment/signature';

const PRICE = 3300;
let f: ConsoleFixture;
let p: CountingProvider;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});
afterEach(() => setPaymentProviderForTests(null));
afterAll(async () => {
  await Promise.all([closeDb(), closeRedis()]);
});

const notify = (body: object) => {
  const raw = JSON.stringify(body);
  return callRoute(notifyRoute, { method: 'POST', rawBody: raw, headers: { 'content-type': 'application/json', 'x-payment-signature': signNotify(process.env.PAYMENT_NOTIFY_SECRET!, raw) } });
};

async function unpaidOrder() {
  const voucherId = await insertNormalVoucher(db, f.shopA, PRICE);
  const [u] = await createTestUsers(db, redis, 1);
  const r = await callRoute(buyRoute, { method: 'POST', token: u!.token, params: { id: voucherId } });
  expect(r.status).toBe(200);
  return { u: u!, orderId: r.json.data.id as string };
}

describe('notify whose amount is not the order price', () => {
  it('×8 concurrent signed notifies of one wrong-amount transaction: the order is not paid, the money is recorded once and refunded once', async () => {
    p = countingProvider();
    p.delayMs = 10;
    setPaymentProviderForTests(p);
    const { orderId } = await unpaidOrder();
    const body = { orderId, txnId: `amt-${orderId}`, amount: PRICE + 1 };
    const rs = await Promise.all(Array.from({ length: 8 }, () => notify(body)));
    for (const r of rs) expect(r.status).toBeGreaterThanOrEqual(400);
    expect((await orderRow(db, orderId)).status).toBe(1);
    // The provider took PRICE + 1 fen under this transaction: the ledger must know it and give it back.
    const payments = await paymentRowsOf(db, orderId);
    expect(payments.map((x) => ({ txnId: x.txnId, amount: x.amount, status: x.status }))).toEqual([{ txnId: body.txnId, amount: PRICE + 1, status: 'refunded' }]);
    expect((await attemptRowsOf(db, orderId)).filter((a) => a.kind === 'refund').map((a) => ({ amount: a.amount, status: a.status }))).toEqual([{ amount: PRICE + 1, status: 'done' }]);
    expect(p.refunds.map((r) => ({ txnId: r.txnId, amount: r.amount }))).toEqual([{ txnId: body.txnId, amount: PRICE + 1 }]);
  });

  it('a wrong-amount notify, then a correct pay: the order can still be paid correctly afterwards and the wrong money is refunded', async () => {
    p = countingProvider();
    p.delayMs = 10;
    setPaymentProviderForTests(p);
    const { u, orderId } = await unpaidOrder();
    const bad = await notify({ orderId, txnId: `amt2-${orderId}`, amount: 1 });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    const good = await callRoute(payRoute, { method: 'POST', token: u.token, params: { id: orderId } });
    expect(good.status).toBe(200);
    expect((await orderRow(db, orderId)).status).toBe(2);
    const payments = await paymentRowsOf(db, orderId);
    expect(payments.filter((x) => x.status === 'paid').map((x) => x.amount)).toEqual([PRICE]);
    expect(payments.filter((x) => x.status !== 'paid').map((x) => ({ amount: x.amount, status: x.status }))).toEqual([{ amount: 1, status: 'refunded' }]);
  });
});
