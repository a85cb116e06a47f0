/**
 * The grab path's publisher. An accepted grab answers 200 only once its order message is in
 * RabbitMQ: persistent, in a durable queue, confirmed by the broker. The Redis outbox alone is not
 * enough: Redis may forget an accepted grab (a Cluster failover — replication is asynchronous — or
 * a restart without fsync), and an outbox entry it forgot is an order nobody would ever write.
 *
 * Batched: the orders accepted in one event-loop turn go out right after the turn as ONE v2
 * message (up to MAX_BATCH_ORDERS orders each; lib/seckill/message.ts) with one confirm, and
 * `publishSoon` settles when that message's confirm arrives — no per-order round trip beyond the
 * confirm wait, and the broker stores, replicates and confirms one message per turn instead of
 * one per order (docs/hot-server.md#publishing-in-batches: the broker's CPU per order was the grab's largest cost).
 * It rejects on a nack, a dead channel or broker, or after PUBLISH_CONFIRM_TIMEOUT_MS; the caller
 * then gives the unit back (lib/seckill/grab.ts) and answers 503.
 *
 * Bounded: above MAX_UNCONFIRMED messages awaiting their confirm (a slow or absent broker), new
 * orders are refused at once instead of piling up in this process's memory.
 */
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { getPublishChannel } from '@/lib/mq/connection';
import { MAX_BATCH_ORDERS, type OrderMessage } from '@/lib/seckill/message';
import { publishOrderBatchOn } from '@/lib/seckill/publish';

export const MAX_UNCONFIRMED = 20_000;

/**
 * This order's message was not confirmed. `maybeSent`: it was handed to the channel, so the broker
 * may hold it all the same (a lost or late confirm); false when it never left this process (no
 * channel, or the publisher backed up).
 */
export class PublishUnconfirmedError extends Error {
  constructor(
    message: string,
    readonly maybeSent: boolean,
  ) {
    super(message);
    this.name = 'PublishUnconfirmedError';
  }
}

interface Queued {
  msg: OrderMessage;
  resolve: () => void;
  reject: (err: Error) => void;
  /** Handed to the channel. */
  sent?: boolean;
}

let queued: Queued[] = [];
let unconfirmed = 0;
let skipped = 0;
let lastWarn = 0;

/** Resolves once the broker has confirmed this order's message; rejects if it has not (see above). */
export function publishSoon(msg: OrderMessage): Promise<void> {
  if (unconfirmed + queued.length >= MAX_UNCONFIRMED) {
    skipped++;
    if (Date.now() - lastWarn > 5000) {
      lastWarn = Date.now();
      log.warn({ skipped, unconfirmed }, 'order publishes backed up; new grabs are refused with 503');
    }
    return Promise.reject(new PublishUnconfirmedError(`more than ${MAX_UNCONFIRMED} order publishes await their confirm`, false));
  }
  return new Promise<void>((resolve, reject) => {
    queued.push({ msg, resolve, reject });
    if (queued.length === 1) setImmediate(flush);
  });
}

function flush(): void {
  const batch = queued;
  queued = [];
  unconfirmed += batch.length;
  const timeoutMs = env.PUBLISH_CONFIRM_TIMEOUT_MS;
  let pending = batch.length;
  const done = () => {
    if (--pending === 0) clearTimeout(deadline);
    unconfirmed--;
  };
  // One deadline for the batch, the channel lookup included (a broker that accepts the TCP
  // connection but never answers would otherwise hold the grabs for the connect timeout).
  const settled = new Set<Queued>();
  const settle = (q: Queued, err?: unknown) => {
    if (settled.has(q)) return;
    settled.add(q);
    done();
    if (err === undefined) return q.resolve();
    const why = err instanceof Error ? err.message : String(err);
    log.warn({ orderId: q.msg.orderId, voucherId: q.msg.voucherId, err: why, maybeSent: q.sent === true }, 'order publish not confirmed');
    q.reject(new PublishUnconfirmedError(why, q.sent === true));
  };
  const deadline = setTimeout(() => {
    const err = new Error(`no publisher confirm within ${timeoutMs} ms`);
    for (const q of batch) settle(q, err);
  }, timeoutMs);
  getPublishChannel().then(
    (ch) => {
      const live = batch.filter((q) => !settled.has(q));
      for (let i = 0; i < live.length; i += MAX_BATCH_ORDERS) {
        const part = live.slice(i, i + MAX_BATCH_ORDERS);
        for (const q of part) q.sent = true;
        publishOrderBatchOn(ch, part.map((q) => q.msg), timeoutMs).then(
          () => part.forEach((q) => settle(q)),
          (err: unknown) => part.forEach((q) => settle(q, err)),
        );
      }
    },
    (err: unknown) => {
      for (const q of batch) settle(q, err);
    },
  );
}
