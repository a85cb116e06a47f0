import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { grabVoucher } from '@/lib/seckill/grab';

/** Grab a flash-sale voucher: 200 `{ orderId, status: "pending" }`, or the refusal's own status. */
export const POST = route({ auth: 'user' }, async ({ req, params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  return grabVoucher(db, redis, { voucherId, userId: user.id, ip });
});
