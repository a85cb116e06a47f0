import { z } from 'zod';
import { route } from '@/lib/http/route';
import { idSchema, parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { notFound } from '@/lib/errors';
import { findPublicUser } from '@/lib/follow/follow.repository';
import { commonFollows } from '@/lib/follow/follow.service';

const query = z.object({ after: idSchema.optional() }).strict();

/**
 * GET /api/users/{id}/common?after — users both I and they follow (共同关注), by id, 50 a page:
 * `{ items, total, next }`; pass `next` back as `after` for the following page.
 */
export const GET = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '用户 id');
  const { after } = parseQuery(req, query);
  if (!(await findPublicUser(db, id))) throw notFound('用户');
  return commonFollows(db, redis, user.id, id, after ?? null);
});
