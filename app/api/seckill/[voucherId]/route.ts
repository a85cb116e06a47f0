import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { grabVoucher, rememberedRefusal, type GrabResult } from '@/lib/seckill/grab';
import type { AppError } from '@/lib/errors';
import { andThen } from '@/lib/maybe-promise';
import { grabTokenOf } from '@/lib/seckill/room/grab-gate';

// A refusal this process remembers (sold out, not started, ended) is about the sale, the same for
// whoever asks: it is answered before the session is read (lib/http/route.ts `known`), and again
// inside for one the process learned while this request's session was being read.
const remembered = (params: Record<string, string>) => rememberedRefusal(redis, params.voucherId ?? '') ?? undefined;

/**
 * Grab a flash-sale voucher: 200 `{ orderId, status: "pending" }`, or the refusal's own status.
 * A sale behind the waiting room is grabbed at the URL its grab token makes, `?g=<token>`
 * (docs/fair-sale.md#the-grab-token); a missing or bad token is refused here, without Redis.
 * Not async: a refusal this process remembers is returned as it is, without a promise or a throw
 * (lib/maybe-promise.ts, lib/http/route.ts).
 */
export const POST = route({ auth: 'user', known: remembered }, ({ req, params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  return andThen<void, AppError | GrabResult>(expectNoBody(req), () => {
    // A refusal this process remembers (sold out, not started, ended) is about the sale, true with
    // or without a token (the script, too, checks the window and the stock before the token): it
    // is answered before the token's HMAC is checked, so a sold-out room sale's storm costs what
    // an ordinary one's does.
    const remembered = rememberedRefusal(redis, voucherId);
    if (remembered) return remembered;
    const token = grabTokenOf(req.url, voucherId, user.id);
    if (typeof token === 'object' && token !== null) return token;
    return grabVoucher(db, redis, { voucherId, userId: user.id, ip, nonce: token });
  });
});
