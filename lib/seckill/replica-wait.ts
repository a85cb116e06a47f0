/**
 * WAIT 1 <ms> after an accepted grab: Redis replicates asynchronously, so a master that fails right
 * after the grab script can take the grab with it; waiting for one replica's acknowledgement
 * narrows that window to grabs still unacknowledged when the timeout ends. WAIT covers the writes
 * sent earlier on the same connection, so on a cluster it must go to the master that ran the
 * script: a pipeline led by a key of the voucher's slot is routed there.
 */
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';

/** How many replicas acknowledged (0 when none did within `ms`). */
export async function waitForReplica(redis: RedisClient, voucherId: string, ms: number): Promise<number> {
  const res = await redis.pipeline().exists(keys.seckillStock(voucherId)).wait(1, ms).exec();
  const [err, acked] = res?.[1] ?? [new Error('no reply to WAIT')];
  if (err) throw err;
  return Number(acked);
}
