import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { shopListQuery } from '@/lib/shop/shop.schema';
import { listShops } from '@/lib/shop/shop.service';

/** GET /api/shops?typeId&page&x&y — one page of a type's shops, nearest first when x,y are given. */
export const GET = route({ auth: 'none' }, async ({ req, ip }) => {
  const q = parseQuery(req, shopListQuery);
  await consumeUnlessRedisDown('shopReadIp', ip);
  return listShops(db, redis, q);
});
