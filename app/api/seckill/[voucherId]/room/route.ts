import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { lookRoom } from '@/lib/seckill/room/room';

/**
 * The waiting room of a room sale (docs/fair-sale.md#the-waiting-room). POST joins (idempotent:
 * the same user keeps the same place), GET looks: `{ state: none|waiting|admitted|soldout,
 * position, ahead, estimateMs, shuffled, issued, served, beginTime, ticket }`.
 */
export const GET = route({ auth: 'user' }, async ({ params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await consume('roomUser', user.id);
  return lookRoom(db, redis, voucherId, user.id, false);
});

export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  await consume('roomUser', user.id);
  return lookRoom(db, redis, voucherId, user.id, true);
});
