/** npm run cache:warm — hot shops (logical expiry), type list, id lists and GEO indexes (lib/shop/shop.warm.ts). */
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { warmShopCaches } from '@/lib/shop/shop.warm';

try {
  const r = await warmShopCaches(db, redis);
  console.log(`cache warmed: ${r.hotShopIds.length} hot shops (${r.hotShopIds.join(', ')}), ${r.types} types (lists + GEO)`);
} finally {
  await closeDb();
  await closeRedis();
}
