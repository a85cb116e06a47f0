/**
 * Preheat / repair (DESIGN §5): rebuilds a voucher's Redis state from MySQL. Safe against grabs by
 * construction — the Lua step only unions buyers in, never lowers the initial stock and recomputes
 * the remaining stock in the same atomic step. Against other state changes (an admin lowering the
 * total reads MySQL, then shifts Redis) it runs under the voucher's state lock: a preheat that read
 * the old total between those two steps would put the old total back. The lock is re-entrant, so
 * admin code that already holds it calls in freely.
 */
import type Redis from 'ioredis';
import type { Executor } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { LockTimeoutError, withLock } from '@/lib/lock';
import { addStockRow, buyerIdPages, findSeckillVoucher } from '@/lib/seckill/seckill.repository';

export interface PreheatResult {
  initial: number;
  remaining: number;
  buyers: number;
}

async function applyPreheat(redis: Redis, voucherId: string, initial: number, begin: Date, end: Date, buyerIds: string[]): Promise<PreheatResult> {
  const [i, remaining, buyers] = await runScript<[number, number, number]>(
    redis,
    'seckill-preheat',
    [keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId)],
    [initial, begin.getTime(), end.getTime(), ...buyerIds],
  );
  return { initial: i, remaining, buyers };
}

/** One lock per voucher for every change to its sale state that is not a grab. */
export async function withSeckillStateLock<T>(voucherId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await withLock(`seckill-state:${voucherId}`, { leaseMs: 30_000, waitMs: 10_000 }, () => fn());
  } catch (e) {
    if (e instanceof LockTimeoutError) throw new AppError('CONFLICT', '该券正在被其他操作修改，请稍后重试');
    throw e;
  }
}

export function preheatVoucher(db: Executor, redis: Redis, voucherId: string): Promise<PreheatResult> {
  return withSeckillStateLock(voucherId, () => rebuild(db, redis, voucherId));
}

async function rebuild(db: Executor, redis: Redis, voucherId: string): Promise<PreheatResult> {
  const v = await findSeckillVoucher(db, voucherId);
  if (!v) throw notFound('秒杀券');
  let result: PreheatResult | undefined;
  for await (const page of buyerIdPages(db, voucherId)) {
    result = await applyPreheat(redis, voucherId, v.initialStock, v.beginTime, v.endTime, page);
  }
  result ??= await applyPreheat(redis, voucherId, v.initialStock, v.beginTime, v.endTime, []);
  // The outbox sweeper only looks at vouchers in this set.
  await redis.sadd(keys.seckillActive(), voucherId);
  return result;
}

/** Puts n more units on sale: the DB first (the source of truth), then Redis from the new total. */
export async function addSeckillStock(db: Executor, redis: Redis, voucherId: string, n: number): Promise<PreheatResult> {
  if (!Number.isInteger(n) || n <= 0) throw new AppError('VALIDATION', '追加库存必须是正整数');
  return withSeckillStateLock(voucherId, async () => {
    const initial = await addStockRow(db, voucherId, n);
    if (initial === undefined) throw notFound('秒杀券');
    const v = await findSeckillVoucher(db, voucherId);
    if (!v) throw notFound('秒杀券');
    return applyPreheat(redis, voucherId, initial, v.beginTime, v.endTime, []);
  });
}
