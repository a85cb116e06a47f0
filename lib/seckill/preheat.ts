/**
 * Preheat / repair (docs/flash-sale.md#preheat-and-repair): rebuilds a voucher's Redis state from MySQL, safe during a live
 * sale. The Lua step only unions buyers in and recomputes the remaining stock from the initial
 * stock in one atomic step, so grabs interleave harmlessly; and it runs while this transaction
 * holds the voucher's stock row lock, so a concurrent add-stock (or admin edit) is either fully
 * before it or fully after it — a preheat can never write back a total that was just changed.
 * Units held by open waitlist offers are neither stock nor bought (docs/fair-sale.md#waitlist):
 * the script leaves them out of the recomputed stock.
 * It also rebuilds the sale's forfeit set (users who gave a unit back) from the cancelled and
 * refunded orders.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB, Executor } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { keepSaleKeys } from '@/lib/seckill/sale-expiry';
import { notifySeckillChanged } from '@/lib/seckill/refusal-memory';
import { runScript } from '@/lib/redis/scripts';
import { addStockRow, buyerIdPages, forfeitIdPages, goneBuyerIdPages, lockSeckillRow } from '@/lib/seckill/seckill.repository';
import { currentGateField, rebuildGate, type GateField } from '@/lib/seckill/reservation/gate';
import { findRoom } from '@/lib/seckill/room/room.repository';
import { bucketCount } from '@/lib/seckill/buckets/count';
import { preheatBuckets } from '@/lib/seckill/buckets/preheat';
import { bucketTags } from '@/lib/seckill/buckets/tags';

export interface PreheatResult {
  initial: number;
  remaining: number;
  buyers: number;
}

async function applyPreheat(redis: RedisClient, voucherId: string, initial: number, begin: Date, end: Date, gate: GateField, room: boolean, buyerIds: string[]): Promise<PreheatResult> {
  const [i, remaining, buyers] = await runScript<[number, number, number]>(
    redis,
    'seckill-preheat',
    [keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId), keys.seckillOffers(voucherId)],
    [initial, begin.getTime(), end.getTime(), gate, room ? '1' : '', ...buyerIds],
  );
  return { initial: i, remaining, buyers };
}

/** Runs fn in the caller's transaction, or in a new one when given the pool. */
function inTransaction<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : (db as DB).transaction().execute(fn);
}

export async function preheatVoucher(db: Executor, redis: RedisClient, voucherId: string): Promise<PreheatResult> {
  const result = await inTransaction(db, async (trx) => {
    const v = await lockSeckillRow(trx, voucherId);
    if (!v) throw notFound('秒杀券');
    // A reservation-only sale's sets first: the meta below admits by them (docs/fair-sale.md#a-redis-loss).
    const gate = await rebuildGate(trx, redis, voucherId);
    const room = (await findRoom(trx, voucherId)) !== undefined;
    if (v.buckets > 1) {
      // Stock buckets (docs/buckets.md): the gate's sets live in the voucher's own slot only.
      if (gate !== '') throw new AppError('VALIDATION', '分桶秒杀暂不支持预约抢购');
      if (room) throw new AppError('VALIDATION', '分桶秒杀暂不支持排队');
      return preheatBuckets(trx, redis, voucherId, v);
    }
    // Only grows, like the buyers: a return Redis forgot (restart, failover) is forfeited again —
    // first, so that none of them can grab while the next step runs.
    for await (const page of forfeitIdPages(trx, voucherId)) await redis.sadd(keys.seckillForfeit(voucherId), ...page);
    // A return Redis forgot (a failover to a replica that had not seen it) left its buyer in the
    // buyers set though MySQL says the unit came back: the stock recomputed below would stay one
    // short for good. Such users hold nothing (forfeited above, they cannot buy again). A user whose
    // return is still owed to Redis is not among them: that return moves the unit itself, to the
    // waitlist's head before the open stock (lua/seckill-return-8.lua); taken out here, the unit
    // would go to the open stock now and the return, finding them gone, would offer nothing.
    for await (const page of goneBuyerIdPages(trx, voucherId)) await redis.srem(keys.seckillBuyers(voucherId), ...page);
    let r: PreheatResult | undefined;
    for await (const page of buyerIdPages(trx, voucherId)) {
      r = await applyPreheat(redis, voucherId, v.initialStock, v.beginTime, v.endTime, gate, room, page);
    }
    r ??= await applyPreheat(redis, voucherId, v.initialStock, v.beginTime, v.endTime, gate, room, []);
    return r;
  });
  // The outbox sweeper only looks at vouchers in this set; a (re)opened sale's keys are permanent again.
  const tags = bucketTags(voucherId, await bucketCount(redis, voucherId));
  await Promise.all([redis.sadd(keys.seckillActive(), voucherId), ...tags.map((t) => keepSaleKeys(redis, t))]);
  // Window, status or stock may have changed (every console edit and take-down ends in a preheat):
  // no process may keep refusing from memory what Redis now sells.
  await notifySeckillChanged(redis, voucherId);
  return result;
}

/**
 * Puts n more units on sale, mid-sale included: MySQL and Redis change under the row lock; if
 * Redis fails the DB change rolls back, so the two never disagree about the total.
 */
export async function addSeckillStock(db: Executor, redis: RedisClient, voucherId: string, n: number): Promise<PreheatResult> {
  if (!Number.isInteger(n) || n <= 0) throw new AppError('VALIDATION', '追加库存必须是正整数');
  try {
    const result = await inTransaction(db, async (trx) => {
      const v = await lockSeckillRow(trx, voucherId);
      if (!v) throw notFound('秒杀券');
      await addStockRow(trx, voucherId, n);
      // A bucketed sale: the new units are spread over the buckets (lib/seckill/buckets/shares.ts).
      if (v.buckets > 1) return preheatBuckets(trx, redis, voucherId, { ...v, initialStock: v.initialStock + n });
      const room = (await findRoom(trx, voucherId)) !== undefined;
      return applyPreheat(redis, voucherId, v.initialStock + n, v.beginTime, v.endTime, await currentGateField(trx, voucherId), room, []);
    });
    await notifySeckillChanged(redis, voucherId); // "sold out" remembered anywhere is wrong now
    return result;
  } catch (err) {
    // Redis was raised but the commit failed: bring Redis back to what MySQL says.
    if (!(err instanceof AppError)) await preheatVoucher(db, redis, voucherId).catch((e: unknown) => log.error({ err: e, voucherId }, 'repair after failed add-stock failed'));
    throw err;
  }
}
