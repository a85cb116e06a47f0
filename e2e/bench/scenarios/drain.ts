/**
 * Worker drain rate: N orders accepted exactly as the grab path accepts them (the Lua script
 * into the Redis outbox) and published while no worker runs; then W workers start and the
 * harness times how fast MySQL fills, from the moment the first worker is consuming.
 */
import { randomInt } from 'node:crypto';
import { db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { nextOrderId } from '@/lib/id';
import { connectMq } from '@/lib/mq/connection';
import { names, ORDER_ROUTING_KEY } from '@/lib/mq/topology';
import { encodeOrderMessage, parseOrderMessage, type OrderMessage } from '@/lib/seckill/message';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runGrabScript } from '@/lib/seckill/grab';
import { checkInvariants } from '@/lib/seckill/invariants';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestVoucher, waitFor } from '@/e2e/support/fixtures/seckill';
import { missingOrders, prepareBenchDb, purgeOrderQueue, round } from '../setup';
import type { Scenario } from '../types';

const CHUNK = 2000;

export const scenario: Scenario = {
  description: 'pre-fill the order queue with N accepted orders; measure the workers’ persisted orders per second',
  variants: ['redis'],
  async run(h, a) {
    const n = a.messages;
    await prepareBenchDb();
    await purgeOrderQueue();
    const voucherId = await createTestVoucher(db, redis, { stock: n, title: 'bench drain' });
    // Synthetic buyers (no FK to tb_user): a random block of ids per run.
    const firstUser = 9_000_000_000_000n + BigInt(randomInt(0, 1_000_000)) * 1_000_000n;

    const conn = await connectMq();
    const ch = await conn.createConfirmChannel();
    const line = h.progress('pre-fill');
    const orderIds: string[] = [];
    for (let i = 0; i < n; i += CHUNK) {
      const size = Math.min(CHUNK, n - i);
      const msgs = await Promise.all(
        Array.from({ length: size }, async (_, j): Promise<OrderMessage> => {
          const orderId = await nextOrderId(redis);
          const [code, payload] = await runGrabScript(redis, { voucherId, userId: String(firstUser + BigInt(i + j)), orderId });
          const parsed = code === 0 && payload ? parseOrderMessage(payload) : null;
          if (!parsed?.ok) throw new Error(`pre-fill grab refused with code ${code}`);
          return parsed.msg;
        }),
      );
      for (const m of msgs) {
        ch.publish(names.ordersExchange, ORDER_ROUTING_KEY, encodeOrderMessage(m), { persistent: true, messageId: m.orderId });
        orderIds.push(m.orderId);
      }
      await ch.waitForConfirms();
      line(`${i + size}/${n} orders accepted and queued`, i + size === n);
    }
    await conn.close();
    await redis.sadd(keys.seckillActive(), voucherId);

    // The sweeper would republish entries older than OUTBOX_STALE_MS: keep it out of the measurement.
    const workers = await h.startWorkers(a.workers, { OUTBOX_STALE_MS: '3600000' });
    const consumingAt = Math.min(...workers.map((w) => startTime(w.tail)));
    const progress = h.progress('drain');
    await waitFor('the drain', async () => {
      const c = (await dbStockCounts(db, voucherId))!.orders;
      progress(`${c}/${n} orders in MySQL`);
      return c === n;
    }, 600_000, 20);
    const drainS = (Date.now() - consumingAt) / 1000;
    progress(`${n}/${n} orders in MySQL`, true);
    await waitFor('an empty outbox', async () => (await readSeckillState(redis, voucherId))?.pending === 0, 60_000, 50);
    await h.stopAll();

    const inv = await checkInvariants(db, redis, voucherId, { drained: true });
    const lost = await missingOrders(orderIds);
    const rate = n / drainS;
    const batch = Number(a.extra.batch ?? env.WORKER_BATCH_SIZE);
    return {
      rps: rate,
      failures: [...(lost ? [`lost ${lost}`] : []), ...inv.violations],
      line: {
        scenario: 'drain',
        strategy: 'redis',
        users: n,
        stock: n,
        requests: n,
        rps: round(rate),
        p50_ms: null,
        p99_ms: null,
        accepted: n,
        db_orders: inv.dbOrders,
        oversold: inv.oversold,
        duplicates: inv.duplicates,
        lost,
        drain_s: round(drainS, 2),
        redis_stock: inv.redisStock,
        db_stock: inv.dbStock,
        workers: a.workers,
        batch_size: batch,
      },
      summary: [
        `drain: ${n} queued orders, ${a.workers} worker(s), batch ${batch}, prefetch ${env.WORKER_PREFETCH}`,
        `  persisted in ${round(drainS, 2)} s → ${round(rate, 0)} orders/s · DB orders ${inv.dbOrders} · lost ${lost} · duplicates ${inv.duplicates}`,
        `  invariants ${inv.violations.length ? `VIOLATED: ${inv.violations.join('; ')}` : 'hold'}`,
      ],
    };
  },
};

/** When the worker logged "consuming" (pino's `time`), so process start-up is not counted. */
function startTime(tail: string[]): number {
  for (const l of tail) {
    try {
      const j = JSON.parse(l) as { msg?: string; time?: number };
      if (j.msg === 'order worker consuming' && j.time) return j.time;
    } catch {
      /* not JSON */
    }
  }
  return Date.now();
}
