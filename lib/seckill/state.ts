/** A voucher's live flash-sale numbers as RedisClient holds them (shop page, admin live stock). */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { movesInFlight } from '@/lib/seckill/buckets/move';
import { bucketTags } from '@/lib/seckill/buckets/tags';

export interface SeckillState {
  initial: number;
  remaining: number;
  buyers: number;
  pending: number;
  /** Returned units held by an open offer to a waiting user (docs/fair-sale.md#waitlist): neither stock nor bought. */
  offers: number;
  beginTime: string | null;
  endTime: string | null;
  /** A bucketed sale (docs/buckets.md): each bucket's numbers (the totals above are their sums), and units in a move not yet delivered. */
  buckets?: BucketState[];
  inFlight?: number;
}

export interface BucketState {
  initial: number;
  remaining: number;
  buyers: number;
  pending: number;
}

const iso = (ms: string | undefined) => (ms && Number.isFinite(Number(ms)) ? new Date(Number(ms)).toISOString() : null);

/** null when the voucher has not been preheated. */
export async function readSeckillState(redis: RedisClient, voucherId: string): Promise<SeckillState | null> {
  // Bucket 0 is the voucher's own keys: for N = 1 this one MULTI is the whole read, as it always was.
  const first = await readOne(redis, voucherId);
  const n = first?.bucketCount ?? 1;
  if (!first || n === 1) return first && withoutCount(first);
  // One MULTI per other bucket (each its own slot), and the journals: a total that includes units in flight.
  const [rest, moving] = await Promise.all([Promise.all(bucketTags(voucherId, n).slice(1).map((t) => readOne(redis, t))), movesInFlight(redis, voucherId, n)]);
  if (rest.some((p) => p === null)) return null;
  const ps = [first, ...(rest as (SeckillState & { bucketCount: number })[])];
  const total = (f: keyof BucketState) => ps.reduce((a, p) => a + p[f], 0);
  const inFlight = moving.reduce((a, m) => a + m.units, 0);
  return {
    initial: total('initial') + inFlight,
    remaining: total('remaining'),
    buyers: total('buyers'),
    pending: total('pending'),
    offers: ps.reduce((a, p) => a + p.offers, 0),
    beginTime: ps[0]!.beginTime,
    endTime: ps[0]!.endTime,
    buckets: ps.map(({ initial, remaining, buyers, pending }) => ({ initial, remaining, buyers, pending })),
    inFlight,
  };
}

const withoutCount = ({ bucketCount: _n, ...state }: SeckillState & { bucketCount: number }): SeckillState => state;

/** One bucket's (or an unbucketed sale's) numbers, and the bucket count its meta records (1 when absent). */
async function readOne(redis: RedisClient, voucherId: string): Promise<(SeckillState & { bucketCount: number }) | null> {
  const res = await redis
    .multi()
    .hgetall(keys.seckillMeta(voucherId))
    .get(keys.seckillStock(voucherId))
    .scard(keys.seckillBuyers(voucherId))
    .hlen(keys.seckillPending(voucherId))
    .zcard(keys.seckillOffers(voucherId))
    .exec();
  if (!res) throw new Error('redis transaction aborted');
  for (const [err] of res) if (err) throw err;
  const meta = res[0]![1] as Record<string, string>;
  if (!meta || meta.initial === undefined) return null;
  return {
    initial: Number(meta.initial),
    remaining: Number(res[1]![1] ?? 0),
    buyers: Number(res[2]![1]),
    pending: Number(res[3]![1]),
    offers: Number(res[4]![1]),
    beginTime: iso(meta.begin),
    endTime: iso(meta.end),
    bucketCount: Number(meta.buckets ?? 1) || 1,
  };
}
