import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume, consumeUnlessRedisDown } from '@/lib/rate-limit';
import { cancelReservation, reservationStatus, reserve } from '@/lib/seckill/reservation/reservation';

/**
 * A reservation-only flash sale (docs/fair-sale.md#reserving). GET: `{ gated, mode, reserved, me, draw }`
 * (`{ gated: false }` for an ordinary sale; a draw sale past its start is drawn on this look if
 * nobody did yet). POST reserves, DELETE cancels: both idempotent, both answer the new status.
 */
export const GET = route({ auth: 'optional' }, async ({ params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await consumeUnlessRedisDown('shopReadIp', ip);
  return reservationStatus(db, redis, voucherId, user?.id ?? null);
});

export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  await consume('reserveUser', user.id);
  return reserve(db, redis, voucherId, user.id);
});

export const DELETE = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  await consume('reserveUser', user.id);
  return cancelReservation(db, redis, voucherId, user.id);
});
