import { route } from '@/lib/http/route';
import { parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redeemCode, redeemCodeSchema } from '@/lib/admin/merchant-orders';
import { consume } from '@/lib/rate-limit';

/** 核销: `{ code }` of a paid order at one of my shops → used, once. */
export const POST = route({ auth: 'merchant' }, async ({ req, user }) => {
  await consume('consoleWriteUser', user.id);
  const { code } = await parseJson(req, redeemCodeSchema);
  return redeemCode(db, user, code);
});
