import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { shopPatch } from '@/lib/shop/shop.schema';
import { updateShop } from '@/lib/shop/shop.service';
import { consume } from '@/lib/rate-limit';

/** PUT /api/admin/shops/{id} — the owning merchant or an admin; DB first, then the cache is deleted. */
export const PUT = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const id = parseId(params.id, '商铺 id');
  return updateShop(db, redis, user, id, await parseJson(req, shopPatch));
});
