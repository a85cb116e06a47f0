import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { buyNormalVoucher } from '@/lib/order/normal-order';

/** 购买 a normal voucher: an unpaid order at once, then the usual pay / cancel / redeem / refund. */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.id, '优惠券 id');
  await expectNoBody(req);
  return buyNormalVoucher(db, redis, { voucherId, userId: user.id });
});
