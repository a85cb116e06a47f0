import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { userProfile } from '@/lib/follow/follow.service';

/** GET /api/users/{id} — public profile with follower / following counts and whether I follow them. */
export const GET = route({ auth: 'optional' }, async ({ params, user }) => userProfile(db, redis, parseId(params.id, '用户 id'), user?.id ?? null));
