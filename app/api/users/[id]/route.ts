import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { userProfile } from '@/lib/follow/follow.service';

/** GET /api/users/{id} — public profile with follower / following counts and whether I follow them. */
export const GET = route({ auth: 'optional' }, async ({ params, user, ip }) => {
  const id = parseId(params.id, '用户 id');
  await consumeUnlessRedisDown('shopReadIp', ip);
  return userProfile(db, redis, id, user?.id ?? null);
});
