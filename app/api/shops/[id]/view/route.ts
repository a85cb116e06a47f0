import { randomUUID } from 'node:crypto';
import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { getShopOrThrow } from '@/lib/shop/shop.service';
import { recordShopView, VISITOR_ID } from '@/lib/uv/uv';

const VISITOR_COOKIE = 'hmdp_vid';

/**
 * POST /api/shops/{id}/view — counts a shop page view (sent by the page once it is shown). The
 * visitor is the user id when logged in, otherwise a random id kept in a cookie for a year.
 */
export const POST = route({ auth: 'optional' }, async ({ req, params, user, ip }) => {
  const shopId = parseId(params.id, '商铺 id');
  await expectNoBody(req);
  // Counted before the lookup: an unknown id costs a MySQL read and a null marker in Redis.
  await consume('shopViewIp', ip);
  await getShopOrThrow(db, redis, shopId);
  const cookie = /(?:^|;\s*)hmdp_vid=([^;]+)/.exec(req.headers.get('cookie') ?? '')?.[1];
  const vid = cookie && VISITOR_ID.test(cookie) ? cookie : randomUUID();
  await recordShopView(redis, shopId, user ? `u:${user.id}` : `v:${vid}`);
  const res = Response.json({ data: { counted: true } });
  if (vid !== cookie) res.headers.append('set-cookie', `${VISITOR_COOKIE}=${vid}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax`);
  return res;
});
