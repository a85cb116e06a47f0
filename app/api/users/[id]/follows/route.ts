import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { followList } from '@/lib/follow/follow.service';

const query = z.object({ direction: z.enum(['following', 'followers']).default('following') }).strict();

/** GET /api/users/{id}/follows?direction=following|followers — the newest 100. */
export const GET = route({ auth: 'none' }, async ({ req, params }) => followList(db, parseId(params.id, '用户 id'), parseQuery(req, query).direction));
