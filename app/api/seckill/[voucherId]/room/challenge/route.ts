import { route } from '@/lib/http/route';
import { parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { roomChallenge } from '@/lib/seckill/room/challenge';

/**
 * The bot gate's challenge for this user and sale (docs/fair-sale.md#the-bot-gate), as the altcha
 * widget reads it: the challenge JSON itself, not wrapped in `{ data }`.
 */
export const GET = route({ auth: 'user' }, async ({ params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await consume('roomGateUser', user.id);
  return Response.json(await roomChallenge(db, redis, voucherId, user.id), { headers: { 'cache-control': 'no-store' } });
});
