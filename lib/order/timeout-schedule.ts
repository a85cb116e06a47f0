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

export async function scheduleOrderTimeouts(ch: ConfirmChannel, orderIds: string[], timeoutSeconds = env.ORDER_PAY_TIMEOUT_SECONDS): Promise<void> {
  const queue = names.timeoutDelayQueue(timeoutSeconds * 1000);
  await Promise.all(
    orderIds.map((orderId) =>
      publishConfirmed(ch, '', queue, Buffer.from(JSON.stringify({ v: 1, orderId })), { persistent: true, messageId: `timeout-${orderId}`, contentType: 'application/json' }, PUBLISH_TIMEOUT_MS),
    ),
  );
}

/** Never throws: a failed schedule is logged and left to the backstop. */
export async function scheduleOrderTimeoutsSafely(orderIds: string[], channel: () => ConfirmChannel | Promise<ConfirmChannel> = getPublishChannel): Promise<void> {
  if (orderIds.length === 0) return;
  try {
    await scheduleOrderTimeouts(await channel(), orderIds);
  } catch (err) {
    log.warn({ err: (err as Error).message, orders: orderIds.length }, 'could not schedule payment timeouts; the SQL backstop will cancel them');
  }
}
