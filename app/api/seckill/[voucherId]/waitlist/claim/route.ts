import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { claimOffer } from '@/lib/seckill/waitlist/waitlist';

/**
 * Buy the returned unit the waitlist offered this user (docs/fair-sale.md#waitlist): 200
 * `{ orderId, status: "pending" }` exactly like a grab, 409 NO_OFFER, 410 OFFER_EXPIRED.
 */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  await consume('waitlistUser', user.id);
  return claimOffer(db, redis, voucherId, user.id);
});
