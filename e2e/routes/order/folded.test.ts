/**
 * A buyer whose first grab Redis forgot (a failover, a restart without fsync) and whose second grab
 * the new Redis accepted has two order messages of one voucher in RabbitMQ. The worker writes one
 * order; the other is recorded as failed (tb_order_failure) and its status poll says so, with the
 * order the buyer holds — never a silent 404. Real RabbitMQ, MySQL, Redis and worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Counter } from 'prom-client';
import { randomInt } from 'node:crypto';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { GET as orderRoute } from '@/app/api/orders/[id]/route';
import { type OrderMessage } from '@/lib/seckill/message';
import { publishOrder } from '@/lib/seckill/publish';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { releaseOrder } from '@/lib/seckill/outbox';
import { acceptWithoutPublishing, createTestUsers, createTestVoucher, waitDrained, waitFor, type TestUser, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

let worker: OrderWorker | undefined;
const startWorker = async () => (worker = await startOrderWorker({ batchWaitMs: 20, sweepIntervalMs: 500, staleMs: 1500 }));

beforeAll(startWorker);

afterAll(async () => {
  await worker?.stop();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const total = async (c: Counter<string>) => (await c.get()).values.reduce((a, v) => a + v.value, 0);

const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.32.${randomInt(0, 255)}.${randomInt(1, 255)}` } });

const poll = async (u: TestUser, id: string) => callRoute(orderRoute, { token: u.token, params: { id } });

/**
 * A grab Redis accepted and then forgot: the script ran (and its message went to the broker, as a
 * 200 guarantees now), then the whole grab vanished from Redis as a failover to a lagging replica
 * would leave it.
 */
async function forgottenGrab(voucherId: string, userId: string): Promise<OrderMessage> {
  const msg = await acceptWithoutPublishing(redis, voucherId, userId);
  expect(await releaseOrder(redis, voucherId, msg.orderId, userId)).toBe(true);
  return msg;
}

describe('folded orders: one buyer, two accepted grabs of one voucher', () => {
  it('one order; the other id polls failed ALREADY_BOUGHT with the kept order; redeliveries change nothing', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [u, stranger] = await createTestUsers(db, redis, 2);
    const foldedBefore = await total(worker!.metrics.folded);

    const first = await forgottenGrab(voucherId, u!.userId);
    await publishOrder(first);
    await waitFor('the first order written', () => db.selectFrom('tb_voucher_order').select('id').where('id', '=', first.orderId).executeTakeFirst());
    // The new master has no trace of the first grab: the buyer grabs again and is accepted.
    const second = await grab(u!, voucherId);
    expect(second.status).toBe(200);
    const secondId: string = second.json.data.orderId;
    await waitDrained(db, redis, voucherId, 1);

    const orders = await db.selectFrom('tb_voucher_order').select(['id', 'user_id']).where('voucher_id', '=', voucherId).execute();
    expect(orders).toEqual([{ id: first.orderId, user_id: u!.userId }]);
    const failed = await waitFor('the folded order polls failed', async () => {
      const r = await poll(u!, secondId);
      return r.json.data?.state === 'failed' ? r : null;
    });
    expect(failed.status).toBe(200);
    expect(failed.json.data).toMatchObject({ id: secondId, voucherId, state: 'failed', failReason: 'ALREADY_BOUGHT', keptOrderId: first.orderId });
    expect((await poll(stranger!, secondId)).status).toBe(404);
    expect((await poll(u!, first.orderId)).json.data).toMatchObject({ state: 'created' });
    expect(await total(worker!.metrics.folded)).toBe(foldedBefore + 1);
    const rows = await db.selectFrom('tb_order_failure').selectAll().where('voucher_id', '=', voucherId).execute();
    expect(rows).toMatchObject([{ order_id: secondId, user_id: u!.userId, reason: 'ALREADY_BOUGHT', kept_order_id: first.orderId }]);

    // Redeliveries of both ids: the kept one stays created, the folded one stays failed, recorded once.
    const secondMsg: OrderMessage = { v: 1, orderId: secondId, userId: u!.userId, voucherId, at: Date.now() };
    const dupsBefore = await total(worker!.metrics.duplicates);
    await Promise.all([publishOrder(first), publishOrder(secondMsg), publishOrder(secondMsg)]);
    await waitFor('three redeliveries absorbed', async () => (await total(worker!.metrics.duplicates)) >= dupsBefore + 3);
    // The folded copies are absorbed as redeliveries of a failed order, not folded again.
    expect(await total(worker!.metrics.folded)).toBe(foldedBefore + 1);
    expect((await poll(u!, first.orderId)).json.data).toMatchObject({ state: 'created' });
    expect((await poll(u!, secondId)).json.data).toMatchObject({ state: 'failed', failReason: 'ALREADY_BOUGHT' });
    expect(await db.selectFrom('tb_order_failure').select('order_id').where('voucher_id', '=', voucherId).execute()).toHaveLength(1);
    // Redis took one unit (the second grab), MySQL one (the first order): they agree.
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 4, dbStock: 4, dbOrders: 1, buyers: 1, oversold: 0, duplicates: 0 });

    // Even once the kept order no longer blocks the unique key (cancelled), the folded id is never written.
    await db.updateTable('tb_voucher_order').set({ status: 4 }).where('id', '=', first.orderId).execute();
    const failedCopiesBefore = await total(worker!.metrics.duplicates);
    await publishOrder(secondMsg);
    await waitFor('the copy absorbed', async () => (await total(worker!.metrics.duplicates)) >= failedCopiesBefore + 1);
    expect(await db.selectFrom('tb_voucher_order').select('id').where('id', '=', secondId).executeTakeFirst()).toBeUndefined();
    expect((await poll(u!, secondId)).json.data).toMatchObject({ state: 'failed' });
  });

  it('both messages in one batch: one order, the other recorded failed in the same transaction', async () => {
    await worker!.stop();
    worker = undefined;
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [u] = await createTestUsers(db, redis, 1);
    const first = await forgottenGrab(voucherId, u!.userId);
    const second = await grab(u!, voucherId);
    expect(second.status).toBe(200);
    await publishOrder(first);
    await startWorker();
    await waitDrained(db, redis, voucherId, 1);
    const orders = await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute();
    expect(orders).toHaveLength(1);
    // Inside one batch the lower order id is inserted first; the other folds into it.
    const ids = [first.orderId, second.json.data.orderId as string];
    const kept = orders[0]!.id;
    expect(ids).toContain(kept);
    const foldedId = ids.find((id) => id !== kept)!;
    const r = await waitFor('failed', async () => {
      const p = await poll(u!, foldedId);
      return p.json.data?.state === 'failed' ? p.json.data : null;
    });
    expect(r).toMatchObject({ failReason: 'ALREADY_BOUGHT', keptOrderId: kept });
    expect((await poll(u!, kept)).json.data).toMatchObject({ state: 'created' });
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 2, dbStock: 2, dbOrders: 1, buyers: 1 });
  });
});
