import { route } from '@/lib/http/route';
import { json } from '@/lib/http/respond';
import { parseJson, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { createVoucherInput, listVouchersQuery } from '@/lib/voucher/voucher.schema';
import { listVouchers } from '@/lib/voucher/voucher.service';
import { createVoucher } from '@/lib/voucher/create-voucher';
import { consume } from '@/lib/rate-limit';

/** Vouchers of the caller's shops (all shops for an admin), filtered by shop and sale state. */
export const GET = route({ auth: 'merchant' }, async ({ req, user }) => listVouchers(db, redis, user, parseQuery(req, listVouchersQuery)));

/** Creates a normal or flash-sale voucher (fen, ISO times); a flash sale is preheated at once. */
export const POST = route({ auth: 'merchant' }, async ({ req, user }) => {
  await consume('consoleWriteUser', user.id);
  const input = await parseJson(req, createVoucherInput);
  return json(await createVoucher(db, redis, user, input), { status: 201 });
});
