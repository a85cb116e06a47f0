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
  /** Extends the lease (called on every tick). */
  renew(): Promise<void>;
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
      await redis.multi().zadd(key, 'XX', Date.now() + LEASE_MS, id).pexpire(key, LEASE_MS).exec();
    },
    release: async () => {
      await redis.zrem(key, id);
    },
  };
}
