import { z } from 'zod';
import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { grabPass } from '@/lib/seckill/room/grab-token';

const body = z
  .object({
    ticket: z.string({ error: '缺少排队凭证' }).min(1, '缺少排队凭证').max(200, '排队凭证无效'),
    altcha: z.string().max(2048, '人机验证数据无效').optional(),
  })
  .strict();

/**
 * An admitted ticket + the bot gate's solution → a one-time grab token and the grab URL it makes
 * (docs/fair-sale.md#the-grab-token): `{ token, grabUrl, expiresAt }`.
 */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await consume('roomGateUser', user.id);
  const input = await parseJson(req, body);
  return grabPass(db, redis, voucherId, user.id, input);
});
