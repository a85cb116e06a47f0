/**
 * RabbitMQ topology for orders, declared idempotently by every web and worker process.
 *
 *   orders exchange (direct) ──order.create──▶ orders queue (quorum) ──▶ worker
 *        ▲                                            │ failure: worker republishes with
 *        │ dead-letter after the delay                │ x-attempts+1 to a delay queue
 *   retry.<delay> queues (TTL, DLX = orders exchange) ◀┘
 *   dead exchange (fanout) ──▶ dead queue: messages past ORDER_MAX_ATTEMPTS or unparseable,
 *                                          with x-reason / x-attempts headers (the worker also
 *                                          files each one in tb_order_dead_letter for the admin)
 */
import type { Channel } from 'amqplib';
import { env } from '@/lib/env';

export const ORDER_ROUTING_KEY = 'order.create';
/** Delay tiers for retries, as multiples of the base; attempt n waits tier min(n-1, last). */
const RETRY_FACTORS = [1, 5, 25, 60];
export const retryDelays = (baseMs = env.ORDER_RETRY_BASE_MS) => RETRY_FACTORS.map((f) => f * baseMs);

export const names = {
  ordersExchange: `${env.MQ_PREFIX}.orders`,
  ordersQueue: `${env.MQ_PREFIX}.orders`,
  retryQueue: (delayMs: number) => `${env.MQ_PREFIX}.orders.retry.${delayMs}ms`,
  deadExchange: `${env.MQ_PREFIX}.orders.dead`,
  deadQueue: `${env.MQ_PREFIX}.orders.dead`,
  /**
   * Payment timeouts: a delay queue per timeout (TTL) dead-letters into the timeout queue. Both are
   * quorum queues under new names (`.v2`): a queue's type cannot change under its name (406
   * PRECONDITION_FAILED), so the classic ones of earlier versions (`legacy…`) are drained into
   * these by lib/mq/queue-move.ts and deleted (docs/rabbitmq.md#moving-the-classic-timeout-queues).
   */
  timeoutDelayQueue: (delayMs: number) => `${env.MQ_PREFIX}.orders.timeout.v2.delay.${delayMs}ms`,
  timeoutExchange: `${env.MQ_PREFIX}.orders.timeout`,
  timeoutQueue: `${env.MQ_PREFIX}.orders.timeout.v2`,
  legacyTimeoutDelayQueue: (delayMs: number) => `${env.MQ_PREFIX}.orders.timeout.delay.${delayMs}ms`,
  legacyTimeoutQueue: `${env.MQ_PREFIX}.orders.timeout`,
};
export const TIMEOUT_ROUTING_KEY = 'order.timeout';

export function retryDelayFor(attempt: number, baseMs = env.ORDER_RETRY_BASE_MS): number {
  const i = Math.min(Math.max(attempt - 1, 0), RETRY_FACTORS.length - 1);
  return RETRY_FACTORS[i]! * baseMs;
}

/**
 * Every queue here is a quorum queue (replicated; a new leader is elected when a node dies), so no
 * declaration on the grab path fails while one node is down (docs/rabbitmq.md#a-cluster).
 * Retry queues are named by their delay, so processes with another retry base never clash.
 */
export async function assertTopology(ch: Channel, retryBaseMs = env.ORDER_RETRY_BASE_MS): Promise<void> {
  await ch.assertExchange(names.ordersExchange, 'direct', { durable: true });
  await ch.assertQueue(names.ordersQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.bindQueue(names.ordersQueue, names.ordersExchange, ORDER_ROUTING_KEY);

  for (const delay of retryDelays(retryBaseMs)) {
    await ch.assertQueue(names.retryQueue(delay), {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': delay,
        'x-dead-letter-exchange': names.ordersExchange,
        'x-dead-letter-routing-key': ORDER_ROUTING_KEY,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
  }

  await ch.assertExchange(names.deadExchange, 'fanout', { durable: true });
  await ch.assertQueue(names.deadQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.bindQueue(names.deadQueue, names.deadExchange, '');
  await assertTimeoutTopology(ch);
}

/**
 * A TTL + dead-letter delay, as in the original 黑马点评 (订单超时或者订单取消): a timeout message waits out the
 * payment window in a delay queue no one consumes, whose per-queue TTL dead-letters it into the
 * timeout queue the worker consumes. One TTL per queue keeps expiry FIFO (a per-message TTL only
 * expires at the head); the queue is named by its delay so a changed timeout gets its own queue.
 *
 * Quorum queues both, with at-least-once dead-lettering (RabbitMQ 3.10+; it needs
 * `x-overflow: reject-publish`, else the broker silently falls back to at-most-once): an expired
 * message leaves the delay queue only once the timeout queue has confirmed it, so a timeout queue
 * that is electing a leader or briefly unreachable delays the message instead of dropping it.
 * The timeout queue is bound to the same exchange as the classic one of earlier versions, so
 * whatever an old classic delay queue still dead-letters reaches it too.
 */
export async function assertTimeoutTopology(ch: Channel, delayMs = env.ORDER_PAY_TIMEOUT_SECONDS * 1000): Promise<void> {
  await ch.assertExchange(names.timeoutExchange, 'direct', { durable: true });
  await ch.assertQueue(names.timeoutQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.bindQueue(names.timeoutQueue, names.timeoutExchange, TIMEOUT_ROUTING_KEY);
  await ch.assertQueue(names.timeoutDelayQueue(delayMs), {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-message-ttl': delayMs,
      'x-dead-letter-exchange': names.timeoutExchange,
      'x-dead-letter-routing-key': TIMEOUT_ROUTING_KEY,
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    },
  });
}

/**
 * Feed fan-out (lib/feed): a note published → one message → the worker delivers it to every
 * follower's inbox. A message that keeps failing is dead-lettered after FEED_DELIVERY_LIMIT tries.
 *   feed exchange (direct) ──feed.publish──▶ feed queue (quorum) ──▶ worker ──▶ feed.dead queue
 */
export const FEED_ROUTING_KEY = 'feed.publish';
export const FEED_DELIVERY_LIMIT = 10;
export const feedNames = {
  exchange: `${env.MQ_PREFIX}.feed`,
  queue: `${env.MQ_PREFIX}.feed`,
  deadExchange: `${env.MQ_PREFIX}.feed.dead`,
  deadQueue: `${env.MQ_PREFIX}.feed.dead`,
};

export async function assertFeedTopology(ch: Channel): Promise<void> {
  await ch.assertExchange(feedNames.deadExchange, 'fanout', { durable: true });
  await ch.assertQueue(feedNames.deadQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.bindQueue(feedNames.deadQueue, feedNames.deadExchange, '');
  await ch.assertExchange(feedNames.exchange, 'direct', { durable: true });
  await ch.assertQueue(feedNames.queue, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': FEED_DELIVERY_LIMIT, 'x-dead-letter-exchange': feedNames.deadExchange },
  });
  await ch.bindQueue(feedNames.queue, feedNames.exchange, FEED_ROUTING_KEY);
}
