import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseId, parseOptionalJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { grabVoucher } from '@/lib/seckill/grab';

// The grab takes nothing but the voucher in the path; a body, if any, must be an empty JSON object.
const grabBody = z.object({}).strict().optional();

/** Grab a flash-sale voucher: 200 `{ orderId, status: "pending" }`, or the refusal's own status. */
export const POST = route({ auth: 'user' }, async ({ req, params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await parseOptionalJson(req, grabBody);
  return grabVoucher(db, redis, { voucherId, userId: user.id, ip });
});
