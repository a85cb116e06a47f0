/**
 * Buying a normal voucher (「购买」 on the shop page): no stock, no sale window, no Redis. The order
 * is written at once as unpaid, its payment timeout scheduled like a seckill order's, and from
 * there it follows the same pay / cancel / redeem / refund path. A user may hold at most
 * NORMAL_VOUCHER_USER_CAP unpaid or paid orders of one voucher (checked under the user's row lock).
 *
 * Buy → cancel is free for the buyer but not for us (an order row and a timeout message each), so
 * besides the per-user rate limit a buy is refused once the user's orders of this voucher that
 * were cancelled in the last 24 h (by the buyer or the payment timeout) plus those unpaid now
 * reach NORMAL_VOUCHER_CANCEL_CAP. Counting the unpaid ones too is what makes the cap hold under
 * concurrency: buys are serialized by the user's row lock, a cancel only turns an unpaid order
 * into a cancelled one (the sum stays), so no burst of parallel buy + cancel loops gets more than
 * the cap of cancellations a day. Paying takes an order out of the sum.
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { nextOrderId } from '@/lib/id';
import { insertNormalOrder, lockUserRow } from '@/lib/order/lifecycle.repository';
import { countNormalOrders } from '@/lib/order/normal-order.repository';
import { consume } from '@/lib/rate-limit';
import { getMyOrder, type OrderDto } from '@/lib/order/query';
import { scheduleOrderTimeoutsSafely } from '@/lib/order/timeout-schedule';
import { findVoucherRow } from '@/lib/voucher/voucher.repository';

export async function buyNormalVoucher(db: DB, redis: RedisClient, input: { voucherId: string; userId: string }): Promise<OrderDto> {
  await consume('voucherBuyUser', input.userId);
  const v = await findVoucherRow(db, input.voucherId);
  if (!v) throw notFound('优惠券');
  if (v.type !== VoucherType.NORMAL) throw new AppError('CONFLICT', '秒杀券请在活动时间内抢购');
  if (v.status !== VoucherStatus.ON_SALE) throw new AppError('CONFLICT', '该券已下架');
  const orderId = await nextOrderId(redis);
  const at = Date.now();
  await db.transaction().execute(async (trx) => {
    await lockUserRow(trx, input.userId);
    const n = await countNormalOrders(trx, input.voucherId, input.userId);
    if (n.live >= env.NORMAL_VOUCHER_USER_CAP) {
      throw new AppError('CONFLICT', `每人最多持有 ${env.NORMAL_VOUCHER_USER_CAP} 张未使用的该券`);
    }
    if (n.cancelledToday + n.unpaid >= env.NORMAL_VOUCHER_CANCEL_CAP) {
      throw new AppError(
        'CANCEL_LIMIT',
        n.cancelledToday > 0
          ? `该券 24 小时内已取消 ${n.cancelledToday} 次，请先支付未付订单或明天再买`
          : `该券已有 ${n.unpaid} 笔未支付订单，请先支付`,
      );
    }
    // Taken down since the check above: nothing bought.
    if (!(await insertNormalOrder(trx, { id: orderId, userId: input.userId, voucherId: input.voucherId }))) throw new AppError('CONFLICT', '该券已下架');
  });
  await scheduleOrderTimeoutsSafely([{ orderId, at }]);
  return getMyOrder(db, redis, input.userId, orderId);
}
