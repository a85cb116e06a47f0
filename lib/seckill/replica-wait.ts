/**
 * WAIT 1 <ms> after an accepted grab: Redis replicates asynchronously, so a master that fails right
 * after the grab script can take the grab with it; waiting for one replica's acknowledgement
 * narrows that window to grabs still unacknowledged when the timeout ends. WAIT covers the writes
 * sent earlier on the same connection, so on a cluster it must go to the master that ran the
 * script: a pipeline led by a key of the voucher's slot is routed there.
 *
 * A timed-out WAIT (0 replicas) does not fail the grab: the grab script already reserved the unit
 * and wrote the outbox entry, the order is published to RabbitMQ either way and reaches MySQL, so
 * a 503 would tell a buyer "failed" about an order they will get. What a failover forgets is the
 * Redis side (the buyer, the decrement), which the worker's repair rebuilds from MySQL
 * (lib/seckill/repair.ts). The timeout is logged (at most once per 5 s, with a count): it means
 * the voucher's master has no replica in sync, i.e. WAIT protects nothing right now.
 */
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';

/** How many replicas acknowledged (0 when none did within `ms`). */
export async function waitForReplica(redis: RedisClient, voucherId: string, ms: number): Promise<number> {
  const res = await redis.pipeline().exists(keys.seckillStock(voucherId)).wait(1, ms).exec();
  const [err, acked] = res?.[1] ?? [new Error('no reply to WAIT')];
  if (err) throw err;
  const n = Number(acked);
  if (n < 1) noteTimeout(voucherId, ms);
  return n;
}

let timedOut = 0;
let lastWarn = 0;
function noteTimeout(voucherId: string, ms: number): void {
  timedOut++;
  if (Date.now() - lastWarn < 5000) return;
  log.warn({ voucherId, waitMs: ms, timedOut }, 'WAIT 1: no replica acknowledged the grab in time; answered 200 anyway (repair covers a failover)');
  lastWarn = Date.now();
  timedOut = 0;
}
