import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { notFound } from '@/lib/errors';
import { findPublicUser } from '@/lib/follow/follow.repository';
import { commonFollows } from '@/lib/follow/follow.service';

/** GET /api/users/{id}/common — users both I and they follow (共同关注). */
export const GET = route({ auth: 'user' }, async ({ params, user }) => {
  const id = parseId(params.id, '用户 id');
  if (!(await findPublicUser(db, id))) throw notFound('用户');
  return commonFollows(db, redis, user.id, id);
});
