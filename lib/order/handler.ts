/**
 * What the worker does with one batch of deliveries. Per message, exactly one of:
 *   persisted (or found already persisted) → ack, then its outbox entry is removed;
 *   its buyer already holds another order of the voucher → recorded as failed (ALREADY_BOUGHT),
 *   ack, outbox entry removed;
 *   unparseable → dead letter at once;
 *   failed for a reason of its own → retry queue with x-attempts + 1, dead letter once
 *   maxAttempts deliveries have failed;
 *   shutting down mid-way → left unacked, so the broker hands it to the next worker.
 * A database that is down or busy is not the message's fault: the batch waits and retries in
 * place with backoff (prefetch keeps the worker from taking more meanwhile), spending no attempts.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { log } from '@/lib/log';
import { Backoff } from '@/lib/backoff';
import { parseOrderMessage, type OrderMessage } from '@/lib/seckill/message';
import type { WorkerMetrics } from '@/lib/order/metrics';
import { insertDeadLetterOnce } from '@/lib/order/order.repository';
import { isTransientDbError, persistOrders, type PersistResult } from '@/lib/order/persist';
import { removePendingEntries } from '@/lib/seckill/outbox';
import { homeTag, knownBucketCount } from '@/lib/seckill/buckets/count';
import { holdPendingEntry } from '@/lib/order/retry-hold';
import { OFF_SALE_REASON } from '@/lib/order/off-sale';

export interface Delivery {
  /** The message body (for one order of a v2 batch: that order as a v1 body, encoded on demand). */
  readonly body: Buffer;
  /** Set when the order was already parsed and validated (an order of a v2 batch): body is not parsed again. */
  msg?: OrderMessage;
  /** Failed deliveries before this one (the x-attempts header). */
  attempts: number;
  ack(): void;
  /** Back to the queue now: used only when the message cannot be routed anywhere else. */
  requeue(): void;
}

export interface HandlerDeps {
  db: DB;
  redis: RedisClient;
  metrics: WorkerMetrics;
  maxAttempts: number;
  /** Publish a copy to the retry queue for this attempt count (resolves on broker confirm). */
  retry(d: Delivery, attempts: number, reason: string): Promise<void>;
  /** How long the retry queue holds a message after this many failed attempts. */
  retryDelayMs?(attempts: number): number;
  /** Publish a copy to the dead-letter queue (resolves on broker confirm). */
  deadCopy(d: Delivery, attempts: number, reason: string): Promise<void>;
  isStopping(): boolean;
  /** After the commit and ack: schedules the orders' payment timeouts (never throws). */
  onPersisted?(msgs: OrderMessage[]): Promise<void>;
}

class ShuttingDown extends Error {}

/** tb_order_dead_letter.payload is a TEXT: 65 535 bytes, not characters. */
const MAX_PAYLOAD_BYTES = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createBatchHandler(deps: HandlerDeps) {
  const { db, redis, metrics } = deps;

  async function untilDbAnswers<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const backoff = new Backoff(100, 5000);
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (!isTransientDbError(err)) throw err;
        metrics.dbStalls.inc();
        if (deps.isStopping()) throw new ShuttingDown();
        log.warn({ err: (err as Error).message, retryInMs: backoff.peek() }, `${what}: database unavailable, retrying`);
        await backoff.sleep();
      }
    }
  }

  async function deadLetter(d: Delivery, msg: OrderMessage | null, reason: string, attempts: number, kind: 'poison' | 'exhausted' | 'off-sale') {
    // A poison message's order id is never trusted: filed under it, it could stop the sweeper
    // from republishing a real pending order of that id. Its payload keeps everything.
    const ids = msg ?? { orderId: undefined, ...bestEffortIds(d.body) };
    try {
      await untilDbAnswers('dead letter', () =>
        insertDeadLetterOnce(db, {
          orderId: ids.orderId ?? null,
          voucherId: ids.voucherId ?? null,
          userId: ids.userId ?? null,
          payload: payloadText(d.body),
          reason,
          attempts,
        }),
      );
    } catch (err) {
      if (err instanceof ShuttingDown) return;
      log.error({ err, reason }, 'could not file a dead letter in MySQL; the dead-letter queue keeps it');
    }
    await deps.deadCopy(d, attempts, reason).catch((err: Error) => log.warn({ err: err.message }, 'dead-letter queue copy failed'));
    metrics.deadLettered.inc({ kind });
    log.warn({ orderId: ids.orderId, reason, attempts }, 'order message dead-lettered');
    d.ack();
  }

  async function retryOrDeadLetter(d: Delivery, msg: OrderMessage, reason: string) {
    const attempts = d.attempts + 1;
    if (attempts >= deps.maxAttempts) return deadLetter(d, msg, reason, attempts, 'exhausted');
    try {
      // Tell the sweeper this order is in retry, so it does not republish copies meanwhile.
      if (deps.retryDelayMs) await holdPendingEntry(redis, msg, deps.retryDelayMs(attempts));
      await deps.retry(d, attempts, reason);
      metrics.retried.inc();
      d.ack();
    } catch (err) {
      log.warn({ err: (err as Error).message, orderId: msg.orderId }, 'retry publish failed; requeueing');
      await sleep(1000);
      d.requeue();
    }
  }

  async function clearOutbox(msgs: OrderMessage[]) {
    // One HDEL per outbox: a voucher's, or with stock buckets its buyer's home bucket's
    // (docs/buckets.md); each is its own cluster slot. Failure only leaves entries the sweeper
    // will find in MySQL and remove.
    try {
      const byOutbox = new Map<string, string[]>();
      for (const m of msgs) {
        const tag = knownBucketCount(m.voucherId) === 1 ? m.voucherId : await homeTag(redis, m.voucherId, m.userId);
        const ids = byOutbox.get(tag);
        if (ids) ids.push(m.orderId);
        else byOutbox.set(tag, [m.orderId]);
      }
      await Promise.all([...byOutbox].map(([tag, ids]) => removePendingEntries(redis, tag, ids)));
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not clear outbox entries');
    }
  }

  async function settle(items: { d: Delivery; msg: OrderMessage }[]): Promise<void> {
    if (items.length === 0) return;
    const stopTimer = metrics.batchSeconds.startTimer();
    let r: PersistResult;
    try {
      r = await untilDbAnswers('persist orders', () => persistOrders(db, items.map((i) => i.msg)));
      stopTimer();
      metrics.persisted.inc(r.inserted);
      metrics.duplicates.inc(r.duplicates);
    } catch (err) {
      if (err instanceof ShuttingDown) return;
      // One bad message must not hold up the others: settle them one by one.
      if (items.length > 1) {
        for (const it of items) await settle([it]);
        return;
      }
      const it = items[0]!;
      return retryOrDeadLetter(it.d, it.msg, err instanceof Error ? err.message : String(err));
    }
    const offSale = new Set(r.offSale.map((m) => m.orderId));
    for (const it of items) if (offSale.has(it.msg.orderId)) await deadLetter(it.d, it.msg, OFF_SALE_REASON, it.d.attempts + 1, 'off-sale');
    for (const it of items) if (!offSale.has(it.msg.orderId)) it.d.ack();
    // A discarded or off-sale order's outbox entry stays for the sweeper, which gives its unit back once discarded.
    // A failed (folded) one is done: its unit is the one the buyer's kept order holds, so its entry goes.
    const done = items.map((i) => i.msg).filter((m) => !r.discarded.has(m.orderId) && !offSale.has(m.orderId));
    await clearOutbox(done);
    if (r.folded.length > 0) {
      metrics.folded.inc(r.folded.length);
      log.warn({ folded: r.folded.map((f) => ({ orderId: f.orderId, keptOrderId: f.keptOrderId })) }, 'orders folded into the order their buyer already holds; recorded as failed');
    }
    // Each timeout from the instant its window starts, as persistOrders wrote it (later than the grab for an order written late).
    await deps.onPersisted?.(done.filter((m) => !r.failed.has(m.orderId)).map((m) => ({ ...m, at: r.payableAt.get(m.orderId) ?? m.at })));
  }

  return async function handleBatch(batch: Delivery[]): Promise<void> {
    const valid: { d: Delivery; msg: OrderMessage }[] = [];
    for (const d of batch) {
      if (d.msg) {
        valid.push({ d, msg: d.msg });
        continue;
      }
      const parsed = parseOrderMessage(d.body);
      if (parsed.ok) valid.push({ d, msg: parsed.msg });
      else await deadLetter(d, null, parsed.reason, d.attempts + 1, 'poison');
    }
    await settle(valid);
  };
}

/**
 * The body as UTF-8 text of at most MAX_PAYLOAD_BYTES, cut between characters. Counted in
 * characters, Chinese text (3 bytes each) or bytes that are not UTF-8 at all (each read as U+FFFD,
 * 3 bytes) overflowed the column, and the dead letter was never filed where the admin looks.
 */
function payloadText(body: Buffer): string {
  const text = body.toString('utf8');
  const utf8 = Buffer.from(text);
  if (utf8.length <= MAX_PAYLOAD_BYTES) return text;
  let end = MAX_PAYLOAD_BYTES;
  while (end > 0 && (utf8[end]! & 0xc0) === 0x80) end--; // back to the first byte of the character the cut falls in
  return utf8.subarray(0, end).toString('utf8');
}

/** For a poison message that is JSON of the wrong shape, keep the voucher and user it names (for the admin's filters). */
function bestEffortIds(body: Buffer): { voucherId?: string; userId?: string } {
  try {
    const o = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const id = (v: unknown) => (typeof v === 'string' && /^[1-9]\d{0,18}$/.test(v) ? v : undefined);
    return { voucherId: id(o.voucherId), userId: id(o.userId) };
  } catch {
    return {};
  }
}
