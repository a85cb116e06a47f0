import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { listMyOrders } from '@/lib/order/query';

const listQuery = z.object({
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  size: z.coerce.number().int().min(1).max(50).default(10),
}).strict();

/** My orders, newest first. */
export const GET = route({ auth: 'user' }, async ({ req, user }) => {
  const q = parseQuery(req, listQuery);
  return listMyOrders(db, user.id, q.page, q.size);
});
