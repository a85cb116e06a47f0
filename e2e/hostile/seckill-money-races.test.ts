/**
 * Flash-sale units and money under concurrent transitions on one order, through the
 * real routes: cancel ×8 racing the timeout ×8 (past deadline); refund request ×8 racing redeem ×8;
 * approval ×8 racing the reconciler ×4 on a slow provider. Each time one final state, the unit back
 * at most once (MySQL and Redis), the invariants hold, money nets to what the state says.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '30';
  process.env.PAYMENT_NOTIFY_SECRET = 'seckill-money-races-secret-0123456789abcdef';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createTestUsers, waitOutShortLivedKeys, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { backdateOrder, orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { POST as payRoute } from '@/app/api/orders/[id]/pay/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { POST as refundRoute } from '@/app/api/orders/[id]/refund/route';
import { POST as approveRoute } from '@/app/api/admin/orders/[id]/refund/route';
import { POST as redeemRoute } from '@/app/api/admin/redeem/route';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { cancelIfOverdue } from '@/lib/order/lifecycle';
import { reconcileOnce } from '@/lib/payment/reconcile';
import { assertInvariants } from '@/lib/seckill/invariants';
import { setPaymentProviderForTests } from '@/lib/payment/provider';
import { countingProvider } from '@/e2e/support/fixtures/payment';

let worker: OrderWorker;
let f: ConsoleFixture;

beforeAll(async () => {
  worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1000 });
  f = await createConsoleFixture(db, redis);
});
afterEach(() => setPaymentProviderForTests(null));
afterAll(async () => {
  await worker.stop();
  await waitOutShortLivedKeys(redis);
  await closeMq();
  await Promise.all([closeDb(), closeRedis()]);
});

const post = (h: typeof payRoute, token: string, id: string) => callRoute(h, { method: 'POST', token, params: { id } });
const times = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
const dbStock = async (vid: string) => Number((await db.selectFrom('tb_seckill_voucher').select('stock').where('voucher_id', '=', vid).executeTakeFirstOrThrow()).stock);

async function sale(stock: number, buyers: number) {
  const voucherId = await createSaleInShop(db, redis, f.shopA, stock);
  const users = await createTestUsers(db, redis, buyers);
  const ids = await grabAll(db, redis, voucherId, users.map((u) => u.userId));
  await waitPersisted(db, redis, voucherId, buyers);
  const byUser = new Map<string, string>();
  for (const id of ids) byUser.set((await orderRow(db, id)).user_id, id);
  return { voucherId, users, orderOf: (u: TestUser) => byUser.get(u.userId)! };
}

describe('seckill money races', () => {
  it('cancel ×8 racing the timeout ×8 on an overdue order: cancelled once, one unit back', async () => {
    const { voucherId, users, orderOf } = await sale(3, 1);
    const u = users[0]!;
    const before = await dbStock(voucherId);
    await backdateOrder(db, orderOf(u), 40);
    await Promise.all([times(8, () => post(cancelRoute, u.token, orderOf(u))), times(8, () => cancelIfOverdue(db, redis, orderOf(u)))]);
    expect((await orderRow(db, orderOf(u))).status).toBe(4);
    expect(await dbStock(voucherId)).toBe(before + 1);
    await assertInvariants(voucherId, { drained: true });
  });

  it('refund request ×8 racing redeem ×8 on a paid order: exactly one wins', async () => {
    const p = countingProvider();
    setPaymentProviderForTests(p);
    const { voucherId, users, orderOf } = await sale(3, 1);
    const u = users[0]!;
    expect((await post(payRoute, u.token, orderOf(u))).status).toBe(200);
    const code = (await orderRow(db, orderOf(u))).redeem_code as string;
    const [refunds, redeems] = await Promise.all([
      times(8, () => post(refundRoute, u.token, orderOf(u))),
      times(8, () => callRoute(redeemRoute, { method: 'POST', token: f.merchantA.token, body: { code } })),
    ]);
    const st = (await orderRow(db, orderOf(u))).status;
    const okRefund = refunds.filter((r) => r.status === 200).length;
    const okRedeem = redeems.filter((r) => r.status === 200).length;
    expect(okRefund + okRedeem).toBe(1);
    expect(st).toBe(okRefund ? 5 : 3);
    await assertInvariants(voucherId, { drained: true });
  });

  it('approve ×8 racing the reconciler ×4 (slow provider): refunded once, the unit back once', async () => {
    const p = countingProvider();
    p.delayMs = 80;
    setPaymentProviderForTests(p);
    const { voucherId, users, orderOf } = await sale(3, 1);
    const u = users[0]!;
    const id = orderOf(u);
    expect((await post(payRoute, u.token, id)).status).toBe(200);
    expect((await post(refundRoute, u.token, id)).status).toBe(200);
    const before = await dbStock(voucherId);
    await Promise.all([
      times(8, () => post(approveRoute, f.merchantA.token, id)),
      (async () => {
        await new Promise((r) => setTimeout(r, 20));
        await times(4, () => reconcileOnce({ db, redis, provider: p, graceSeconds: 0 }));
      })(),
    ]);
    expect((await orderRow(db, id)).status).toBe(6);
    expect(p.refunds.length).toBe(1);
    expect(p.netOf(id)).toBe(0);
    expect(await dbStock(voucherId)).toBe(before + 1);
    await assertInvariants(voucherId, { drained: true });
  });
});
