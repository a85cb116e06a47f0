import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { getShopOrThrow } from '@/lib/shop/shop.service';

export const GET = route({ auth: 'none' }, async ({ params, ip }) => {
  const id = parseId(params.id, '商铺 id');
  await consumeUnlessRedisDown('shopReadIp', ip);
  return getShopOrThrow(db, redis, id);
});
