import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { updateVoucherInput } from '@/lib/voucher/voucher.schema';
import { getVoucher } from '@/lib/voucher/voucher.service';
import { updateVoucher } from '@/lib/voucher/update-voucher';
import { consume } from '@/lib/rate-limit';

export const GET = route({ auth: 'merchant' }, async ({ params, user }) => getVoucher(db, redis, user, parseId(params.id)));

/** Edits what the sale's state allows, or takes the voucher down with `{ status: 'taken_down' }`. */
export const PATCH = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const id = parseId(params.id);
  return updateVoucher(db, redis, user, id, await parseJson(req, updateVoucherInput));
});
