/**
 * Where a bucketed flash sale's buckets live (docs/buckets.md#tags-and-homes). Bucket i of voucher
 * vid owns the hash tag bucketTag(vid, i, n); every key of the bucket carries it, so each bucket's
 * scripts stay single-slot. Bucket 0's tag is exactly `<vid>`: with n = 1 the keys are the ones a
 * sale always had. The other tags are chosen so the n slots fall in n different equal ranges of
 * the 16384 slots (a cluster created by redis-cli splits the slots that way over its masters), and
 * a user's home bucket is a stable function of the user id: one order per user is decided there.
 */
import { slotOf } from '@/lib/redis/slots';
import { MAX_BUCKETS } from '@/lib/seckill/buckets/limits';

export { MAX_BUCKETS };

const SLOTS = 16384;

/** Range r of n equal ranges: [start, end). */
const rangeStart = (r: number, n: number) => Math.floor((r * SLOTS) / n);

/** The range (0..n-1) a slot falls in. */
export const rangeOf = (slot: number, n: number) => Math.min(n - 1, Math.floor((slot * n) / SLOTS));

const tagMemory = new Map<string, string>();

/**
 * Bucket i's tag: `<vid>` for bucket 0; for i > 0 `<vid>.<i>.<salt>` with the smallest salt whose
 * slot lies in the middle half of range (range(bucket 0) + i) mod n, so a boundary drawn a slot
 * either way (redis-cli rounds) still puts it on that range's master. Deterministic: every
 * process computes the same tags. About 2n tries, remembered per process (a few bytes per bucket).
 */
export function bucketTag(vid: string, i: number, n: number): string {
  if (i === 0) return vid;
  if (!Number.isInteger(i) || !Number.isInteger(n) || i < 0 || i >= n || n > MAX_BUCKETS) throw new RangeError(`bucket ${i} of ${n}`);
  const memoKey = `${vid}/${i}/${n}`;
  const known = tagMemory.get(memoKey);
  if (known) return known;
  const r = (rangeOf(slotOf(`{${vid}}`), n) + i) % n;
  const start = rangeStart(r, n);
  const width = rangeStart(r + 1, n) - start;
  const lo = start + Math.floor(width / 4);
  const hi = start + Math.ceil((3 * width) / 4);
  for (let salt = 0; ; salt++) {
    const tag = `${vid}.${i}.${salt}`;
    const slot = slotOf(`{${tag}}`);
    if (slot >= lo && slot < hi) {
      if (tagMemory.size > 100_000) tagMemory.clear();
      tagMemory.set(memoKey, tag);
      return tag;
    }
  }
}

/** Every bucket's tag, bucket 0 first. */
export function bucketTags(vid: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => bucketTag(vid, i, n));
}

/**
 * The user's home bucket: the decimal id modulo n, computed on the digits (ids are validated
 * decimal strings; sequential ids spread evenly). Anything else (a test's name) is hashed.
 */
export function homeBucket(userId: string, n: number): number {
  if (n <= 1) return 0;
  let m = 0;
  for (let k = 0; k < userId.length; k++) {
    const d = userId.charCodeAt(k) - 48;
    m = d >= 0 && d <= 9 ? (m * 10 + d) % n : (m * 31 + userId.charCodeAt(k)) % n;
  }
  return m;
}
