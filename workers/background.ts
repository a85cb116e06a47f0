/**
 * Every background consumer and loop, in one process (docs/rabbitmq.md#the-background-worker):
 * the order worker (orders queue → MySQL, the Redis outbox sweep: lib/order/worker.ts), the
 * payment-timeout consumer and its SQL backstop (lib/order/timeout.ts), the feed fan-out
 * (lib/feed/consumer.ts), social upkeep (lib/blog/upkeep.ts), the payment reconciler
 * (lib/payment/reconcile.ts) and the waitlist's offer expiry (lib/seckill/waitlist/offer-expiry.ts). The three AMQP consumers share lib/mq/consumer.ts. Run as many
 * copies as you like (competing consumers).
 * SIGTERM/SIGINT: stop consuming, finish and ack in-flight work, close connections, exit within 10 s.
 */
import { log } from '@/lib/log';
import { closeDb, db } from '@/lib/db/client';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { startOrderWorker } from '@/lib/order/worker';
import { startTimeoutWorker } from '@/lib/order/timeout';
import { startFeedConsumer } from '@/lib/feed/consumer';
import { startSocialUpkeep } from '@/lib/blog/upkeep';
import { env } from '@/lib/env';
import { lowerOwnPriority } from '@/lib/order/priority';
import { startPaymentReconciler } from '@/lib/payment/reconcile';
import { startOfferExpiry } from '@/lib/seckill/waitlist/offer-expiry';

// The signal handlers go in first: a SIGTERM while the parts start (a deploy, a test that stops a
// worker as soon as its metrics answer) must still stop them cleanly, not kill the process.
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
log.info('order worker starting');
// The grab path goes first when both want a core (docs/flash-sale.md#worker-priority).
lowerOwnPriority(env.WORKER_NICE);

const starting = (async () => {
  const worker = await startOrderWorker();
  // Their session metrics land on the order worker's /metrics beside its own.
  const registry = worker.metrics.registry;
  const timeouts = await startTimeoutWorker({ registry });
  const feedConsumer = await startFeedConsumer({ registry }); // 点评 feed fan-out, same process and shutdown
  const socialUpkeep = startSocialUpkeep(); // like counts follow the likes; uploads swept
  // Money the books still owe (refunds not confirmed, charges not settled), on the worker's /metrics.
  const reconciler = startPaymentReconciler({ db, redis, registry });
  // Waitlist offers past their expiry move on to the next waiter or back to the stock (docs/fair-sale.md#waitlist).
  const offerExpiry = startOfferExpiry({ redis });
  return [worker, timeouts, feedConsumer, socialUpkeep, reconciler, offerExpiry];
})();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'order worker stopping');
  const hardExit = setTimeout(() => {
    log.error('order worker did not stop within 10 s; exiting');
    process.exit(1);
  }, 10_000);
  hardExit.unref();
  try {
    const parts = await starting; // a signal during startup stops what started, once it has
    await Promise.all(parts.map((p) => p.stop()));
    await Promise.all([closeDb(), closeRedis(), closeMq()]);
    log.info('order worker stopped cleanly');
    process.exit(0);
  } catch (err) {
    log.error({ err }, 'order worker stop failed');
    process.exit(1);
  }
}

await starting;
log.info('order worker started');
