/**
 * Grabs and persisted orders per second over a sale, for the live chart. Both are counted by the
 * second Redis accepted the grab (the order's create_time, or `at` in the pending outbox), so
 * while the worker drains, the persisted line visibly catches up with the grabs line. At most
 * MAX_POINTS buckets: a long sale is shown as per-second averages over wider buckets.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { orderBuckets, orderTimeRange } from '@/lib/admin/stats.repository';
import { pendingEntriesRaw } from '@/lib/seckill/outbox';

export const MAX_POINTS = 120;
const BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
/** A live sale's chart runs up to now while it is this fresh; later only across the activity. */
const LIVE_TAIL_MS = 30 * 60_000;

export interface SalePoint {
  /** Bucket start, ISO. */
  t: string;
  /** Per second, averaged over the bucket. */
  grabs: number;
  persisted: number;
}
export interface SaleSeries {
  bucketSeconds: number;
  points: SalePoint[];
}

async function pendingTimes(redis: RedisClient, voucherId: string): Promise<number[]> {
  const values = await pendingEntriesRaw(redis, voucherId);
  const out: number[] = [];
  for (const v of values) {
    try {
      const at = Number((JSON.parse(v) as { at?: unknown }).at);
      if (Number.isFinite(at)) out.push(at);
    } catch {
      /* a malformed outbox entry is the sweeper's business, not the chart's */
    }
  }
  return out;
}

export function pickBucket(spanMs: number): number {
  return BUCKETS.find((b) => spanMs / 1000 / b <= MAX_POINTS) ?? BUCKETS[BUCKETS.length - 1]!;
}

export async function readSaleSeries(db: Executor, redis: RedisClient, voucherId: string, live: boolean, now = new Date()): Promise<SaleSeries> {
  const [range, pending] = await Promise.all([orderTimeRange(db, voucherId), pendingTimes(redis, voucherId).catch(() => [])]);
  let first = range ? range.first.getTime() : Infinity;
  let last = range ? range.last.getTime() : -Infinity;
  // A loop, not Math.min(...): the outbox can hold more entries than a call has arguments.
  for (const at of pending) {
    if (at < first) first = at;
    if (at > last) last = at;
  }
  if (!Number.isFinite(first)) return { bucketSeconds: 1, points: [] };
  const from = Math.floor(first / 1000) * 1000;
  let to = last;
  if (live && now.getTime() - from <= LIVE_TAIL_MS) to = Math.max(to, now.getTime());
  const bucketSeconds = pickBucket(to - from + 1000);
  const count = Math.floor((to - from) / 1000 / bucketSeconds) + 1;

  const persisted = await orderBuckets(db, voucherId, from, bucketSeconds);
  const pendingByBucket = new Map<number, number>();
  for (const at of pending) {
    const b = Math.floor((at - from) / 1000 / bucketSeconds);
    pendingByBucket.set(b, (pendingByBucket.get(b) ?? 0) + 1);
  }
  const rate = (n: number) => Math.round((n / bucketSeconds) * 10) / 10;
  const points: SalePoint[] = [];
  for (let b = 0; b < count; b++) {
    const done = persisted.get(b) ?? 0;
    points.push({ t: new Date(from + b * bucketSeconds * 1000).toISOString(), grabs: rate(done + (pendingByBucket.get(b) ?? 0)), persisted: rate(done) });
  }
  return { bucketSeconds, points };
}
