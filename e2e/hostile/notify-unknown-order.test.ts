/**
 * A signed notify is the provider telling us money moved. When it names an order that does not
 * exist, nothing is paid (404), but the money is recorded (refund_due under the id the provider
 * named, no buyer, once per transaction) and sent back; a refund the provider refuses stays owed,
 * in the console's list, until the reconciler sends it. Unsigned or badly signed notifies are still
 * refused before anything is written. Before, the route answered 404 and wrote nothing: money the
 * provider took was in nobody's books (docs/order-lifecycle.md: "no money moves that the books
 * don't know of"). Found and proved by a review helper.
 */
import { randomInt } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.PAYMENT_NOTIFY_SECRET = 'notify-unknown-order-secret-0123456789abcdef';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { POST as notifyRoute } from '@/app/api/payments/notify/route';
import { GET as owedRoute } from '@/app/api/admin/payments/owed/route';
import { setPaymentProviderForTests } from '@/lib/payment/provider';
import { reconcileOnce } from '@/lib/payment/reconcile';
import { countingProvider, type CountingProvider } from '@/e2e/support/fixtures/payment';
import { ageAttempts, attemptRowsOf, paymentRowsOf } from '@/e2e/support/fixtures/payment.repository';
import { orderRowOrNull } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { signNotify } from '@/lib/payment/signature';

const AMOUNT = 4700;
let f: ConsoleFixture;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});
afterEach(() => setPaymentProviderForTests(null));
afterAll(async () => {
  await Promise.all([closeDb(), closeRedis()]);
});

function provider(): CountingProvider {
  // Its own name, so the reconciler pass below takes only this file's attempts.
  const p = countingProvider(`unk${randomInt(0, 1e6)}`);
  p.delayMs = 10;
  setPaymentProviderForTests(p);
  return p;
}

const notify = (body: object, signature?: string) => {
  const raw = JSON.stringify(body);
  return callRoute(notifyRoute, {
    method: 'POST',
    rawBody: raw,
    headers: { 'content-type': 'application/json', 'x-payment-signature': signature ?? signNotify(process.env.PAYMENT_NOTIFY_SECRET!, raw) },
  });
};

/** An order id no order has (checked; 18 digits from 9e17 up, far above the generator's ids). */
async function missingOrderId(): Promise<string> {
  const id = `9${String(Date.now()).padStart(14, '0')}${String(randomInt(0, 1e3)).padStart(3, '0')}`;
  expect(await orderRowOrNull(db, id)).toBeNull();
  return id;
}

describe('signed notify for an order that does not exist', () => {
  it('×8 concurrent notifies of one transaction: 404, the money is recorded once and refunded once', async () => {
    const p = provider();
    const orderId = await missingOrderId();
    const body = { orderId, txnId: `unk-${orderId}`, amount: AMOUNT };
    const rs = await Promise.all(Array.from({ length: 8 }, () => notify(body)));
    for (const r of rs) expect(r.status).toBe(404);
    expect(await orderRowOrNull(db, orderId)).toBeNull();
    // The provider took AMOUNT under this transaction: the ledger must know it and give it back.
    expect((await paymentRowsOf(db, orderId)).map((x) => ({ txnId: x.txnId, amount: x.amount, status: x.status }))).toEqual([{ txnId: body.txnId, amount: AMOUNT, status: 'refunded' }]);
    expect((await attemptRowsOf(db, orderId)).map((a) => ({ kind: a.kind, amount: a.amount, status: a.status }))).toEqual([{ kind: 'refund', amount: AMOUNT, status: 'done' }]);
    expect(p.refunds.map((r) => ({ txnId: r.txnId, amount: r.amount }))).toEqual([{ txnId: body.txnId, amount: AMOUNT }]);

    // A retried notify (the provider retries a 404) records and refunds nothing more.
    expect((await notify(body)).status).toBe(404);
    expect(await paymentRowsOf(db, orderId)).toHaveLength(1);
    expect(p.refundCalls).toBe(1);
  });

  it('the provider refuses the refund: it stays owed, shown in the console, and the reconciler sends it', async () => {
    const p = provider();
    p.refundFailures = 1;
    const before = (await callRoute(owedRoute, { token: f.admin.token })).json.data.summary.refunds;
    const orderId = await missingOrderId();
    const body = { orderId, txnId: `unk2-${orderId}`, amount: AMOUNT };
    expect((await notify(body)).status).toBe(404);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ amount: AMOUNT, status: 'refund_due' }]);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ kind: 'refund', amount: AMOUNT, status: 'intent', tries: 1 }]);
    const owed = await callRoute(owedRoute, { token: f.admin.token });
    expect(owed.status).toBe(200);
    expect(owed.json.data.summary.refunds).toEqual({ count: before.count + 1, amount: before.amount + AMOUNT });

    await ageAttempts(db, [orderId]);
    const { outcomes } = await reconcileOnce({ db, redis, provider: p, graceSeconds: 1 });
    expect(outcomes).toEqual(['refunded']);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refunded' }]);
    expect(await attemptRowsOf(db, orderId)).toMatchObject([{ kind: 'refund', status: 'done' }]);
    expect(p.refunds.map((r) => ({ txnId: r.txnId, amount: r.amount }))).toEqual([{ txnId: body.txnId, amount: AMOUNT }]);
  });

  it('unsigned or badly signed: 401 and nothing written; a zero amount took nothing and records nothing', async () => {
    const p = provider();
    const orderId = await missingOrderId();
    const body = { orderId, txnId: `unk3-${orderId}`, amount: AMOUNT };
    const raw = JSON.stringify(body);
    const unsigned = await callRoute(notifyRoute, { method: 'POST', rawBody: raw, headers: { 'content-type': 'application/json' } });
    expect(unsigned.status).toBe(401);
    expect((await notify(body, signNotify('another-secret-0123456789abcdef0123456789abcdef', raw))).status).toBe(401);
    expect((await notify(body, signNotify(process.env.PAYMENT_NOTIFY_SECRET!, JSON.stringify({ ...body, amount: 1 })))).status).toBe(401);
    expect((await notify({ ...body, amount: 0 })).status).toBe(404);
    expect(await paymentRowsOf(db, orderId)).toEqual([]);
    expect(await attemptRowsOf(db, orderId)).toEqual([]);
    expect(p.refundCalls).toBe(0);
  });
});
