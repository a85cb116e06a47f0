import { route } from '@/lib/http/route';
import { expectNoBody, parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume, consumeUnlessRedisDown } from '@/lib/rate-limit';
import { blogUpdateSchema } from '@/lib/blog/blog.schema';
import { deleteBlog, getBlogDetail, updateBlog } from '@/lib/blog/blog.service';

/** GET /api/blogs/{id} — the note with its first five likers (in like order) and comments. */
export const GET = route({ auth: 'optional' }, async ({ params, user, ip }) => {
  const id = parseId(params.id, '笔记 id');
  await consumeUnlessRedisDown('shopReadIp', ip);
  return getBlogDetail(db, redis, id, user?.id ?? null);
});

/** PUT /api/blogs/{id} {title?,content?} — the author edits the text. */
export const PUT = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '笔记 id');
  const patch = await parseJson(req, blogUpdateSchema);
  await consume('blogEditUser', user.id);
  return updateBlog(db, user, id, patch);
});

/** DELETE /api/blogs/{id} — the author deletes the note; it leaves every feed. */
export const DELETE = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '笔记 id');
  await expectNoBody(req);
  await consume('blogEditUser', user.id);
  return deleteBlog(db, redis, user, id);
});
