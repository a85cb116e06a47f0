import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { getLiveStock } from '@/lib/admin/live-stock';
import { addStockInput } from '@/lib/voucher/voucher.schema';
import { addStock } from '@/lib/voucher/voucher-stock';
import { consume } from '@/lib/rate-limit';

export const dynamic = 'force-dynamic';

/** The flash-sale invariant numbers (docs/flash-sale.md#invariants) with their consistency verdict. */
export const GET = route({ auth: 'merchant' }, async ({ params, user }) => getLiveStock(db, redis, user, parseId(params.id)));

/** Adds `{ amount }` units to the sale, Redis and MySQL together. */
export const POST = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const id = parseId(params.id);
  const { amount } = await parseJson(req, addStockInput);
  return addStock(db, redis, user, id, amount);
});
