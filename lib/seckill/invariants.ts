/**
 * The invariants for one voucher, read from Redis and MySQL. Tests, the benchmark and the proof
 * suite assert them; they only hold while nothing is in flight (or after the drain). "DB orders"
 * are live orders: a cancelled or refunded order gave its unit back to both stores.
 *
 *   Redis stock + |buyers| + |offers| (+ units in a stock move, bucketed) = initial; bucketed: the same per bucket
 *                                           DB stock + live DB orders = initial (Redis = DB initial)
 *   |buyers| = live DB orders + |pending| + returns still owed to Redis
 *   every live DB buyer is a Redis buyer, nobody holds two live orders
 *   nobody both waits on the waitlist and holds an open offer
 *   drained: |pending| = 0 and DB orders = |buyers| ≤ initial
 */
import type { RedisClient } from '@/lib/redis/types';
import { db as defaultDb, type DB } from '@/lib/db/client';
import { redis as defaultRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { buyerIdPages, dbStockCounts } from '@/lib/seckill/seckill.repository';
import { readSeckillState } from '@/lib/seckill/state';
import { bucketTag, homeBucket } from '@/lib/seckill/buckets/tags';
import { waitKeys } from '@/lib/seckill/waitlist/tag';

export interface InvariantReport {
  voucherId: string;
  initial: number;
  redisStock: number;
  buyers: number;
  pending: number;
  /** Returned units offered to waiting users (docs/fair-sale.md#waitlist), not yet claimed or expired. */
  offers: number;
  dbInitial: number;
  dbStock: number;
  dbOrders: number;
  /** Units MySQL took back from cancelled / refunded orders that Redis has not yet. */
  returnsOwed: number;
  /** Orders beyond the stock ever put on sale. */
  oversold: number;
  /** Users with more than one order. */
  duplicates: number;
  /** DB buyers missing from the Redis buyers set. */
  dbBuyersNotInRedis: number;
  /** Users both on the waitlist and holding an open offer (a unit could reach them twice). */
  waitingWithOffer: number;
  violations: string[];
}

export async function checkInvariants(db: DB, redis: RedisClient, voucherId: string, opts: { drained?: boolean } = {}): Promise<InvariantReport> {
  const w = waitKeys(voucherId);
  const [state, counts, waitingWithOffer] = await Promise.all([
    readSeckillState(redis, voucherId),
    dbStockCounts(db, voucherId),
    // The waitlist and its offers share one tag (lib/seckill/waitlist/tag.ts), so one ZINTERCARD reads it.
    redis.zintercard(2, w.waitlist, w.offers),
  ]);
  if (!state) throw new Error(`voucher ${voucherId} is not preheated in Redis`);
  if (!counts) throw new Error(`voucher ${voucherId} has no tb_seckill_voucher row`);
  // A bucketed sale: each buyer is looked for in their home bucket (docs/buckets.md).
  const n = state.buckets?.length ?? 1;
  let dbBuyersNotInRedis = 0;
  for await (const page of buyerIdPages(db, voucherId)) {
    const groups = new Map<string, string[]>();
    for (const u of page) {
      const t = bucketTag(voucherId, homeBucket(u, n), n);
      groups.set(t, [...(groups.get(t) ?? []), u]);
    }
    for (const [t, ids] of groups) {
      const member = await redis.smismember(keys.seckillBuyers(t), ...ids);
      dbBuyersNotInRedis += member.filter((m) => m === 0).length;
    }
  }
  const r: InvariantReport = {
    voucherId,
    initial: state.initial,
    redisStock: state.remaining,
    buyers: state.buyers,
    pending: state.pending,
    offers: state.offers,
    dbInitial: counts.initialStock,
    dbStock: counts.stock,
    dbOrders: counts.orders,
    returnsOwed: counts.returnsOwedToRedis,
    oversold: Math.max(0, counts.orders - counts.initialStock),
    duplicates: counts.duplicateUsers,
    dbBuyersNotInRedis,
    waitingWithOffer,
    violations: [],
  };
  const v = r.violations;
  // Bucketed: the same in every bucket, and the buckets' initials plus the units in flight make the sale's.
  const inFlight = state.inFlight ?? 0;
  if (r.redisStock + r.buyers + r.offers + inFlight !== r.initial) v.push(`Redis stock ${r.redisStock} + buyers ${r.buyers} + offers ${r.offers} + in flight ${inFlight} ≠ initial ${r.initial}`);
  state.buckets?.forEach((b, i) => {
    if (b.remaining + b.buyers !== b.initial) v.push(`bucket ${i}: stock ${b.remaining} + buyers ${b.buyers} ≠ its initial ${b.initial}`);
    if (b.remaining < 0) v.push(`bucket ${i}: negative stock`);
  });
  if (r.dbStock + r.dbOrders !== r.dbInitial) v.push(`DB stock ${r.dbStock} + DB orders ${r.dbOrders} ≠ DB initial ${r.dbInitial}`);
  if (r.initial !== r.dbInitial) v.push(`Redis initial ${r.initial} ≠ DB initial ${r.dbInitial}`);
  if (r.buyers !== r.dbOrders + r.pending + r.returnsOwed) v.push(`buyers ${r.buyers} ≠ DB orders ${r.dbOrders} + pending ${r.pending} + returns owed ${r.returnsOwed}`);
  if (r.oversold > 0) v.push(`oversold by ${r.oversold}`);
  if (r.duplicates > 0) v.push(`${r.duplicates} users hold more than one order`);
  if (r.dbBuyersNotInRedis > 0) v.push(`${r.dbBuyersNotInRedis} DB buyers are not Redis buyers`);
  if (r.redisStock < 0 || r.dbStock < 0) v.push('negative stock');
  if (r.waitingWithOffer > 0) v.push(`${r.waitingWithOffer} users are on the waitlist and hold an open offer`);
  if (opts.drained) {
    if (r.pending !== 0) v.push(`drained but ${r.pending} orders still pending`);
    if (r.returnsOwed !== 0) v.push(`drained but ${r.returnsOwed} stock returns still owed to Redis`);
    if (r.dbOrders !== r.buyers || r.buyers > r.initial) v.push(`drained but DB orders ${r.dbOrders} / buyers ${r.buyers} / initial ${r.initial} disagree`);
  }
  return r;
}

/** Throws with every violated invariant listed; returns the numbers when all hold. */
export async function assertInvariants(voucherId: string, opts: { drained?: boolean; db?: DB; redis?: RedisClient } = {}): Promise<InvariantReport> {
  const r = await checkInvariants(opts.db ?? defaultDb, opts.redis ?? defaultRedis, voucherId, opts);
  if (r.violations.length > 0) {
    throw new Error(`seckill invariants violated for voucher ${voucherId}:\n  ${r.violations.join('\n  ')}\n${JSON.stringify({ ...r, violations: undefined })}`);
  }
  return r;
}
