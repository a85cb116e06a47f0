/**
 * The payment timeout survives a broker crash: a private RabbitMQ (its own ports and data dir,
 * never the shared one) is SIGKILLed while the timeout messages wait out their TTL in the delay
 * queue, and started again. The worker reconnects and cancels every order from the delayed
 * messages alone (the SQL backstop is off), within a few seconds of the deadline.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:3115';
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '25';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { PrivateRabbit } from '@/e2e/faults/private-services';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { startTimeoutWorker, type TimeoutWorker } from '@/lib/order/timeout';
import { assertInvariants } from '@/lib/seckill/invariants';
import { firstShopId } from '@/lib/seckill/seckill.repository';
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { orderSnapshots } from '@/e2e/support/fixtures/order-lifecycle.repository';

const rabbit = new PrivateRabbit(3115, 3116);
let worker: OrderWorker;
let timeouts: TimeoutWorker;

beforeAll(async () => {
  await rabbit.start();
  worker = await startOrderWorker({ rabbitUrl: rabbit.url, batchWaitMs: 5 });
  timeouts = await startTimeoutWorker({ rabbitUrl: rabbit.url, sweepIntervalMs: 0 });
}, 120_000);

afterAll(async () => {
  await Promise.all([worker?.stop(), timeouts?.stop()]);
  await closeMq();
  await rabbit.stop();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeDb(), closeRedis()]);
}, 60_000);

describe('timeout after a broker crash', () => {
  it('RabbitMQ SIGKILLed and restarted during the delay: every order still times out, by message, within seconds', async () => {
    const N = 20;
    const voucherId = await createSaleInShop(db, redis, (await firstShopId(db))!, N);
    const users = await createTestUsers(db, redis, N);
    await grabAll(db, redis, voucherId, users.map((u) => u.userId));
    await waitPersisted(db, redis, voucherId, N, 30_000);
    const deadline = Math.max(...(await db.selectFrom('tb_voucher_order').select('create_time').where('voucher_id', '=', voucherId).execute()).map((r) => r.create_time.getTime())) + 25_000;

    await rabbit.crash();
    await closeMq();
    await rabbit.start();
    const back = Date.now();
    expect(back).toBeLessThan(deadline);
    expect((await orderSnapshots(db, voucherId, 25)).every((o) => o.status === 1)).toBe(true);

    await waitFor('every order cancelled after the broker restart', async () => (await orderSnapshots(db, voucherId, 25)).every((o) => o.status === 4 && o.stockReturn === 2), 60_000, 200);
    const late = (await orderSnapshots(db, voucherId, 25)).map((o) => o.latenessMs!);
    console.info(`broker back ${((deadline - back) / 1000).toFixed(1)} s before the deadline; lateness max ${Math.max(...late).toFixed(0)} ms`);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...late)).toBeLessThan(5000);
    expect(timeouts.stats.byBackstop).toBe(0);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: N, dbStock: N, dbOrders: 0 });
  }, 180_000);
});
