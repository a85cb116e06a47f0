import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { pageQuerySchema } from '@/lib/blog/blog.schema';
import { shopBlogs } from '@/lib/blog/blog.service';

/** GET /api/shops/{id}/blogs?page — the shop's notes, newest first. */
export const GET = route({ auth: 'optional' }, async ({ req, params, user, ip }) => {
  const id = parseId(params.id, '商铺 id');
  const { page } = parseQuery(req, pageQuerySchema);
  await consumeUnlessRedisDown('shopReadIp', ip);
  return shopBlogs(db, redis, id, page, user?.id ?? null);
});
