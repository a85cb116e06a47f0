/**
 * Schedules the payment timeout of persisted orders: one persistent message per order into the
 * delay queue (lib/mq/topology.ts), confirmed by the broker. A message lost anyway (broker down at
 * that moment, crash before the publish) is covered by the SQL backstop in timeout.ts.
 */
import type { ConfirmChannel } from 'amqplib';
import { z } from 'zod';
import { env } from '@/lib/env';
import { idSchema } from '@/lib/http/parse';
import { log } from '@/lib/log';
import { getPublishChannel } from '@/lib/mq/connection';
import { publishConfirmed } from '@/lib/mq/confirm';
import { names } from '@/lib/mq/topology';
import { PUBLISH_TIMEOUT_MS } from '@/lib/order/publish';

export const timeoutMessageSchema = z.object({ v: z.literal(1), orderId: idSchema });

/** An order whose payment window started at `at` (ms since epoch: when the grab was accepted). */
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
  const now = Date.now();
  await Promise.all(
    orders.map(({ orderId, at }) =>
      publishConfirmed(
        ch,
        '',
        queue,
        Buffer.from(JSON.stringify({ v: 1, orderId })),
        {
          persistent: true,
          messageId: `timeout-${orderId}`,
          contentType: 'application/json',
          expiration: String(Math.max(0, Math.min(timeoutSeconds * 1000, at + timeoutSeconds * 1000 - now))),
        },
        PUBLISH_TIMEOUT_MS,
      ),
    ),
  );
}

/** Never throws: a failed schedule is logged and left to the backstop. */
export async function scheduleOrderTimeoutsSafely(orders: TimeoutDue[], channel: () => ConfirmChannel | Promise<ConfirmChannel> = getPublishChannel): Promise<void> {
  if (orders.length === 0) return;
  try {
    await scheduleOrderTimeouts(await channel(), orders);
  } catch (err) {
    log.warn({ err: (err as Error).message, orders: orders.length }, 'could not schedule payment timeouts; the SQL backstop will cancel them');
  }
}
