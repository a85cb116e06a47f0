import { route } from '@/lib/http/route';
import { expectNoBody, parseId } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { approveRefundAsMerchant } from '@/lib/admin/merchant-orders';
import { consume } from '@/lib/rate-limit';

/** Approve a refund request of an order at one of my shops: refunded, and a flash-sale unit back on sale. */
export const POST = route({ auth: 'merchant' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const orderId = parseId(params.id, '订单 id');
  await expectNoBody(req);
  return approveRefundAsMerchant(db, redis, user, orderId);
});
