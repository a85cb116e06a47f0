import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { getMyOrder } from '@/lib/order/query';

/** One of my orders: `state` pending → created (or failed). */
export const GET = route({ auth: 'user' }, async ({ params, user }) => getMyOrder(db, redis, user.id, parseId(params.id, '订单 id')));
