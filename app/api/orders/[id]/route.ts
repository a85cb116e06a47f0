import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { getMyOrder } from '@/lib/order/query';

/**
 * One of my orders: `state` pending → created (or failed). Counted per user before MySQL is read
 * (a created order still reads while Redis is down: the count is skipped then, not the read).
 */
export const GET = route({ auth: 'user' }, async ({ params, user }) => {
  const orderId = parseId(params.id, '订单 id');
  await consumeUnlessRedisDown('orderReadUser', user.id);
  return getMyOrder(db, redis, user.id, orderId);
});
