import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { readFeed } from '@/lib/feed/feed.service';

const query = z
  .object({
    max: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    offset: z.coerce.number().int().min(0).max(10_000).default(0),
  })
  .strict();

/** GET /api/feed?max&offset — notes of the people I follow, newest first; pass back `next` for the following page. */
export const GET = route({ auth: 'user' }, async ({ req, user }) => {
  const q = parseQuery(req, query);
  return readFeed(db, redis, user.id, q.max === undefined ? null : { max: q.max, offset: q.offset });
});
