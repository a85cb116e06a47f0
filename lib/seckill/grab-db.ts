/**
 * The original 黑马点评's synchronous flash sale, kept only as the benchmark baseline (e2e/bench/hooks/grab-in-db.mjs):
 * one MySQL transaction per grab — window check, one-per-user check, `stock > 0` decrement,
 * insert. Correct (the unique key backs the per-user check) but every grab queues on the
 * voucher's stock row.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { nextOrderId } from '@/lib/id';
import { hasOrderFor, insertOrder } from '@/lib/seckill/grab-db.repository';
import { findSeckillVoucher, takeStock } from '@/lib/seckill/seckill.repository';
import type { GrabInput, GrabResult } from '@/lib/seckill/grab';

export async function grabVoucherInDb(db: DB, redis: RedisClient, input: GrabInput): Promise<GrabResult> {
  const orderId = await nextOrderId(redis);
  try {
    await db.transaction().execute(async (trx) => {
      const v = await findSeckillVoucher(trx, input.voucherId);
      if (!v) throw notFound('秒杀券');
      const now = Date.now();
      if (now < v.beginTime.getTime()) throw new AppError('NOT_STARTED', '秒杀尚未开始');
      if (now >= v.endTime.getTime()) throw new AppError('ENDED', '秒杀已经结束');
      if (await hasOrderFor(trx, input.voucherId, input.userId)) throw new AppError('ALREADY_BOUGHT', '每人限抢一张，你已经抢过了');
      if (!(await takeStock(trx, input.voucherId, 1))) throw new AppError('SOLD_OUT', '已售罄');
      await insertOrder(trx, { id: orderId, userId: input.userId, voucherId: input.voucherId });
    });
  } catch (err) {
    // Two concurrent first grabs by one user both pass the check; the unique key stops the second.
    if ((err as { code?: string }).code === 'ER_DUP_ENTRY') throw new AppError('ALREADY_BOUGHT', '每人限抢一张，你已经抢过了');
    throw err;
  }
  return { orderId, status: 'created' };
}
