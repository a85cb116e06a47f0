import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { toggleLike } from '@/lib/blog/like';

/** POST /api/blogs/{id}/like — toggles my like: `{ isLiked, liked }`. */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '笔记 id');
  await expectNoBody(req);
  await consume('likeUser', user.id);
  return toggleLike(db, redis, id, user.id);
});
