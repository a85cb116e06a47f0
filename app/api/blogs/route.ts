import { route } from '@/lib/http/route';
import { parseJson, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume, consumeUnlessRedisDown } from '@/lib/rate-limit';
import { blogCreateSchema, pageQuerySchema } from '@/lib/blog/blog.schema';
import { createBlog, hotBlogs } from '@/lib/blog/blog.service';

/** GET /api/blogs?page — hot notes, most liked first. */
export const GET = route({ auth: 'optional' }, async ({ req, user, ip }) => {
  const { page } = parseQuery(req, pageQuerySchema);
  await consumeUnlessRedisDown('shopReadIp', ip);
  return hotBlogs(db, redis, page, user?.id ?? null);
});

/** POST /api/blogs {shopId,title,content,images[]} — publish a note; followers get it through the feed fan-out. */
export const POST = route({ auth: 'user' }, async ({ req, user }) => {
  const input = await parseJson(req, blogCreateSchema);
  await consume('blogWriteUser', user.id);
  return createBlog(db, user, input);
});
