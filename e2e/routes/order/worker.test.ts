/**
 * The order worker against real failures: duplicates, poison, a message that keeps failing,
 * a crash between the grab script and the publish, the broker and the database going away.
 * The worker reaches RabbitMQ and MySQL through TCP proxies this file cuts and restores.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:25601';
});

import type { Counter } from 'prom-client';
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { db, closeDb, createDb } from '@/lib/db/client';
import { env } from '@/lib/env';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq, connectMq, getPublishChannel } from '@/lib/mq/connection';
import { names, ORDER_ROUTING_KEY } from '@/lib/mq/topology';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { GET as orderRoute } from '@/app/api/orders/[id]/route';
import { nextOrderId } from '@/lib/id';
import { type OrderMessage } from '@/lib/seckill/message';
import { publishOrder } from '@/lib/seckill/publish';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { TcpProxy } from '@/e2e/support/tcp-proxy';
import { acceptWithoutPublishing, createTestUsers, createTestVoucher, waitDrained, waitFor, type TestUser, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const mqProxy = new TcpProxy(25601, 5672);
const dbProxy = new TcpProxy(25602, Number(new URL(env.DATABASE_URL).port || 3306));
const workerDbUrl = (() => {
  const u = new URL(env.DATABASE_URL);
  u.host = '127.0.0.1:25602';
  return u.toString();
})();
const workerDb = createDb(workerDbUrl, 5);
let worker: OrderWorker;

beforeAll(async () => {
  await Promise.all([mqProxy.start(), dbProxy.start()]);
  worker = await startOrderWorker({ db: workerDb, batchWaitMs: 5, maxAttempts: 3, retryBaseMs: 100, sweepIntervalMs: 300, staleMs: 1000 });
});

afterAll(async () => {
  await worker.stop();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), workerDb.destroy()]);
  await Promise.all([mqProxy.close(), dbProxy.close(), closeDb(), closeRedis()]);
});

const total = async (c: Counter<string>) => (await c.get()).values.reduce((a, v) => a + v.value, 0);

const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.9.${randomInt(0, 255)}.${randomInt(1, 255)}` } });

const orderState = async (u: TestUser, id: string) => (await callRoute(orderRoute, { token: u.token, params: { id } })).json?.data?.state;

describe('order worker', () => {
  it('a message delivered twice, in one batch or after commit, creates one order and takes one unit', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [a, b] = await createTestUsers(db, redis, 2);
    const res = await grab(a!, voucherId);
    expect(res.status).toBe(200);
    await waitDrained(db, redis, voucherId, 1);
    const dupsBefore = await total(worker.metrics.duplicates);

    const row = await db.selectFrom('tb_voucher_order').selectAll().where('id', '=', res.json.data.orderId).executeTakeFirstOrThrow();
    const again: OrderMessage = { v: 1, orderId: row.id, userId: row.user_id, voucherId, at: row.create_time.getTime() };
    await publishOrder(again);
    await publishOrder(again);
    const twice = await acceptWithoutPublishing(redis, voucherId, b!.userId);
    await Promise.all([publishOrder(twice), publishOrder(twice)]);

    await waitFor('three duplicates absorbed', async () => (await total(worker.metrics.duplicates)) >= dupsBefore + 3);
    await waitDrained(db, redis, voucherId, 2);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 2, dbStock: 3, redisStock: 3 });
  });

  it('a poison message goes straight to the dead letters with its reason, and writes no order', async () => {
    const conn = await connectMq();
    const ch = await conn.createChannel();
    try {
      const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true });
      await ch.bindQueue(queue, names.deadExchange, '');
      const tag = `poison-${randomInt(0, 1e9)}`;
      const badOrderId = await nextOrderId(redis);
      const pub = await getPublishChannel();
      pub.publish(names.ordersExchange, ORDER_ROUTING_KEY, Buffer.from(`not json ${tag}`), { persistent: true, messageId: `${tag}-a` });
      pub.publish(names.ordersExchange, ORDER_ROUTING_KEY, Buffer.from(JSON.stringify({ v: 2, orderId: badOrderId, tag })), { persistent: true, messageId: `${tag}-b` });
      await pub.waitForConfirms();

      const rows = await waitFor('two dead letters', async () => {
        const r = await db.selectFrom('tb_order_dead_letter').selectAll().where('payload', 'like', `%${tag}%`).orderBy('id').execute();
        return r.length === 2 && r;
      });
      expect(rows.map((r) => [r.reason.startsWith('unparseable'), r.attempts, r.status])).toEqual([
        [true, 1, 'dead'],
        [true, 1, 'dead'],
      ]);
      // A poison message's order id is not trusted (it must not shadow a real pending order).
      expect(rows.map((r) => r.order_id)).toEqual([null, null]);
      expect(rows[1]!.reason).toContain('v');
      const copies = await waitFor('two copies on the dead-letter queue', async () => {
        const got = [];
        for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true })) got.push(m);
        return got.length > 0 && got;
      });
      const ours = copies.filter((m) => String(m.properties.messageId).startsWith(tag));
      expect(ours.length).toBeGreaterThanOrEqual(1);
      expect(String(ours[0]!.properties.headers?.['x-reason'])).toMatch(/^unparseable/);
      expect(await db.selectFrom('tb_voucher_order').select('id').where('id', '=', badOrderId).executeTakeFirst()).toBeUndefined();
    } finally {
      await conn.close();
    }
  });

  it('a message that keeps failing is retried with backoff, then dead-lettered; replay creates the order', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 2 });
    const [u] = await createTestUsers(db, redis, 1);
    // MySQL says sold out while Redis still has stock: the stock guard refuses every attempt.
    await db.updateTable('tb_seckill_voucher').set({ stock: 0 }).where('voucher_id', '=', voucherId).execute();
    const retriedBefore = await total(worker.metrics.retried);
    const res = await grab(u!, voucherId);
    expect(res.status).toBe(200);
    const orderId: string = res.json.data.orderId;

    const dead = await waitFor('the dead letter', () => db.selectFrom('tb_order_dead_letter').selectAll().where('order_id', '=', orderId).executeTakeFirst(), 15_000);
    expect(dead).toMatchObject({ attempts: 3, status: 'dead', voucher_id: voucherId, user_id: u!.userId });
    expect(dead.reason).toContain('stock guard');
    expect(await total(worker.metrics.retried)).toBe(retriedBefore + 2);
    expect(await orderState(u!, orderId)).toBe('failed');
    // It stays accepted in the outbox, and the sweeper leaves it alone while it is dead.
    const republished = await total(worker.metrics.republished);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await readSeckillState(redis, voucherId))?.pending).toBe(1);
    expect(await total(worker.metrics.republished)).toBe(republished);

    // The admin fixes the stock and replays: publish again + mark replayed.
    await db.updateTable('tb_seckill_voucher').set({ stock: 2 }).where('voucher_id', '=', voucherId).execute();
    await db.updateTable('tb_order_dead_letter').set({ status: 'replayed' }).where('id', '=', dead.id).execute();
    await publishOrder(JSON.parse(dead.payload) as OrderMessage);
    await waitDrained(db, redis, voucherId, 1);
    expect(await orderState(u!, orderId)).toBe('created');
    await assertInvariants(voucherId, { drained: true });
  });

  it('a discarded dead letter gives its unit back to the sale', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1 });
    const [u, other] = await createTestUsers(db, redis, 2);
    await db.updateTable('tb_seckill_voucher').set({ stock: 0 }).where('voucher_id', '=', voucherId).execute();
    const res = await grab(u!, voucherId);
    const orderId: string = res.json.data.orderId;
    expect((await grab(other!, voucherId)).status).toBe(410);
    await waitFor('the dead letter', () => db.selectFrom('tb_order_dead_letter').select('id').where('order_id', '=', orderId).executeTakeFirst(), 15_000);
    await db.updateTable('tb_order_dead_letter').set({ status: 'discarded' }).where('order_id', '=', orderId).execute();
    await db.updateTable('tb_seckill_voucher').set({ stock: 1 }).where('voucher_id', '=', voucherId).execute();
    await waitFor('the release', async () => (await readSeckillState(redis, voucherId))?.remaining === 1);
    expect(await orderState(u!, orderId)).toBe('failed');
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ buyers: 0, redisStock: 1, dbStock: 1 });
    expect((await grab(other!, voucherId)).status).toBe(200);
    await waitDrained(db, redis, voucherId, 1);
  });

  it('a crash between the grab script and the publish loses nothing: the sweeper republishes', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const users = await createTestUsers(db, redis, 3);
    const before = await total(worker.metrics.republished);
    for (const u of users) await acceptWithoutPublishing(redis, voucherId, u.userId);
    await waitDrained(db, redis, voucherId, 3, 15_000);
    expect(await total(worker.metrics.republished)).toBeGreaterThanOrEqual(before + 3);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 3, redisStock: 0, dbStock: 0 });
  });

  it('broker down at publish time: the grab answers 503 and gives the unit back; retried once the broker is back, it lands', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const users = await createTestUsers(db, redis, 3);
    const before = await readSeckillState(redis, voucherId);
    await mqProxy.cut();
    try {
      const results = await Promise.all(users.map((u) => grab(u, voucherId)));
      // A 200 would be a promise the broker never took: with Redis forgetting, nothing would keep it.
      expect(results.map((r) => [r.status, r.json.error?.code])).toEqual(users.map(() => [503, 'SERVICE_UNAVAILABLE']));
      expect(results.every((r) => Number(r.headers.get('retry-after')) >= 1)).toBe(true);
      expect(await readSeckillState(redis, voucherId)).toEqual(before);
      expect((await dbStockCounts(db, voucherId))?.orders).toBe(0);
    } finally {
      await mqProxy.restore();
    }
    // The buyers retry as the grab box does: accepted once the publisher has reconnected.
    const accepted = await Promise.all(
      users.map((u) =>
        waitFor('the retry accepted', async () => {
          const r = await grab(u, voucherId);
          if (r.status === 200) return r;
          expect([503, 429]).toContain(r.status);
          await new Promise((res) => setTimeout(res, 1000)); // Retry-After: 1, as the grab box waits
          return null;
        }, 15_000, 0),
      ),
    );
    await waitDrained(db, redis, voucherId, 3, 20_000);
    const ids = (await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute()).map((o) => o.id);
    expect(ids.sort()).toEqual(accepted.map((r) => r.json.data.orderId as string).sort());
    expect(await orderState(users[0]!, accepted[0]!.json.data.orderId)).toBe('created');
    await assertInvariants(voucherId, { drained: true });
  });

  it('database down: the worker waits and retries in place, nothing is lost or dead-lettered', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 30 });
    const users = await createTestUsers(db, redis, 20);
    const stalls = await total(worker.metrics.dbStalls);
    const dead = await total(worker.metrics.deadLettered);
    await dbProxy.cut();
    try {
      const results = await Promise.all(users.map((u) => grab(u, voucherId)));
      expect(results.every((r) => r.status === 200)).toBe(true);
      await waitFor('the worker to hit the dead database', async () => (await total(worker.metrics.dbStalls)) > stalls);
      await new Promise((r) => setTimeout(r, 1000));
      expect((await dbStockCounts(db, voucherId))?.orders).toBe(0);
    } finally {
      await dbProxy.restore();
    }
    await waitDrained(db, redis, voucherId, 20, 20_000);
    expect(await total(worker.metrics.deadLettered)).toBe(dead);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 20, dbStock: 10 });
    const [{ n }] = (await sql<{ n: number }>`SELECT COUNT(*) AS n FROM tb_order_dead_letter WHERE voucher_id = ${voucherId}`.execute(db)).rows as [{ n: number }];
    expect(Number(n)).toBe(0);
  });
});
