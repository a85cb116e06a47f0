/**
 * A poison message handled while the worker's channel closes: filed once. The worker files a dead
 * letter, then copies it to the dead-letter queue and acks; a channel lost in between voids the ack
 * and the broker delivers the message again. An order's dead letter is filed once per order id
 * (insertDeadLetterOnce); a poison message has no trusted order id, and each delivery filed a new
 * row: one message, two dead letters for the admin to discard.
 * The worker reaches MySQL and RabbitMQ through TCP proxies this file cuts: the database is down
 * while the first delivery tries to file its dead letter, the broker connection is cut and comes
 * back (the message is delivered again, and waits behind the first), then the database returns.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // Two ports of this file's own, from its E2E_PORT (each checkout has its own; neighbours' pairs never overlap).
  const base = 20_000 + 2 * Number(process.env.E2E_PORT ?? 3105);
  process.env.RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:${base}`;
  process.env.POISON_TEST_DB_PROXY_PORT = String(base + 1);
});

import type { Counter } from 'prom-client';
import { randomInt } from 'node:crypto';
import { db, closeDb, createDb } from '@/lib/db/client';
import { env } from '@/lib/env';
import { closeRedis } from '@/lib/redis/client';
import { closeMq, getPublishChannel } from '@/lib/mq/connection';
import { names, ORDER_ROUTING_KEY } from '@/lib/mq/topology';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { TcpProxy } from '@/e2e/support/tcp-proxy';
import { waitFor } from '@/e2e/support/fixtures/seckill';

const mqProxy = new TcpProxy(Number(new URL(env.RABBITMQ_URL).port), 5672);
const dbProxyPort = Number(process.env.POISON_TEST_DB_PROXY_PORT);
const dbProxy = new TcpProxy(dbProxyPort, Number(new URL(env.DATABASE_URL).port || 3306));
const workerDb = createDb(
  (() => {
    const u = new URL(env.DATABASE_URL);
    u.host = `127.0.0.1:${dbProxyPort}`;
    return u.toString();
  })(),
  3,
);
let worker: OrderWorker;

beforeAll(async () => {
  await Promise.all([mqProxy.start(), dbProxy.start()]);
  worker = await startOrderWorker({ db: workerDb, batchWaitMs: 5, sweepIntervalMs: 0, repairCheckMs: 0 });
});

afterAll(async () => {
  await worker.stop();
  await Promise.all([closeMq(), workerDb.destroy()]);
  await Promise.all([mqProxy.close(), dbProxy.close(), closeDb(), closeRedis()]);
});

const total = async (c: Counter<string>) => (await c.get()).values.reduce((a, v) => a + v.value, 0);
const metric = async (name: string) => ((await worker.metrics.registry.getSingleMetric(name)?.get())?.values ?? []).reduce((a, v) => a + v.value, 0);

describe('a poison message delivered again after the channel closed', () => {
  it('is filed as one dead letter', async () => {
    const tag = `poison-redelivered-${randomInt(0, 1e9)}`;
    const [stalls, delivered, lost, dead] = [await total(worker.metrics.dbStalls), await metric('hmdp_amqp_delivered_total'), await metric('hmdp_amqp_sessions_lost_total'), await total(worker.metrics.deadLettered)];
    await dbProxy.cut();
    try {
      const ch = await getPublishChannel();
      ch.publish(names.ordersExchange, ORDER_ROUTING_KEY, Buffer.from(`not json ${tag}`), { persistent: true });
      await ch.waitForConfirms();
      await waitFor('the worker waiting for the database to file it', async () => (await total(worker.metrics.dbStalls)) > stalls);

      await mqProxy.cut();
      await waitFor('the session lost', async () => (await metric('hmdp_amqp_sessions_lost_total')) > lost);
      await mqProxy.restore();
      await waitFor('the message delivered again', async () => (await metric('hmdp_amqp_delivered_total')) >= delivered + 2, 20_000);
    } finally {
      await dbProxy.restore();
    }
    // The first delivery files its row, then finds its channel gone (no copy, no ack); the second,
    // on the new channel, is the one counted.
    await waitFor('the second delivery handled', async () => (await total(worker.metrics.deadLettered)) >= dead + 1, 20_000);
    const rows = await db.selectFrom('tb_order_dead_letter').select(['id', 'status', 'order_id']).where('payload', '=', `not json ${tag}`).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'dead', order_id: null });
  }, 60_000);
});
