/**
 * The grab script's reply lost on a cut link (a partition between web host and Redis): the script
 * ran, took the unit and put the order in the outbox, and the web host never hears it. The grab
 * answers 503 within REDIS_COMMAND_TIMEOUT_MS (before: it waited as long as the cut lasted), never
 * 200, gives nothing back, and the outbox sweeper hands the order to the worker: the buyer's retry
 * hears ALREADY_BOUGHT, and that is true.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.SECKILL_REFUSAL_MEMORY_MS = '0'; // no subscriber through the cut link
  process.env.REDIS_COMMAND_TIMEOUT_MS = '1000'; // the product's default (the test setup raises it)
});

import { db, closeDb } from '@/lib/db/client';
import { env } from '@/lib/env';
import { redis, closeRedis, createRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { keys } from '@/lib/redis/keys';
import { AppError } from '@/lib/errors';
import { grabVoucher } from '@/lib/seckill/grab';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { TcpProxy } from '@/e2e/support/tcp-proxy';
import { createTestUsers, createTestVoucher, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const target = new URL(env.REDIS_URL);
const proxy = new TcpProxy(0, Number(target.port) || 6379, target.hostname);
let worker: OrderWorker | undefined;

afterAll(async () => {
  await worker?.stop();
  await proxy.close();
  await waitOutShortLivedKeys(redis);
  await closeMq();
  await Promise.all([closeDb(), closeRedis()]);
});

// One Redis behind a TCP proxy: a cluster client follows the nodes' announced addresses around
// it, so on a cluster the cut is the partitions suite's (e2e/faults/partitions.ts, a web host cut
// off from Redis).
describe.skipIf(env.REDIS_CLUSTER_NODES.length > 0)('a grab whose Redis reply never comes', () => {
  it('answers 503 in about a second, never 200; the order it took is found by the sweeper and written', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [warm, u] = await createTestUsers(db, redis, 2);
    // The process's order-id pool is made (and refilled) on the direct connection.
    const ok = await grabVoucher(db, redis, { voucherId, userId: warm!.userId, ip: '10.9.0.1' });
    expect(ok.status).toBe('pending');

    await proxy.start();
    const cut = createRedis(`redis://127.0.0.1:${proxy.port}${target.pathname}`);
    try {
      expect(await cut.ping()).toBe('PONG');
      proxy.freeze('replies'); // the script reaches Redis and runs; its answer is lost
      const t0 = Date.now();
      const r = await Promise.race([
        grabVoucher(db, cut, { voucherId, userId: u!.userId, ip: '10.9.0.2' }).then((v) => ({ v }), (e: unknown) => ({ e })),
        new Promise<'stalled'>((res) => setTimeout(() => res('stalled'), 5000)),
      ]);
      expect(r).not.toBe('stalled');
      const err = (r as { e?: unknown }).e;
      expect(err).toBeInstanceOf(AppError);
      expect([(err as AppError).status, (err as AppError).code, (err as AppError).retryAfter]).toEqual([503, 'SERVICE_UNAVAILABLE', 1]);
      expect(Date.now() - t0).toBeLessThan(2500);
    } finally {
      cut.disconnect();
    }

    // It did run: the unit is taken and the order waits in the outbox, nothing given back.
    expect(await readSeckillState(redis, voucherId)).toMatchObject({ remaining: 1, buyers: 2, pending: 2 });
    expect(await redis.sismember(keys.seckillBuyers(voucherId), u!.userId)).toBe(1);
    // The buyer's retry (through a live link) is told the truth.
    await expect(grabVoucher(db, redis, { voucherId, userId: u!.userId, ip: '10.9.0.2' })).rejects.toMatchObject({ code: 'ALREADY_BOUGHT' });

    // The sweeper republishes the stale entry; the worker writes both orders.
    worker = await startOrderWorker({ rabbitUrl: env.RABBITMQ_URL, batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1500 });
    await waitFor('both orders in MySQL, the outbox empty', async () => {
      const [s, rows] = await Promise.all([
        readSeckillState(redis, voucherId),
        db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).execute(),
      ]);
      return s?.pending === 0 && rows.length === 2 && rows.some((o) => String(o.user_id) === u!.userId);
    }, 30_000);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 1, dbStock: 1, dbOrders: 2, buyers: 2, oversold: 0, duplicates: 0 });
  }, 60_000);
});
