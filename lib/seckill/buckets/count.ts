/**
 * How many buckets a flash sale has, as this process knows it (docs/buckets.md#how-a-process-knows-n).
 * N is fixed when the voucher is created and written into every bucket's meta (`buckets`, absent
 * for N = 1) before the first preheat script of the sale runs, so once bucket 0's meta exists its
 * answer is final: remembered for the life of the process, and the grab path asks Redis once per
 * voucher per process, never per grab.
 */
import type { RedisClient } from '@/lib/redis/types';
import { BoundedMemory } from '@/lib/bounded-memory';
import { keys } from '@/lib/redis/keys';
import { bucketTag, homeBucket } from '@/lib/seckill/buckets/tags';

const HOUR = 3_600_000;
const g = globalThis as unknown as { __hmdpBucketCounts?: BoundedMemory<number> };
const counts = (g.__hmdpBucketCounts ??= new BoundedMemory<number>(24 * HOUR, 50_000));

/** N when this process already knows it (no round trip), else null. */
export function knownBucketCount(vid: string): number | null {
  return counts.get(vid);
}

/**
 * N, from Redis when not yet known; when bucket 0 has no meta (not preheated, or Redis lost it),
 * from `fromDb` if given (MySQL's tb_seckill_voucher.buckets: N is fixed at creation), else 1 —
 * not remembered then.
 */
export async function bucketCount(redis: RedisClient, vid: string, fromDb?: () => Promise<number | null>): Promise<number> {
  const known = counts.get(vid);
  if (known !== null) return known;
  const [initial, buckets] = await redis.hmget(keys.seckillMeta(vid), 'initial', 'buckets');
  if (initial === null) {
    const n = fromDb ? await fromDb() : null;
    if (n === null || !Number.isInteger(n) || n < 1) return 1;
    counts.set(vid, n);
    return n;
  }
  const n = Number(buckets ?? 1);
  if (!Number.isInteger(n) || n < 1) throw new Error(`seckill:{${vid}}:meta has a bad bucket count ${String(buckets)}`);
  counts.set(vid, n);
  return n;
}

/** The tag of the user's home bucket (the voucher id itself for N = 1); `fromDb` as for bucketCount. */
export async function homeTag(redis: RedisClient, vid: string, userId: string, fromDb?: () => Promise<number | null>): Promise<string> {
  const n = await bucketCount(redis, vid, fromDb);
  return n === 1 ? vid : bucketTag(vid, homeBucket(userId, n), n);
}

/** Tests only: forget what this process learnt (a test reuses nothing, but may delete keys). */
export function forgetBucketCount(vid: string): void {
  counts.delete(vid);
}
