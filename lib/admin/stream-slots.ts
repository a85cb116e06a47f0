/**
 * Live streams per user are capped, and each stream holds a slot only while it runs: the slots are
 * a sorted set `stream:live:{userId}` (stream id → lease expiry, ms). A stream that dies without
 * closing (process killed) frees its slot when its lease runs out; the set itself expires with the
 * last lease. One key per command: Cluster-safe.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';

export const MAX_STREAMS_PER_USER = 5;
const LEASE_MS = 30_000;

export interface StreamSlot {
  /**
   * Extends the lease (called on every tick). False: the lease had run out (a tick stalled past
   * it) and the user's other streams took the slots meanwhile; the stream must end.
   */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

/** A slot, or null when the user already has MAX_STREAMS_PER_USER live streams. */
export async function takeStreamSlot(redis: RedisClient, userId: string): Promise<StreamSlot | null> {
  const key = keys.liveStreams(userId);
  const id = randomBytes(8).toString('hex');
  const now = Date.now();
  const res = await redis.multi().zremrangebyscore(key, '-inf', now).zadd(key, now + LEASE_MS, id).zcard(key).pexpire(key, LEASE_MS).exec();
  const count = Number(res?.[2]?.[1] ?? 0);
  if (count > MAX_STREAMS_PER_USER) {
    await redis.zrem(key, id);
    return null;
  }
  return {
    renew: async () => {
      // Not ZADD XX: a stream whose lease ran out (its tick waited on MySQL for longer) was
      // dropped from the set, so refreshing only a lease still there did nothing and it streamed
      // on without a slot, beside new ones that took the freed slots (10 for a cap of 5). It takes
      // a slot again, under the cap as takeStreamSlot does, or is told to stop.
      const at = Date.now();
      const res = await redis.multi().zremrangebyscore(key, '-inf', at).zadd(key, at + LEASE_MS, id).zcard(key).pexpire(key, LEASE_MS).exec();
      if (Number(res?.[1]?.[1] ?? 0) === 0) return true; // its lease was there: moved on
      if (Number(res?.[2]?.[1] ?? 0) <= MAX_STREAMS_PER_USER) return true;
      await redis.zrem(key, id);
      return false;
    },
    release: async () => {
      await redis.zrem(key, id);
    },
  };
}
