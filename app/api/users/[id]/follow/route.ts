import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { follow, unfollow } from '@/lib/follow/follow.service';

/** POST /api/users/{id}/follow — follow (idempotent). DELETE — unfollow (idempotent). */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '用户 id');
  await expectNoBody(req);
  await consume('followUser', user.id);
  return follow(db, redis, user.id, id);
});

export const DELETE = route({ auth: 'user' }, async ({ req, params, user }) => {
  const id = parseId(params.id, '用户 id');
  await expectNoBody(req);
  await consume('followUser', user.id);
  return unfollow(db, redis, user.id, id);
});
