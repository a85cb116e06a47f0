import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { AppError } from '@/lib/errors';
import { idempotencyKeySchema, payOrder } from '@/lib/payment/pay';
import { consume } from '@/lib/rate-limit';

/** Pay my unpaid order through the payment provider; an `Idempotency-Key` header makes a repeat answer the same. */
export const POST = route({ auth: 'user' }, async ({ req, params, user }) => {
  await consume('orderWriteUser', user.id);
  const orderId = parseId(params.id, '订单 id');
  await expectNoBody(req);
  const rawKey = req.headers.get('idempotency-key');
  const key = rawKey === null ? null : idempotencyKeySchema.safeParse(rawKey);
  if (key && !key.success) throw new AppError('VALIDATION', 'Idempotency-Key 须为 8–64 位字母、数字或 _ . : -');
  return payOrder(db, { userId: user.id, orderId, idempotencyKey: key ? key.data : null });
});
