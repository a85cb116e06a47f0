/**
 * The payment-timeout consumer and its SQL backstop, run inside the background worker process
 * (workers/background.ts) on the shared consumer (lib/mq/consumer.ts). A timeout message arrives when the delay queue's TTL runs out; the
 * consumer cancels the order if it is still unpaid and past its deadline (the conditional write
 * decides, so a payment racing it is never undone) and returns the unit. Every
 * ORDER_TIMEOUT_SWEEP_INTERVAL_MS the backstop cancels overdue orders whose message was lost or is
 * late, and completes stock returns still owed to Redis.
 */
import type { ConsumeMessage } from 'amqplib';
import type { Registry } from 'prom-client';
import type { RedisClient } from '@/lib/redis/types';
import { db as defaultDb, type DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { settle as settleOn, startConsumer, type ConsumerSession } from '@/lib/mq/consumer';
import { moveLegacyTimeoutQueues } from '@/lib/mq/queue-move';
import { assertTimeoutTopology, names } from '@/lib/mq/topology';
import { cancelIfOverdue } from '@/lib/order/lifecycle';
import { overdueUnpaidIds } from '@/lib/order/lifecycle.repository';
import { isTransientDbError } from '@/lib/order/persist';
import { completeOwedReturns } from '@/lib/order/stock-return';
import { timeoutOrderIds } from '@/lib/order/timeout-schedule';
import { redis as defaultRedis } from '@/lib/redis/client';

export interface TimeoutWorkerOptions {
  db?: DB;
  redis?: RedisClient;
  rabbitUrl?: string;
  timeoutSeconds?: number;
  sweepIntervalMs?: number;
  prefetch?: number;
  /** Where the consumer's session metrics go (the worker's /metrics). */
  registry?: Registry;
}

export interface TimeoutStats {
  /** Cancelled by a timeout message / by the backstop. */
  byMessage: number;
  byBackstop: number;
  /** Redis returns the backstop completed. */
  returnsCompleted: number;
}

export interface TimeoutWorker {
  readonly stats: TimeoutStats;
  backstopNow(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A message that beats the DB clock's deadline (clock skew) waits this long at most, then the backstop owns it. */
const NOT_DUE_RETRY_MS = 500;
const NOT_DUE_MAX_TRIES = 10;
const BACKSTOP_BATCH = 500;
const BACKSTOP_CONCURRENCY = 8;
/** Orders of one (v2) timeout message cancelled at once. */
const MESSAGE_CONCURRENCY = 8;

export async function startTimeoutWorker(options: TimeoutWorkerOptions = {}): Promise<TimeoutWorker> {
  const o = {
    db: options.db ?? defaultDb,
    redis: options.redis ?? defaultRedis,
    rabbitUrl: options.rabbitUrl ?? env.RABBITMQ_URL,
    timeoutSeconds: options.timeoutSeconds ?? env.ORDER_PAY_TIMEOUT_SECONDS,
    sweepIntervalMs: options.sweepIntervalMs ?? env.ORDER_TIMEOUT_SWEEP_INTERVAL_MS,
    prefetch: options.prefetch ?? 200,
  };
  const stats: TimeoutStats = { byMessage: 0, byBackstop: 0, returnsCompleted: 0 };
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let moving: Promise<unknown> | undefined;

  async function expire(orderId: string): Promise<void> {
    for (let tries = 0; ; tries++) {
      const outcome = await cancelIfOverdue(o.db, o.redis, orderId, o.timeoutSeconds);
      if (outcome === 'cancelled') stats.byMessage++;
      if (outcome !== 'not-due' || tries >= NOT_DUE_MAX_TRIES || stopping) return;
      await sleep(NOT_DUE_RETRY_MS);
    }
  }

  function onMessage(s: ConsumerSession, m: ConsumeMessage): void {
    const settle = (fn: () => void) => settleOn(s, fn, 'timeout consumer');
    let orderIds: string[];
    try {
      orderIds = timeoutOrderIds(m.content);
    } catch {
      log.warn({ body: m.content.toString('utf8').slice(0, 200) }, 'unparseable timeout message dropped');
      return settle(() => s.ch.ack(m));
    }
    // Every order of the message, each on its own (a few at a time): one that refuses must not
    // hold up the others. True when the database was away for it.
    const expireOne = (orderId: string): Promise<boolean> =>
      expire(orderId).then(
        () => false,
        (err: Error) => {
          if (isTransientDbError(err)) {
            log.warn({ err: err.message, orderId }, 'timeout cancel failed; requeueing');
            return true;
          }
          // The order itself refuses (e.g. its return does not fit the stock): requeueing would spin
          // on it every second forever. The SQL backstop keeps trying it on its own, slower cadence.
          log.error({ err: err.message, orderId }, 'timeout cancel refused; left to the backstop');
          return false;
        },
      );
    const queue = [...orderIds];
    const again: boolean[] = [];
    const p = Promise.all(
      Array.from({ length: Math.min(MESSAGE_CONCURRENCY, queue.length) }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) again.push(await expireOne(id));
      }),
    )
      .then(async () => {
        if (!again.includes(true)) return settle(() => s.ch.ack(m));
        // The database is away: give the message back after a pause (the backstop also covers it);
        // its orders already cancelled are 'settled' the next time, nothing happens twice.
        await sleep(1000);
        settle(() => s.ch.nack(m, false, true));
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }

  async function backstop(): Promise<void> {
    // Returns owed first: they are cheap, and a stuck cancel below must not hold them up.
    stats.returnsCompleted += await completeOwedReturns(o.db, o.redis);
    const failed = new Set<string>();
    for (;;) {
      const ids = (await overdueUnpaidIds(o.db, o.timeoutSeconds, BACKSTOP_BATCH + failed.size)).filter((id) => !failed.has(id));
      // A backlog (after an outage) drains a few orders at a time, not one by one.
      const queue = [...ids];
      await Promise.all(
        Array.from({ length: BACKSTOP_CONCURRENCY }, async () => {
          for (let id = queue.shift(); id !== undefined && !stopping; id = queue.shift()) {
            try {
              if ((await cancelIfOverdue(o.db, o.redis, id, o.timeoutSeconds)) === 'cancelled') stats.byBackstop++;
            } catch (err) {
              // One order that cannot be cancelled (e.g. its voucher's stock disagrees) must not block the rest.
              failed.add(id);
              log.error({ err: (err as Error).message, orderId: id }, 'timeout backstop could not cancel an overdue order');
            }
          }
        }),
      );
      if (stopping) return;
      if (ids.length < BACKSTOP_BATCH || failed.size > 10 * BACKSTOP_BATCH) break;
    }
  }

  function backstopNow(): Promise<void> {
    sweeping ??= backstop()
      .catch((err: Error) => log.warn({ err: err.message }, 'timeout backstop failed; next round retries'))
      .finally(() => {
        sweeping = undefined;
      });
    return sweeping;
  }

  function scheduleSweep(): void {
    if (stopping || o.sweepIntervalMs <= 0) return;
    sweepTimer = setTimeout(() => void backstopNow().finally(scheduleSweep), o.sweepIntervalMs * (0.8 + Math.random() * 0.4));
  }

  const consumer = await startConsumer({
    name: 'timeout consumer',
    url: o.rabbitUrl,
    queue: names.timeoutQueue,
    prefetch: o.prefetch,
    registry: options.registry,
    setup: async (s) => {
      await assertTimeoutTopology(s.ch, o.timeoutSeconds * 1000);
      // The classic queues of earlier versions, if any, drained into these in the background (a
      // no-op once they are gone); every session start tries again, so one a still-running old
      // process kept alive is moved later (docs/rabbitmq.md#moving-the-classic-timeout-queues).
      moving ??= moveLegacyTimeoutQueues(s.conn, o.timeoutSeconds * 1000).finally(() => {
        moving = undefined;
      });
    },
    onMessage,
  });
  scheduleSweep();

  return {
    stats,
    backstopNow,
    async stop() {
      if (stopping) return;
      stopping = true;
      clearTimeout(sweepTimer);
      await consumer.stop(() => Promise.all([...inFlight, sweeping, moving]));
    },
  };
}
