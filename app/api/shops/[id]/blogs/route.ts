import { route } from '@/lib/http/route';
import { parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { pageQuerySchema } from '@/lib/blog/blog.schema';
import { shopBlogs } from '@/lib/blog/blog.service';

/** GET /api/shops/{id}/blogs?page — the shop's notes, newest first. */
export const GET = route({ auth: 'optional' }, async ({ req, params, user }) =>
  shopBlogs(db, redis, parseId(params.id, '商铺 id'), parseQuery(req, pageQuerySchema).page, user?.id ?? null),
);
