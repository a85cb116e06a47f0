/**
 * The v2 order message (lib/seckill/message.ts): the orders of one event-loop turn in one persistent
 * message. Real RabbitMQ, MySQL, Redis and worker: a batch is split into its orders, each settled
 * on its own (persisted, or dead-lettered alone when it is the one that fails), and the broker's
 * message is acked once, not requeued. A burst of grabs through the route really travels as v2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Counter } from 'prom-client';
import { randomInt } from 'node:crypto';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { getPublishChannel } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { encodeOrderBatch, encodeOrderMessage, MAX_BATCH_ORDERS, parseOrderMessage, splitOrderBatch, type OrderMessage } from '@/lib/seckill/message';
import { publishOrderBatchOn } from '@/lib/seckill/publish';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { acceptWithoutPublishing, createTestUsers, createTestVoucher, waitFor } from '@/e2e/support/fixtures/seckill';

const suite = orderWorkerSuite({ options: { batchWaitMs: 20, sweepIntervalMs: 60_000, staleMs: 60_000 }, waitOutKeys: true });

beforeAll(suite.start);

afterAll(suite.end);

const total = async (c: Counter<string>) => (await c.get()).values.reduce((a, v) => a + v.value, 0);

const accepted = (voucherId: string, userId: string) => acceptWithoutPublishing(redis, voucherId, userId);

describe('v2 order message', () => {
  it('round trip: a batch splits into its orders as v1 messages; v1 and malformed batches are not split', () => {
    const msgs: OrderMessage[] = [1, 2, 3].map((i) => ({ v: 1, orderId: `9${i}`, userId: `8${i}`, voucherId: '7', at: 1_700_000_000_000 + i }));
    const parts = splitOrderBatch(encodeOrderBatch(msgs))!;
    expect(parts).toEqual(msgs);
    expect(parts.map((p) => parseOrderMessage(encodeOrderMessage(p)))).toEqual(msgs.map((msg) => ({ ok: true, msg })));
    expect(splitOrderBatch(Buffer.from(JSON.stringify(msgs[0])))).toBeNull();
    for (const bad of [{ v: 2, orders: [] }, { v: 2, orders: [{ orderId: 'x', userId: '1', voucherId: '1', at: 1 }] }, { v: 2 }]) {
      expect(splitOrderBatch(Buffer.from(JSON.stringify(bad)))).toBeNull();
    }
    const tooMany = Array.from({ length: MAX_BATCH_ORDERS + 1 }, (_, i) => ({ ...msgs[0]!, orderId: String(1000 + i) }));
    expect(splitOrderBatch(encodeOrderBatch(tooMany))).toBeNull();
  });

  it('one failing order in a batch is dead-lettered alone; the others are written; the message is acked once', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 10 });
    const users = await createTestUsers(db, redis, 3);
    const good = await Promise.all(users.slice(0, 2).map((u) => accepted(voucherId, u.userId)));
    // Grabbed (by its own account) an hour before the sale began: the worker dead-letters it as off-sale.
    const offSale = { ...(await accepted(voucherId, users[2]!.userId)), at: Date.now() - 3_600_000 };
    const dead0 = await total(suite.worker.metrics.deadLettered);
    const dup0 = await total(suite.worker.metrics.duplicates);
    await publishOrderBatchOn(await getPublishChannel(), [good[0]!, offSale, good[1]!]);

    await waitFor('two orders written, one dead letter', async () => {
      const rows = await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute();
      const dead = await db.selectFrom('tb_order_dead_letter').select('order_id').where('order_id', '=', offSale.orderId).execute();
      return rows.length === 2 && dead.length === 1;
    });
    const rows = await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute();
    expect(rows.map((r) => r.id).sort()).toEqual(good.map((m) => m.orderId).sort());
    // Acked, not requeued: a redelivery would show up as duplicates.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await total(suite.worker.metrics.deadLettered)).toBe(dead0 + 1);
    expect(await total(suite.worker.metrics.duplicates)).toBe(dup0);
  });

  it('a burst of grabs through the route goes out as v2 batches and every accepted grab is written once', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 200 });
    const users = await createTestUsers(db, redis, 200);
    const ch = await getPublishChannel();
    const sizes: number[] = [];
    const publish = ch.publish.bind(ch);
    ch.publish = (exchange, key, content, options, cb) => {
      const parts = splitOrderBatch(content);
      sizes.push(parts ? parts.length : 1);
      return publish(exchange, key, content, options, cb);
    };
    try {
      const res = await Promise.all(
        users.map((u) => callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.33.${randomInt(0, 255)}.${randomInt(1, 255)}` } })),
      );
      expect(res.map((r) => r.status)).toEqual(users.map(() => 200));
    } finally {
      ch.publish = publish;
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    await waitFor('200 orders written', async () => {
      const n = await db.selectFrom('tb_voucher_order').select((eb) => eb.fn.countAll<number>().as('n')).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
      return Number(n.n) === 200;
    });
    await waitFor('outbox cleared', async () => (await redis.hlen(keys.seckillPending(voucherId))) === 0);
    await assertInvariants(voucherId, { drained: true });
  });
});
