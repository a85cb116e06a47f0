import { z } from 'zod';
import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { followList } from '@/lib/follow/follow.service';

const query = z.object({ direction: z.enum(['following', 'followers']).default('following') }).strict();

/** GET /api/users/{id}/follows?direction=following|followers — the newest 100. */
export const GET = route({ auth: 'none' }, async ({ req, params, ip }) => {
  const id = parseId(params.id, '用户 id');
  const { direction } = parseQuery(req, query);
  await consumeUnlessRedisDown('shopReadIp', ip);
  return followList(db, id, direction);
});
