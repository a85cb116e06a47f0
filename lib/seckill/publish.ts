/**
 * Puts an order message on the orders exchange: confirm channel, persistent, messageId = orderId.
 * Resolves only once the broker has taken responsibility for it; rejects on nack, on a dead
 * channel or after a timeout, so callers can fall back on the Redis outbox.
 */
import type { ConfirmChannel } from 'amqplib';
import { getPublishChannel } from '@/lib/mq/connection';
import { publishConfirmed } from '@/lib/mq/confirm';
import { names, ORDER_ROUTING_KEY } from '@/lib/mq/topology';
import { encodeOrderBatch, encodeOrderMessage, type OrderMessage } from '@/lib/seckill/message';

export const PUBLISH_TIMEOUT_MS = 3000;

/** On the process-wide publisher channel (web processes, admin replay). */
export async function publishOrder(msg: OrderMessage, timeoutMs = PUBLISH_TIMEOUT_MS): Promise<void> {
  await publishOrderOn(await getPublishChannel(), msg, timeoutMs);
}

/** On a given confirm channel (the worker publishes on its own connection). */
export function publishOrderOn(ch: ConfirmChannel, msg: OrderMessage, timeoutMs = PUBLISH_TIMEOUT_MS): Promise<void> {
  return publishConfirmed(
    ch,
    names.ordersExchange,
    ORDER_ROUTING_KEY,
    encodeOrderMessage(msg),
    { persistent: true, messageId: msg.orderId, contentType: 'application/json', timestamp: Math.floor(msg.at / 1000) },
    timeoutMs,
  );
}

/** Several orders as one v2 message (lib/seckill/message.ts): one persistent publish, one confirm. */
export function publishOrderBatchOn(ch: ConfirmChannel, msgs: OrderMessage[], timeoutMs = PUBLISH_TIMEOUT_MS): Promise<void> {
  if (msgs.length === 1) return publishOrderOn(ch, msgs[0]!, timeoutMs);
  return publishConfirmed(
    ch,
    names.ordersExchange,
    ORDER_ROUTING_KEY,
    encodeOrderBatch(msgs),
    { persistent: true, messageId: `batch-${msgs[0]!.orderId}-${msgs.length}`, contentType: 'application/json', timestamp: Math.floor(msgs[0]!.at / 1000) },
    timeoutMs,
  );
}
