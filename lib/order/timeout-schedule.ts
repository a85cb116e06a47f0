/**
 * Schedules the payment timeout of persisted orders: persistent messages into the delay queue
 * (lib/mq/topology.ts), confirmed by the broker. A message lost anyway (broker down at that
 * moment, crash before the publish) is covered by the SQL backstop in timeout.ts.
 *
 * One message per group of orders whose deadlines fall in the same DEADLINE_BUCKET_MS (a persisted
 * batch is usually one group): v2 `{v:2, orderIds:[…]}`, or v1 `{v:1, orderId}` for a group of one.
 * The group's message expires at its latest deadline, so no order is looked at early (and the
 * consumer re-checks each deadline by the DB clock anyway); lateness grows by < DEADLINE_BUCKET_MS.
 * One message per order had made these the broker's largest load in a flash sale.
 */
import type { ConfirmChannel } from 'amqplib';
import { z } from 'zod';
import { env } from '@/lib/env';
import { idSchema } from '@/lib/http/parse';
import { log } from '@/lib/log';
import { getPublishChannel } from '@/lib/mq/connection';
import { publishConfirmed } from '@/lib/mq/confirm';
import { names } from '@/lib/mq/topology';
import { PUBLISH_TIMEOUT_MS } from '@/lib/seckill/publish';

const MAX_ORDERS_PER_MESSAGE = 1000;
const DEADLINE_BUCKET_MS = 100;

export const timeoutMessageSchema = z.union([
  z.object({ v: z.literal(1), orderId: idSchema }),
  z.object({ v: z.literal(2), orderIds: z.array(idSchema).min(1).max(MAX_ORDERS_PER_MESSAGE) }),
]);

/** The orders a timeout message names; throws on anything else. */
export function timeoutOrderIds(body: Buffer): string[] {
  const m = timeoutMessageSchema.parse(JSON.parse(body.toString('utf8')));
  return m.v === 1 ? [m.orderId] : m.orderIds;
}

/** An order whose payment window started at `at` (ms since epoch: the grab, or the write of an order written late: payableFrom in lib/order/persist.ts). */
export interface TimeoutDue {
  orderId: string;
  at: number;
}

/**
 * The queue's TTL is the whole window; each message also carries the part of it still left, so a
 * message published late (a slow persist, a sweeper republish) still expires at the order's own
 * deadline. Messages enter in about deadline order, so the head-only expiry of per-message TTLs
 * holds none of them up for long.
 */
export async function scheduleOrderTimeouts(ch: ConfirmChannel, orders: TimeoutDue[], timeoutSeconds = env.ORDER_PAY_TIMEOUT_SECONDS): Promise<void> {
  const queue = names.timeoutDelayQueue(timeoutSeconds * 1000);
  const windowMs = timeoutSeconds * 1000;
  const buckets = new Map<number, TimeoutDue[]>();
  for (const o of orders) {
    const bucket = Math.floor((o.at + windowMs) / DEADLINE_BUCKET_MS);
    const b = buckets.get(bucket);
    if (b) b.push(o);
    else buckets.set(bucket, [o]);
  }
  const groups: TimeoutDue[][] = [];
  for (const b of buckets.values()) for (let i = 0; i < b.length; i += MAX_ORDERS_PER_MESSAGE) groups.push(b.slice(i, i + MAX_ORDERS_PER_MESSAGE));
  const now = Date.now();
  await Promise.all(
    groups.map((group) => {
      const latest = Math.max(...group.map((o) => o.at)) + windowMs;
      const body = group.length === 1 ? { v: 1, orderId: group[0]!.orderId } : { v: 2, orderIds: group.map((o) => o.orderId) };
      return publishConfirmed(
        ch,
        '',
        queue,
        Buffer.from(JSON.stringify(body)),
        {
          persistent: true,
          messageId: group.length === 1 ? `timeout-${group[0]!.orderId}` : `timeout-${group[0]!.orderId}-${group.length}`,
          contentType: 'application/json',
          // The deadline itself travels too: a move into another queue (lib/mq/queue-move.ts) can
          // then give the copy exactly what is left of the window.
          headers: { 'x-deadline': latest },
          expiration: String(Math.max(0, Math.min(windowMs, latest - now))),
        },
        PUBLISH_TIMEOUT_MS,
      );
    }),
  );
}

/**
 * Never throws: a failed schedule is logged and left to the backstop. True when the broker
 * confirmed every message (the timeouts now outlive this process), false when the backstop has them.
 */
export async function scheduleOrderTimeoutsSafely(orders: TimeoutDue[], channel: () => ConfirmChannel | Promise<ConfirmChannel> = getPublishChannel): Promise<boolean> {
  if (orders.length === 0) return true;
  try {
    await scheduleOrderTimeouts(await channel(), orders);
    return true;
  } catch (err) {
    log.warn({ err: (err as Error).message, orders: orders.length }, 'could not schedule payment timeouts; the SQL backstop will cancel them');
    return false;
  }
}
