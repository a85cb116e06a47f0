import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { listMyOrders } from '@/lib/order/query';

const listQuery = z.object({
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  size: z.coerce.number().int().min(1).max(50).default(10),
}).strict();

/** My orders, newest first (counted with the order reads, per user). */
export const GET = route({ auth: 'user' }, async ({ req, user }) => {
  const q = parseQuery(req, listQuery);
  await consumeUnlessRedisDown('orderReadUser', user.id);
  return listMyOrders(db, user.id, q.page, q.size);
});
