import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { grabVoucher, rememberedRefusal, type GrabResult } from '@/lib/seckill/grab';
import type { AppError } from '@/lib/errors';
import { andThen } from '@/lib/maybe-promise';

/**
 * Grab a flash-sale voucher: 200 `{ orderId, status: "pending" }`, or the refusal's own status.
 * Not async: a refusal this process remembers is returned as it is, without a promise or a throw
 * (lib/maybe-promise.ts, lib/http/route.ts).
 */
export const POST = route({ auth: 'user' }, ({ req, params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  return andThen<void, AppError | GrabResult>(expectNoBody(req), () => rememberedRefusal(redis, voucherId) ?? grabVoucher(db, redis, { voucherId, userId: user.id, ip }));
});
