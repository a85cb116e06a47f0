import { z } from 'zod';
import { route } from '@/lib/http/route';
import { expectNoBody, parseId, parseOptionalJson } from '@/lib/http/parse';
import { redis } from '@/lib/redis/client';
import { consume, consumeUnlessRedisDown } from '@/lib/rate-limit';
import { joinWaitlist, leaveWaitlist, waitlistView } from '@/lib/seckill/waitlist/waitlist';

/**
 * A sold-out flash sale's waitlist (docs/fair-sale.md#waitlist). GET: `{ waiting, offerMs, me }`,
 * `me` (with a session) is `{ state: 'none' | 'waiting', position? }` or
 * `{ state: 'offered', expiresInMs }`, and `gate` whether a room sale's bot gate is still to pass.
 * POST joins (idempotent; 409 NOT_SOLD_OUT while there is stock, 409 WAITLIST_FULL, 403 POW_FAILED
 * for a room sale's gate not passed: body `{ altcha }` passes it; a holder whose offer lapsed a
 * moment ago has it closed first, 503 + Retry-After in the unlikely case it is still open after),
 * DELETE leaves: both answer the new view.
 */
const joinBody = z
  .object({
    /** A room sale's bot-gate solution (GET …/room/challenge), for a user who has not passed it. */
    altcha: z.string().max(2048, '人机验证数据无效').optional(),
  })
  .strict()
  .default({});

export const GET = route({ auth: 'optional' }, async ({ params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await consumeUnlessRedisDown('shopReadIp', ip);
  return waitlistView(redis, voucherId, user?.id ?? null);
});

export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  const { altcha } = await parseOptionalJson(req, joinBody);
  await consume('waitlistUser', user.id);
  return joinWaitlist(redis, voucherId, user.id, altcha);
});

export const DELETE = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  await consume('waitlistUser', user.id);
  return leaveWaitlist(redis, voucherId, user.id);
});
