import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { cancelByBuyer } from '@/lib/order/lifecycle';
import { getMyOrder } from '@/lib/order/query';
import { consume } from '@/lib/rate-limit';

/** Cancel my unpaid order; a flash-sale unit goes back on sale. */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  await consume('orderWriteUser', user.id);
  const orderId = parseId(params.id, '订单 id');
  await expectNoBody(req);
  await cancelByBuyer(db, redis, user.id, orderId);
  return getMyOrder(db, redis, user.id, orderId);
});
