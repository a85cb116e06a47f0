/**
 * Buying a normal voucher (「购买」 on the shop page): no stock, no sale window, no Redis. The order
 * is written at once as unpaid, its payment timeout scheduled like a seckill order's, and from
 * there it follows the same pay / cancel / redeem / refund path. A user may hold at most
 * NORMAL_VOUCHER_USER_CAP unpaid or paid orders of one voucher (checked under the user's row lock).
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { nextOrderId } from '@/lib/id';
import { countLiveNormalOrders, insertNormalOrder, lockUserRow } from '@/lib/order/lifecycle.repository';
import { getMyOrder, type OrderDto } from '@/lib/order/query';
import { scheduleOrderTimeoutsSafely } from '@/lib/order/timeout-schedule';
import { findVoucherRow } from '@/lib/voucher/voucher.repository';

export async function buyNormalVoucher(db: DB, redis: RedisClient, input: { voucherId: string; userId: string }): Promise<OrderDto> {
  const v = await findVoucherRow(db, input.voucherId);
  if (!v) throw notFound('优惠券');
  if (v.type !== VoucherType.NORMAL) throw new AppError('CONFLICT', '秒杀券请在活动时间内抢购');
  if (v.status !== VoucherStatus.ON_SALE) throw new AppError('CONFLICT', '该券已下架');
  const orderId = await nextOrderId(redis);
  const at = Date.now();
  await db.transaction().execute(async (trx) => {
    await lockUserRow(trx, input.userId);
    if ((await countLiveNormalOrders(trx, input.voucherId, input.userId)) >= env.NORMAL_VOUCHER_USER_CAP) {
      throw new AppError('CONFLICT', `每人最多持有 ${env.NORMAL_VOUCHER_USER_CAP} 张未使用的该券`);
    }
    await insertNormalOrder(trx, { id: orderId, userId: input.userId, voucherId: input.voucherId });
  });
  await scheduleOrderTimeoutsSafely([{ orderId, at }]);
  return getMyOrder(db, redis, input.userId, orderId);
}
