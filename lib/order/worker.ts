/**
 * The order worker (docs/flash-sale.md#the-order-worker): consumes the orders queue with manual acks, persists in
 * batches, sweeps the outbox, reconnects to a broker that went away, and stops cleanly.
 * `workers/background.ts` runs it as a process; tests run it in-process with their own options.
 * The session, reconnect and stop are the shared consumer's (lib/mq/consumer.ts).
 */
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { Server } from 'node:http';
import type { RedisClient } from '@/lib/redis/types';
import { db as defaultDb, type DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { settle, startConsumer, type ConsumerSession } from '@/lib/mq/consumer';
import { publishConfirmed } from '@/lib/mq/confirm';
import { assertTopology, names, retryDelayFor } from '@/lib/mq/topology';
import { Batcher } from '@/lib/order/batcher';
import { createBatchHandler, type Delivery } from '@/lib/order/handler';
import { encodeOrderMessage, splitOrderBatch, type OrderMessage } from '@/lib/seckill/message';
import { createWorkerMetrics, serveMetrics, type WorkerMetrics } from '@/lib/order/metrics';
import { publishOrderOn, PUBLISH_TIMEOUT_MS } from '@/lib/seckill/publish';
import { sweepOutbox, type SweepStats } from '@/lib/seckill/sweeper';
import { scheduleOrderTimeoutsSafely } from '@/lib/order/timeout-schedule';
import { redis as defaultRedis } from '@/lib/redis/client';
import { startRedisRepair, type RedisRepair } from '@/lib/seckill/repair';

export interface OrderWorkerOptions {
  db?: DB;
  redis?: RedisClient;
  rabbitUrl?: string;
  prefetch?: number;
  batchSize?: number;
  batchWaitMs?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  sweepIntervalMs?: number;
  staleMs?: number;
  /** 0 = no metrics endpoint. */
  metricsPort?: number;
  /** How often to check whether Redis forgot writes and the live sales need a repair (lib/seckill/repair.ts); 0 = never. */
  repairCheckMs?: number;
  repairDelaysMs?: number[];
}

export interface OrderWorker {
  readonly metrics: WorkerMetrics;
  /** The Redis repair watcher (null when repairCheckMs is 0). */
  readonly repair: RedisRepair | null;
  /** Runs one outbox sweep now (tests; the timer runs them anyway). */
  sweepNow(): Promise<SweepStats | null>;
  /** Stop consuming, finish and ack in-flight work, close. Bounded to well under 10 s. */
  stop(): Promise<void>;
}

interface AmqpDelivery extends Delivery {
  session: ConsumerSession;
  messageId?: string;
}

/** A v2 message being settled order by order: acked once all are, requeued whole if any asks. */
class WholeMessage {
  private requeue = false;
  constructor(
    private open: number,
    private readonly settleAll: (requeue: boolean) => void,
  ) {}

  finish(again: boolean): void {
    this.requeue ||= again;
    if (--this.open === 0) this.settleAll(this.requeue);
  }
}

/**
 * One order of a v2 message, already parsed. A class, not an object of closures: a batch makes one
 * per order, and under tsx every closure is also named at run time.
 */
class BatchPart implements AmqpDelivery {
  private done = false;
  private encoded: Buffer | undefined;
  constructor(
    readonly session: ConsumerSession,
    readonly attempts: number,
    readonly msg: OrderMessage,
    private readonly whole: WholeMessage,
  ) {}

  get messageId(): string {
    return this.msg.orderId;
  }

  /** Only a retry or a dead letter needs the order on its own: encoded then, not per order. */
  get body(): Buffer {
    return (this.encoded ??= encodeOrderMessage(this.msg));
  }

  ack(): void {
    this.finish(false);
  }

  requeue(): void {
    this.finish(true);
  }

  private finish(again: boolean): void {
    if (this.done) return;
    this.done = true;
    this.whole.finish(again);
  }
}

const STOP_BUDGET_MS = 8000;

export async function startOrderWorker(options: OrderWorkerOptions = {}): Promise<OrderWorker> {
  const o = {
    db: options.db ?? defaultDb,
    redis: options.redis ?? defaultRedis,
    rabbitUrl: options.rabbitUrl ?? env.RABBITMQ_URL,
    prefetch: options.prefetch ?? env.WORKER_PREFETCH,
    batchSize: Math.max(1, options.batchSize ?? env.WORKER_BATCH_SIZE),
    batchWaitMs: options.batchWaitMs ?? env.WORKER_BATCH_WAIT_MS,
    maxAttempts: Math.max(1, options.maxAttempts ?? env.ORDER_MAX_ATTEMPTS),
    retryBaseMs: options.retryBaseMs ?? env.ORDER_RETRY_BASE_MS,
    sweepIntervalMs: options.sweepIntervalMs ?? env.OUTBOX_SWEEP_INTERVAL_MS,
    staleMs: options.staleMs ?? env.OUTBOX_STALE_MS,
    metricsPort: options.metricsPort ?? env.WORKER_METRICS_PORT,
    repairCheckMs: options.repairCheckMs ?? env.REDIS_REPAIR_CHECK_MS,
  };
  const metrics = createWorkerMetrics();
  let stopping = false;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<SweepStats | null> | undefined;
  let metricsServer: Server | undefined;

  /** The consuming session (lib/mq/consumer.ts): its confirm channel carries the worker's publishes. */
  let session: ConsumerSession | undefined;
  const liveConfirm = (d?: AmqpDelivery): ConfirmChannel => {
    const s = d?.session ?? session;
    if (!s?.alive || !s.confirm) throw new Error('no live broker channel');
    return s.confirm;
  };

  const handleBatch = createBatchHandler({
    db: o.db,
    redis: o.redis,
    metrics,
    maxAttempts: o.maxAttempts,
    isStopping: () => stopping,
    onPersisted: async (msgs) => {
      const scheduled = await scheduleOrderTimeoutsSafely(msgs, () => liveConfirm());
      (scheduled ? metrics.timeoutsScheduled : metrics.timeoutsUnscheduled).inc(msgs.length);
    },
    retryDelayMs: (attempts) => retryDelayFor(attempts, o.retryBaseMs),
    retry: (d, attempts, reason) =>
      publishConfirmed(liveConfirm(d as AmqpDelivery), '', names.retryQueue(retryDelayFor(attempts, o.retryBaseMs)), d.body, {
        persistent: true,
        messageId: (d as AmqpDelivery).messageId,
        contentType: 'application/json',
        headers: { 'x-attempts': attempts, 'x-last-error': reason.slice(0, 256) },
      }, PUBLISH_TIMEOUT_MS),
    deadCopy: (d, attempts, reason) =>
      publishConfirmed(liveConfirm(d as AmqpDelivery), names.deadExchange, '', d.body, {
        persistent: true,
        messageId: (d as AmqpDelivery).messageId,
        headers: { 'x-attempts': attempts, 'x-reason': reason.slice(0, 512) },
      }, PUBLISH_TIMEOUT_MS),
  });

  const batcher = new Batcher<AmqpDelivery>(
    handleBatch,
    o.batchSize,
    o.batchWaitMs,
    (err, batch) => {
      log.error({ err }, 'order batch failed unexpectedly; requeueing it');
      for (const d of batch) d.requeue();
    },
    (n) => metrics.buffered.set(n),
  );

  /**
   * One delivery per order: a v1 message is one; a v2 batch (lib/seckill/message.ts) becomes one per
   * order, each with its v1 body (so a retry or dead letter copies just that order), and the
   * broker's message is acked once every one of them is settled — or requeued whole if any asked
   * for it (the orders already written are then duplicates on redelivery, which insert nothing).
   */
  function toDeliveries(s: ConsumerSession, m: ConsumeMessage, settle: (fn: () => void) => void): AmqpDelivery[] {
    const attempts = Number(m.properties.headers?.['x-attempts'] ?? 0);
    const base = {
      session: s,
      attempts: Number.isFinite(attempts) && attempts > 0 ? Math.floor(attempts) : 0,
    };
    const parts = splitOrderBatch(m.content);
    if (!parts) {
      return [{
        ...base,
        body: m.content,
        messageId: typeof m.properties.messageId === 'string' ? m.properties.messageId : undefined,
        ack: () => settle(() => s.ch.ack(m)),
        requeue: () => settle(() => s.ch.nack(m, false, true)),
      }];
    }
    const whole = new WholeMessage(parts.length, (requeue) => settle(() => (requeue ? s.ch.nack(m, false, true) : s.ch.ack(m))));
    return parts.map((msg) => new BatchPart(s, base.attempts, msg, whole));
  }

  function sweepOnce(): Promise<SweepStats | null> {
    if (sweeping) return sweeping;
    if (!session?.alive) return Promise.resolve(null);
    sweeping = sweepOutbox({
      db: o.db,
      redis: o.redis,
      publish: (msg) => publishOrderOn(liveConfirm(), msg),
      staleMs: o.staleMs,
      claimMs: Math.max(100, o.sweepIntervalMs - 100),
      metrics,
    })
      .then((stats) => {
        if (stats.republished || stats.released) log.info(stats, 'outbox sweep');
        return stats;
      })
      .catch((err: Error) => {
        log.warn({ err: err.message }, 'outbox sweep failed; next round retries');
        return null;
      })
      .finally(() => {
        sweeping = undefined;
      });
    return sweeping;
  }

  function scheduleSweep(): void {
    if (stopping || o.sweepIntervalMs <= 0) return;
    // Jitter keeps several workers from sweeping in lockstep.
    const delay = o.sweepIntervalMs * (0.8 + Math.random() * 0.4);
    sweepTimer = setTimeout(() => void sweepOnce().finally(scheduleSweep), delay);
  }

  const consumer = await startConsumer({
    name: 'order worker',
    url: o.rabbitUrl,
    queue: names.ordersQueue,
    prefetch: o.prefetch,
    confirmChannel: true,
    registry: metrics.registry,
    setup: (s) => assertTopology(s.confirm!, o.retryBaseMs),
    onMessage: (s, m) => {
      for (const d of toDeliveries(s, m, (fn) => settle(s, fn, 'order worker'))) batcher.push(d);
    },
    onOpened: (s) => {
      session = s;
    },
    // Acks on a channel that died are meaningless: the broker redelivers those messages anyway.
    onLost: (s) => batcher.discard((d) => d.session !== s),
  });
  scheduleSweep();
  // Redis may forget accepted grabs (restart, failover): rebuild the live sales from MySQL then.
  const repair = o.repairCheckMs > 0 ? startRedisRepair({ db: o.db, redis: o.redis, checkMs: o.repairCheckMs, delaysMs: options.repairDelaysMs, repairs: metrics.repairs }) : null;
  if (o.metricsPort > 0) {
    metricsServer = serveMetrics(metrics.registry, o.metricsPort, env.HOST, (err) => log.warn({ err: err.message, port: o.metricsPort }, 'metrics endpoint unavailable'));
  }

  return {
    metrics,
    repair,
    sweepNow: sweepOnce,
    async stop() {
      if (stopping) return;
      stopping = true;
      clearTimeout(sweepTimer);
      repair?.stop();
      // Everything delivered before the cancel is in the batcher now: persist and ack it.
      await consumer.stop(() => Promise.all([batcher.idle(), sweeping]), STOP_BUDGET_MS);
      metricsServer?.close();
    },
  };
}
