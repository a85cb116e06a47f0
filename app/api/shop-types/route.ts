import { route } from '@/lib/http/route';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { listShopTypes } from '@/lib/shop/shop.service';

export const GET = route({ auth: 'none' }, async ({ ip }) => {
  await consumeUnlessRedisDown('shopReadIp', ip);
  return listShopTypes(db, redis);
});
