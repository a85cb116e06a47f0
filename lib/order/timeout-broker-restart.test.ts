/**
 * The payment timeout survives a broker crash: a private RabbitMQ (its own ports and data dir,
 * never the shared one) is SIGKILLed while the timeout messages wait out their TTL in the delay
 * queue, and started again. The worker reconnects and cancels every order from the delayed
 * messages alone (the SQL backstop is off), within a few seconds of the deadline.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // FAULT_PORT_BASE=B moves the private broker to B + 2030 (e2e/faults/procs.ts faultPorts).
  const base = Number(process.env.FAULT_PORT_BASE ?? 0);
  process.env.RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:${base ? base + 2030 : 3115}`;
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '25';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { PrivateRabbit } from '@/e2e/faults/private-services';
import { faultPorts } from '@/e2e/faults/procs';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { startTimeoutWorker, type TimeoutWorker } from '@/lib/order/timeout';
import { assertInvariants } from '@/lib/seckill/invariants';
import { firstShopId } from '@/lib/seckill/seckill.repository';
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { orderSnapshots } from '@/e2e/support/fixtures/order-lifecycle.repository';

const ports = faultPorts(30, { mysql: 0, redis: 0, rabbit: 3115, webs: [] });
const rabbit = new PrivateRabbit(ports.rabbit, ports.rabbitDist);
/**
 * How old the queues must be before the broker is killed. RabbitMQ 3.10.8's Ra 2.2.0 records a new
 * quorum queue's server in a DETS table (which caches writes); a SIGKILL soon after the queue's
 * creation loses the record, and the queue comes back as a brand-new, empty Ra server that never
 * elects itself leader (its confirmed messages gone, every publish to it refused). Reproduced with
 * 2 queues and 3 messages: killed ~1 s after the declaration, the delay queue recovered empty and
 * leaderless (`ra_metrics` all 0, `{pong, follower}`) 2 runs of 2; killed 6 s after, all 3 messages
 * were dead-lettered on time. A deployment's queues are declared once and live for months; this
 * test's are seconds old, so it waits the window out (docs/rabbitmq.md#the-payment-timeout-queues).
 */
const QUEUE_SETTLE_MS = 5000;
let worker: OrderWorker;
let timeouts: TimeoutWorker;

beforeAll(async () => {
  await rabbit.start();
  worker = await startOrderWorker({ rabbitUrl: rabbit.url, batchWaitMs: 5 });
  timeouts = await startTimeoutWorker({ rabbitUrl: rabbit.url, sweepIntervalMs: 0 });
  await new Promise((r) => setTimeout(r, QUEUE_SETTLE_MS));
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

    // The worker schedules a batch's timeouts after its commit and ack; the kill comes once the
    // broker has confirmed every one (a kill before that leaves them to the SQL backstop).
    const scheduled = async () => (await worker.metrics.timeoutsScheduled.get()).values.reduce((a, v) => a + v.value, 0);
    await waitFor('every timeout scheduled', async () => (await scheduled()) >= N, 30_000, 50);
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
