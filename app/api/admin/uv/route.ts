import { route } from '@/lib/http/route';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { trafficOfMyShops } from '@/lib/uv/console';

/** GET /api/admin/uv — daily UV (HyperLogLog estimate) and PV of my shops over the last 30 Beijing days. */
export const GET = route({ auth: 'merchant' }, async ({ user }) => trafficOfMyShops(db, redis, user));
