import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { mintGrabPass } from '@/lib/seckill/room/grab-token';
import { grabVoucher } from '@/lib/seckill/grab';

const body = z
  .object({
    ticket: z.string({ error: '缺少排队凭证' }).min(1, '缺少排队凭证').max(200, '排队凭证无效'),
    altcha: z.string().max(2048, '人机验证数据无效').optional(),
    /** Grab with the token at once: the answer is the grab's (one round trip less per buyer). */
    grab: z.literal(true, { error: 'grab 只能为 true' }).optional(),
  })
  .strict();

/**
 * An admitted ticket + the bot gate's solution → a one-time grab token and the grab URL it makes
 * (docs/fair-sale.md#the-grab-token): `{ token, grabUrl, expiresAt }`. With `grab: true` the token
 * is spent on the grab here and the answer is the grab's (`{ orderId, status }` or its refusal),
 * exactly what POSTing the grab URL would answer.
 */
export const POST = route({ auth: 'user' }, async ({ req, params, user, ip }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await consume('roomGateUser', user.id);
  const input = await parseJson(req, body);
  const { pass, nonce } = await mintGrabPass(db, redis, voucherId, user.id, input);
  if (!input.grab) return pass;
  return grabVoucher(db, redis, { voucherId, userId: user.id, ip, nonce });
});
