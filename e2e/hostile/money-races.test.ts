/**
 * Concurrent duplicate writes on every money route (proof suite): pay (one key, no key, many
 * keys), pay racing cancel, refund request + approval, and the payment notify (one transaction
 * replayed, several transactions for one order). 8 at once each, against the real MySQL, with a
 * payment provider that counts what it charged and refunded (and is slow enough for the calls to
 * overlap). Each time: one winner, the order in one final state, every charge the provider took in
 * tb_payment and in the attempt ledger, every refund sent once, and the buyer out of pocket exactly
 * the order's price if it is paid, else nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.PAYMENT_NOTIFY_SECRET = 'money-races-notify-secret-0123456789abcdef';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createTestUsers, type TestUser } from '@/e2e/support/fixtures/seckill';
import { POST as payRoute } from '@/app/api/orders/[id]/pay/route';
import { POST as buyRoute } from '@/app/api/vouchers/[id]/buy/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { POST as refundRoute } from '@/app/api/orders/[id]/refund/route';
import { POST as approveRoute } from '@/app/api/admin/orders/[id]/refund/route';
import { POST as notifyRoute } from '@/app/api/payments/notify/route';
import { insertNormalVoucher, orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { setPaymentProviderForTests } from '@/lib/payment/provider';
import { countingProvider, type CountingProvider } from '@/e2e/support/fixtures/payment';
import { attemptRowsOf, paymentRowsOf } from '@/e2e/support/fixtures/payment.repository';
import { signNotify } from '@/lib/payment/signature';

const N = 8;
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

function withCounting(delayMs = 40): CountingProvider {
  p = countingProvider();
  p.delayMs = delayMs;
  setPaymentProviderForTests(p);
  return p;
}

async function unpaidOrder(): Promise<{ u: TestUser; orderId: string }> {
  const voucherId = await insertNormalVoucher(db, f.shopA, PRICE);
  const [u] = await createTestUsers(db, redis, 1);
  const r = await callRoute(buyRoute, { method: 'POST', token: u!.token, params: { id: voucherId } });
  expect(r.status).toBe(200);
  return { u: u!, orderId: r.json.data.id as string };
}

const post = (h: typeof payRoute, token: string, id: string, headers: Record<string, string> = {}) => callRoute(h, { method: 'POST', token, params: { id }, headers });
const times = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort((a, b) => a - b);

const notify = (body: object) => {
  const raw = JSON.stringify(body);
  return callRoute(notifyRoute, { method: 'POST', rawBody: raw, headers: { 'content-type': 'application/json', 'x-payment-signature': signNotify(process.env.PAYMENT_NOTIFY_SECRET!, raw) } });
};

/** Every charge the provider took is a tb_payment row and a settled charge attempt; the buyer paid exactly `expectedNet`. */
async function booksBalance(orderId: string, expectedNet: number) {
  const payments = await paymentRowsOf(db, orderId);
  const attempts = await attemptRowsOf(db, orderId);
  const charged = p.charges.filter((c) => c.orderId === orderId);
  expect(payments.map((x) => x.txnId).sort()).toEqual(charged.map((c) => c.txnId).sort());
  for (const c of charged) expect(attempts.find((a) => a.kind === 'charge' && a.txnId === c.txnId)?.status).toBe('settled');
  expect(p.netOf(orderId)).toBe(expectedNet);
}

describe('money routes under concurrent duplicates', () => {
  it(`pay ×${N} with one Idempotency-Key: one charge, ${N} identical answers`, async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    const rs = await times(N, () => post(payRoute, u.token, orderId, { 'idempotency-key': `race-key-${orderId}` }));
    expect(statuses(rs)).toEqual(Array(N).fill(200));
    expect(p.charges.length).toBe(1);
    expect((await orderRow(db, orderId)).status).toBe(2);
    await booksBalance(orderId, PRICE);
  });

  it(`pay ×${N} without a key: one charge, one 200, the rest 409`, async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    const rs = await times(N, () => post(payRoute, u.token, orderId));
    expect(statuses(rs)).toEqual([200, ...Array(N - 1).fill(409)]);
    expect(p.charges.length).toBe(1);
    expect(p.refunds.length).toBe(0);
    await booksBalance(orderId, PRICE);
  });

  it(`pay ×${N} with ${N} different keys: still one charge`, async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    const rs = await times(N, (i) => post(payRoute, u.token, orderId, { 'idempotency-key': `race-${i}-${orderId}` }));
    expect(rs.filter((r) => r.status === 200).length).toBe(1);
    expect(p.charges.length).toBe(1);
    await booksBalance(orderId, PRICE);
  });

  it(`pay ×${N} racing cancel ×${N}: one cancel or one payment; whatever was charged is recorded and, if cancelled, refunded`, async () => {
    withCounting(30);
    const { u, orderId } = await unpaidOrder();
    const [pays, cancels] = await Promise.all([times(N, () => post(payRoute, u.token, orderId)), times(N, () => post(cancelRoute, u.token, orderId))]);
    const status = (await orderRow(db, orderId)).status;
    expect([2, 4]).toContain(status);
    expect(p.charges.length).toBeLessThanOrEqual(1);
    if (status === 2) {
      expect(pays.filter((r) => r.status === 200).length).toBe(1);
      expect(cancels.filter((r) => r.status === 200).length).toBe(0);
      await booksBalance(orderId, PRICE);
    } else {
      expect(cancels.filter((r) => r.status === 200).length).toBe(1);
      expect(pays.filter((r) => r.status === 200).length).toBe(0);
      await booksBalance(orderId, 0);
      // A charge that landed after the cancel was sent back, once, through a recorded refund.
      expect(p.refunds.length).toBe(p.charges.length);
      expect((await attemptRowsOf(db, orderId)).filter((a) => a.kind === 'refund').every((a) => a.status === 'done')).toBe(true);
    }
  });

  it(`refund request ×${N}, then approve ×${N}: one request, one approval, one refund sent once and recorded`, async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    expect((await post(payRoute, u.token, orderId)).status).toBe(200);
    const requests = await times(N, () => post(refundRoute, u.token, orderId));
    expect(statuses(requests)).toEqual([200, ...Array(N - 1).fill(409)]);
    expect((await orderRow(db, orderId)).status).toBe(5);
    const approvals = await times(N, () => post(approveRoute, f.merchantA.token, orderId));
    expect(statuses(approvals)).toEqual([200, ...Array(N - 1).fill(409)]);
    expect((await orderRow(db, orderId)).status).toBe(6);
    expect(p.refundCalls).toBe(1);
    expect(p.refunds.length).toBe(1);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refunded' }]);
    expect((await attemptRowsOf(db, orderId)).filter((a) => a.kind === 'refund')).toMatchObject([{ status: 'done', amount: PRICE }]);
    await booksBalance(orderId, 0);
  });

  it(`cancel ×${N} while a charge is at the provider: one cancel wins, the late money is recorded and refunded once through a recorded refund`, async () => {
    withCounting(300);
    const { u, orderId } = await unpaidOrder();
    const paying = post(payRoute, u.token, orderId);
    await new Promise((r) => setTimeout(r, 100)); // the charge is at the provider
    const rs = await times(N, () => post(cancelRoute, u.token, orderId));
    expect(statuses(rs)).toEqual([200, ...Array(N - 1).fill(409)]);
    expect((await paying).status).toBe(409);
    expect((await orderRow(db, orderId)).status).toBe(4);
    expect(p.charges.length).toBe(1);
    expect(p.refunds.length).toBe(1);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refunded', amount: PRICE }]);
    expect((await attemptRowsOf(db, orderId)).filter((a) => a.kind === 'refund')).toMatchObject([{ status: 'done', amount: PRICE }]);
    await booksBalance(orderId, 0);
    // And a pay after the cancel charges nothing.
    expect((await post(payRoute, u.token, orderId)).status).toBe(409);
    expect(p.chargeCalls).toBe(1);
  });

  it(`notify ×${N} of one transaction: paid once; ×${N} different transactions for one order: one pays, the rest are refunded once each, all recorded`, async () => {
    withCounting(10);
    const one = await unpaidOrder();
    const same = { orderId: one.orderId, txnId: `nt-${one.orderId}`, amount: PRICE };
    expect(statuses(await times(N, () => notify(same)))).toEqual(Array(N).fill(200));
    expect(await paymentRowsOf(db, one.orderId)).toMatchObject([{ status: 'paid', txnId: same.txnId }]);

    const many = await unpaidOrder();
    const rs = await times(N, (i) => notify({ orderId: many.orderId, txnId: `nt-${i}-${many.orderId}`, amount: PRICE }));
    expect(statuses(rs)).toEqual([200, ...Array(N - 1).fill(409)]);
    const payments = await paymentRowsOf(db, many.orderId);
    expect(payments.length).toBe(N);
    expect(payments.filter((x) => x.status === 'paid').length).toBe(1);
    expect(payments.filter((x) => x.status === 'refunded').length).toBe(N - 1);
    const refunds = (await attemptRowsOf(db, many.orderId)).filter((a) => a.kind === 'refund');
    expect(refunds.length).toBe(N - 1);
    expect(refunds.every((a) => a.status === 'done')).toBe(true);
    expect(new Set(p.refunds.map((r) => r.txnId))).toEqual(new Set(payments.filter((x) => x.status === 'refunded').map((x) => x.txnId)));
    expect(p.refunds.length).toBe(N - 1);
  });
});
