/**
 * Money that the books would otherwise lose, made right by the reconciler: the provider failing
 * before and after it charges, the database failing at the step after the charge (the repository
 * throws, then also the write of the outcome), a pending charge whose notify never comes, a refund
 * of late money and a merchant-approved refund that the provider refuses at first. Each time the
 * provider is a counting one, and the end state is checked against its books.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Registry } from 'prom-client';

const faults = vi.hoisted(() => ({ insertPayment: 0, chargeOutcome: 0 }));

// The step after the charge fails as a dead database would: the repository throws.
vi.mock('@/lib/payment/payment.repository', async (importOriginal) => {
  const real = await importOriginal<typeof import('@/lib/payment/payment.repository')>();
  return {
    ...real,
    insertPaymentOnce: async (...args: Parameters<typeof real.insertPaymentOnce>) => {
      if (faults.insertPayment > 0) {
        faults.insertPayment--;
        throw Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true });
      }
      return real.insertPaymentOnce(...args);
    },
    setChargeOutcome: async (...args: Parameters<typeof real.setChargeOutcome>) => {
      if (faults.chargeOutcome > 0) {
        faults.chargeOutcome--;
        throw Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true });
      }
      return real.setChargeOutcome(...args);
    },
  };
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
import { GET as owedRoute } from '@/app/api/admin/payments/owed/route';
import { insertNormalVoucher, orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { setPaymentProviderForTests } from '@/lib/payment/provider';
import { owedSummary } from '@/lib/payment/payment.repository';
import { createPaymentMetrics, reconcileOnce } from '@/lib/payment/reconcile';
import { countingProvider, type CountingProvider } from '@/e2e/support/fixtures/payment';
import { attemptRowsOf, paymentRowsOf } from '@/e2e/support/fixtures/payment.repository';

let f: ConsoleFixture;
let p: CountingProvider;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});

afterEach(() => {
  setPaymentProviderForTests(null);
  faults.insertPayment = 0;
  faults.chargeOutcome = 0;
});

afterAll(async () => {
  await Promise.all([closeDb(), closeRedis()]);
});

function withCounting(delayMs = 0): CountingProvider {
  p = countingProvider();
  p.delayMs = delayMs;
  setPaymentProviderForTests(p);
  return p;
}

async function unpaidOrder(price = 1500): Promise<{ u: TestUser; orderId: string }> {
  const voucherId = await insertNormalVoucher(db, f.shopA, price);
  const [u] = await createTestUsers(db, redis, 1);
  const r = await callRoute(buyRoute, { method: 'POST', token: u!.token, params: { id: voucherId } });
  expect(r.status).toBe(200);
  return { u: u!, orderId: r.json.data.id as string };
}

const post = (h: typeof payRoute, token: string, id: string) => callRoute(h, { method: 'POST', token, params: { id } });
const reconcile = () => reconcileOnce({ db, redis, provider: p, graceSeconds: 0 });

describe('a charge whose outcome was lost is settled by the reconciler', () => {
  it('the provider charges, then the connection drops: 503, the attempt is owed, the reconciler asks and settles it', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    p.chargeFaults.push('throw-after');
    expect((await post(payRoute, u.token, orderId)).status).toBe(503);
    expect(p.charges.length).toBe(1);
    expect(await paymentRowsOf(db, orderId)).toEqual([]);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ kind: 'charge', status: 'intent', amount: 1500 }]);
    // The order cannot be charged a second time while the first charge is unexplained.
    expect((await post(payRoute, u.token, orderId)).status).toBe(409);
    expect(p.charges.length).toBe(1);

    await reconcile();
    expect((await orderRow(db, orderId)).status).toBe(2);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'paid', amount: 1500, txnId: p.charges[0]!.txnId }]);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ status: 'settled' }]);
    expect(p.netOf(orderId)).toBe(1500);
  });

  it('the provider fails before charging: the reconciler learns nothing was taken, the order can be paid again', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    p.chargeFaults.push('throw-before');
    expect((await post(payRoute, u.token, orderId)).status).toBe(503);
    await reconcile();
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ status: 'failed' }]);
    expect((await orderRow(db, orderId)).status).toBe(1);
    expect((await post(payRoute, u.token, orderId)).status).toBe(200);
    expect(p.charges.length).toBe(1);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'paid' }]);
  });

  it('the database fails at the settlement after the charge: the transaction is kept on the attempt and settled later', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    faults.insertPayment = 1;
    // A lost connection is answered 503 (retry later) by the route layer.
    expect((await post(payRoute, u.token, orderId)).status).toBe(503);
    expect(p.charges.length).toBe(1);
    expect((await orderRow(db, orderId)).status).toBe(1);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ status: 'charged', txnId: p.charges[0]!.txnId }]);
    await reconcile();
    expect((await orderRow(db, orderId)).status).toBe(2);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'paid', txnId: p.charges[0]!.txnId }]);
  });

  it('the database fails at the settlement and at the outcome write: the intent alone is enough', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    faults.insertPayment = 1;
    faults.chargeOutcome = 1;
    expect((await post(payRoute, u.token, orderId)).status).toBe(503);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ status: 'intent', txnId: null }]);
    await reconcile();
    expect((await orderRow(db, orderId)).status).toBe(2);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'paid', txnId: p.charges[0]!.txnId }]);
    expect(p.charges.length).toBe(1);
  });

  it('a pending charge whose notify never arrives: the reconciler asks and settles it', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    p.chargeFaults.push('pending');
    const r = await post(payRoute, u.token, orderId);
    expect(r.json.data).toEqual({ orderId, status: 'pending' });
    await reconcile();
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ status: 'pending' }]);
    const [a] = await attemptRowsOf(db, orderId);
    p.payPending(a!.id, orderId, 1500);
    await reconcile();
    expect((await orderRow(db, orderId)).status).toBe(2);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'paid' }]);
  });
});

describe('refunds owed are retried until the provider agrees', () => {
  it('money that arrives after a cancel: refund_due, the refund fails, the reconciler refunds it once', async () => {
    withCounting(400);
    const { u, orderId } = await unpaidOrder();
    p.refundFailures = 1;
    const paying = post(payRoute, u.token, orderId);
    await new Promise((r) => setTimeout(r, 100)); // the charge is at the provider
    expect((await post(cancelRoute, u.token, orderId)).status).toBe(200);
    expect((await paying).status).toBe(409);
    expect((await orderRow(db, orderId)).status).toBe(4);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refund_due' }]);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ kind: 'charge', status: 'settled' }, { kind: 'refund', status: 'intent', tries: 1 }]);
    expect(p.netOf(orderId)).toBe(1500);

    p.delayMs = 0;
    // Two reconcilers at once (two workers): the provider still refunds once.
    await Promise.all([reconcile(), reconcile()]);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refunded' }]);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ status: 'settled' }, { kind: 'refund', status: 'done' }]);
    expect(p.refunds.length).toBe(1);
    expect(p.netOf(orderId)).toBe(0);
  });

  it('a refund the merchant approved, refused by the provider: the order stays 退款中 until the reconciler gets it refunded, then 6', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder();
    expect((await post(payRoute, u.token, orderId)).status).toBe(200);
    expect((await post(refundRoute, u.token, orderId)).status).toBe(200);
    p.refundFailures = 1;
    const approved = await post(approveRoute, f.merchantA.token, orderId);
    expect(approved.status).toBe(200);
    expect(approved.json.data).toEqual({ orderId, status: 5 });
    expect((await orderRow(db, orderId)).status).toBe(5);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refund_due' }]);
    // Approving again does not send a second refund.
    expect((await post(approveRoute, f.merchantA.token, orderId)).status).toBe(409);

    const owed = await callRoute(owedRoute, { token: f.admin.token });
    expect(owed.status).toBe(200);
    expect(owed.json.data.items.some((i: { orderId: string; kind: string }) => i.orderId === orderId && i.kind === 'refund')).toBe(true);
    expect((await callRoute(owedRoute, { token: f.merchantA.token })).status).toBe(403);

    await reconcile();
    expect((await orderRow(db, orderId)).status).toBe(6);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refunded' }]);
    expect(p.refunds.length).toBe(1);
    expect(p.netOf(orderId)).toBe(0);
  });

  it('the metrics: owed items and amount per kind, outcomes counted', async () => {
    withCounting();
    const { u, orderId } = await unpaidOrder(1234);
    p.chargeFaults.push('throw-after');
    await post(payRoute, u.token, orderId);
    const registry = new Registry();
    const metrics = createPaymentMetrics(registry);
    // Nothing is due yet (inside the grace): the gauges still show what is owed.
    await reconcileOnce({ db, redis, provider: p, graceSeconds: 3600 }, metrics);
    const before = await owedSummary(db);
    expect(before.charges.count).toBeGreaterThanOrEqual(1);
    expect((await metrics.owed.get()).values.find((v) => v.labels.kind === 'charge')?.value).toBe(before.charges.count);
    expect((await metrics.owedFen.get()).values.find((v) => v.labels.kind === 'charge')?.value).toBe(before.charges.amount);
    await reconcileOnce({ db, redis, provider: p, graceSeconds: 0 }, metrics);
    const settled = (await metrics.outcomes.get()).values.find((v) => v.labels.outcome === 'settled');
    expect(settled?.value).toBeGreaterThanOrEqual(1);
    expect((await metrics.owed.get()).values.find((v) => v.labels.kind === 'charge')?.value).toBe((await owedSummary(db)).charges.count);
    expect(await registry.metrics()).toMatch(/hmdp_payment_reconcile_total\{outcome="settled"\}/);
  });
});
