import { route } from '@/lib/http/route';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { listShopTypes } from '@/lib/shop/shop.service';

export const GET = route({ auth: 'none' }, async () => listShopTypes(db, redis));
