import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { pageQuerySchema } from '@/lib/blog/blog.schema';
import { userBlogs } from '@/lib/blog/blog.service';

/** GET /api/users/{id}/blogs?page — a user's notes, newest first. */
export const GET = route({ auth: 'optional' }, async ({ req, params, user, ip }) => {
  const id = parseId(params.id, '用户 id');
  const { page } = parseQuery(req, pageQuerySchema);
  await consumeUnlessRedisDown('shopReadIp', ip);
  return userBlogs(db, redis, id, page, user?.id ?? null);
});
