import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { requestRefund } from '@/lib/order/lifecycle';
import { getMyOrder } from '@/lib/order/query';
import { consume } from '@/lib/rate-limit';

/** Ask for a refund of my paid, unused order (→ 退款中 until the merchant approves). */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  await consume('orderWriteUser', user.id);
  const orderId = parseId(params.id, '订单 id');
  await expectNoBody(req);
  await requestRefund(db, user.id, orderId);
  return getMyOrder(db, redis, user.id, orderId);
});
