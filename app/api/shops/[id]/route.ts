import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { getShopOrThrow } from '@/lib/shop/shop.service';

export const GET = route({ auth: 'none' }, async ({ params }) => getShopOrThrow(db, redis, parseId(params.id, '商铺 id')));
