/**
 * An order the worker writes late (a database outage longer than the payment window, a dead letter
 * replayed later, retries) must still give its buyer a window to pay: its window starts when it is
 * written, not at the grab. Written with the grab's time, it was past its deadline on arrival: the
 * timeout message (scheduled with what was left of the window: nothing) cancelled it at once, and a
 * pay was refused — a 200 grab that its buyer could never pay for, and a forfeited sale.
 * The SQL backstop and the outbox sweep are off, so the timeout message alone decides.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '6';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { publishOrder } from '@/lib/seckill/publish';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { startTimeoutWorker, type TimeoutWorker } from '@/lib/order/timeout';
import { payOrder } from '@/lib/payment/pay';
import { assertInvariants } from '@/lib/seckill/invariants';
import { acceptWithoutPublishing, createTestUsers, createTestVoucher, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { orderRow, orderRowOrNull } from '@/e2e/support/fixtures/order-lifecycle.repository';

const WINDOW_MS = 6000;
let worker: OrderWorker;
let timeouts: TimeoutWorker;

beforeAll(async () => {
  worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 0 });
  timeouts = await startTimeoutWorker({ sweepIntervalMs: 0 });
});

afterAll(async () => {
  await Promise.all([worker.stop(), timeouts.stop()]);
  await waitOutShortLivedKeys(redis);
  await closeMq();
  await Promise.all([closeDb(), closeRedis()]);
});

describe('an order written after its payment window', () => {
  it('can be paid once written, and is timed out by its message a whole window after the write', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [payer, idler] = await createTestUsers(db, redis, 2);
    // Grabbed 30 s ago (inside the sale window, which began a minute ago); the worker sees them only now.
    const late = await Promise.all([payer!, idler!].map(async (u) => ({ ...(await acceptWithoutPublishing(redis, voucherId, u.userId)), at: Date.now() - 30_000 })));
    await Promise.all(late.map((m) => publishOrder(m)));
    const writtenBy = await waitFor('both orders written', async () => (await Promise.all(late.map((m) => orderRowOrNull(db, m.orderId)))).every(Boolean) && Date.now(), 10_000, 20);

    // The buyer opens the order and pays: it must still be payable.
    const paid = await payOrder(db, { userId: payer!.userId, orderId: late[0]!.orderId, idempotencyKey: null });
    expect(paid.status).toBe('paid');
    expect((await orderRow(db, late[0]!.orderId)).status).toBe(2);

    // The other is left unpaid: still unpaid well into its new window, cancelled by its message after it.
    await new Promise((r) => setTimeout(r, WINDOW_MS / 2));
    expect((await orderRow(db, late[1]!.orderId)).status).toBe(1);
    const cancelled = await waitFor('the unpaid one timed out', async () => {
      const r = await orderRow(db, late[1]!.orderId);
      return r.status === 4 && r;
    }, WINDOW_MS + 8000, 50);
    expect(cancelled.cancel_reason).toBe('timeout');
    expect(cancelled.cancel_time!.getTime()).toBeGreaterThanOrEqual(writtenBy - 1000 + WINDOW_MS - 1000);
    await waitFor('the unit back in Redis', async () => (await orderRow(db, late[1]!.orderId)).stock_return === 2);
    // Counted once the cancel's Redis return is done (the backstop is off: only the message can have done it).
    await waitFor('cancelled by its message', async () => timeouts.stats.byMessage >= 1, 2000);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 1, dbStock: 4, redisStock: 4 });
  });
});
