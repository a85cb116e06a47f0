import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { preheatVoucherAudited } from '@/lib/voucher/voucher-stock';
import { consume } from '@/lib/rate-limit';

/** Rebuilds the voucher's Redis state from MySQL; safe during a live sale. */
export const POST = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const id = parseId(params.id);
  await expectNoBody(req);
  return preheatVoucherAudited(db, redis, user, id);
});
