import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { getShopVouchers } from '@/lib/shop/shop.service';

/** The shop page polls this every few seconds for the live remaining stock. */
export const GET = route({ auth: 'none' }, async ({ params }) => getShopVouchers(db, redis, parseId(params.id, '商铺 id')));
