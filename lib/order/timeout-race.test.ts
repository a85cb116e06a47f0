/**
 * The classic bug of delayed auto-cancel: a payment arriving at the deadline while the timeout
 * returns the unit, and the unit sold twice. 500 orders; each one's pay is fired at its own
 * deadline ± 300 ms while the timeout consumer and the SQL backstop run. Every order must end
 * paid or cancelled, never both; the pay calls that succeeded are exactly the paid orders; the
 * stock returned equals the cancelled count in MySQL and Redis; live orders never exceed the stock.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '4';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { AppError } from '@/lib/errors';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { startTimeoutWorker, type TimeoutWorker } from '@/lib/order/timeout';
import { payOrder } from '@/lib/payment/pay';
import { assertInvariants } from '@/lib/seckill/invariants';
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { firstShopId } from '@/lib/seckill/seckill.repository';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { orderRow, orderSnapshots, paymentsOf } from '@/e2e/support/fixtures/order-lifecycle.repository';

const N = 500;
const TIMEOUT_S = 4;
let worker: OrderWorker;
let timeouts: TimeoutWorker;

beforeAll(async () => {
  worker = await startOrderWorker({ batchWaitMs: 5 });
  timeouts = await startTimeoutWorker({ sweepIntervalMs: 700 });
});

afterAll(async () => {
  await Promise.all([worker.stop(), timeouts.stop()]);
  await waitOutShortLivedKeys(redis);
  await closeMq();
  await Promise.all([closeDb(), closeRedis()]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

describe('pay at the deadline vs the timeout', () => {
  it(`${N} orders: each ends paid or cancelled, never both; returned stock = cancelled; DB and Redis agree`, async () => {
    const voucherId = await createSaleInShop(db, redis, (await firstShopId(db))!, N);
    const users = await createTestUsers(db, redis, N);
    const ids = await grabAll(db, redis, voucherId, users.map((u) => u.userId));
    expect(ids).toHaveLength(N);
    await waitPersisted(db, redis, voucherId, N);

    const rows = await Promise.all(ids.map((id) => orderRow(db, id)));
    const outcome = new Map<string, 'paid' | 'refused'>();
    const unexpected: unknown[] = [];
    await Promise.all(
      rows.map(async (r) => {
        const deadline = r.create_time.getTime() + TIMEOUT_S * 1000;
        await sleep(Math.max(0, deadline + (Math.random() * 600 - 300) - Date.now()));
        try {
          const res = await payOrder(db, { userId: r.user_id, orderId: r.id, idempotencyKey: null });
          outcome.set(r.id, res.status === 'paid' ? 'paid' : 'refused');
        } catch (err) {
          if (err instanceof AppError && err.status === 409) outcome.set(r.id, 'refused');
          else unexpected.push(err);
        }
      }),
    );
    expect(unexpected).toEqual([]);
    await waitFor('no unpaid order left', async () => (await orderSnapshots(db, voucherId, TIMEOUT_S)).every((o) => o.status !== 1), 20_000, 200);
    await waitFor('every return completed in Redis', async () => (await orderSnapshots(db, voucherId, TIMEOUT_S)).every((o) => o.stockReturn !== 1), 20_000, 200);

    const snaps = await orderSnapshots(db, voucherId, TIMEOUT_S);
    const paid = snaps.filter((o) => o.status === 2).map((o) => o.id).sort();
    const cancelled = snaps.filter((o) => o.status === 4);
    expect(paid.length + cancelled.length).toBe(N);
    // The pay calls that answered "paid" are exactly the paid orders, and no cancelled order holds a payment.
    expect([...outcome].filter(([, v]) => v === 'paid').map(([k]) => k).sort()).toEqual(paid);
    const payments = await paymentsOf(db, ids);
    expect(payments.filter((p) => p.status === 'paid').map((p) => p.orderId).sort()).toEqual(paid);
    expect(cancelled.every((o) => o.cancelReason === 'timeout' && o.stockReturn === 2)).toBe(true);

    const inv = await assertInvariants(voucherId, { drained: true });
    expect(inv.dbStock).toBe(cancelled.length);
    expect(inv.redisStock).toBe(cancelled.length);
    expect(inv.dbOrders).toBe(paid.length);
    expect(inv.dbOrders).toBeLessThanOrEqual(N);

    const late = cancelled.map((o) => o.latenessMs!);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(0);
    expect(quantile(late, 1)).toBeLessThan(5000);
    // Both sides really raced: some payments won, some timeouts did.
    expect(paid.length).toBeGreaterThan(0);
    expect(cancelled.length).toBeGreaterThan(0);
    console.info(
      `race: ${paid.length} paid, ${cancelled.length} cancelled (${timeouts.stats.byMessage} by message, ${timeouts.stats.byBackstop} by backstop); ` +
        `timeout lateness p50 ${quantile(late, 0.5).toFixed(0)} ms, p99 ${quantile(late, 0.99).toFixed(0)} ms, max ${quantile(late, 1).toFixed(0)} ms`,
    );
  }, 120_000);
});
