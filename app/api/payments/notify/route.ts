import { route } from '@/lib/http/route';
import { MAX_BODY_BYTES, readCapped } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { handlePaymentNotify } from '@/lib/payment/pay';
import { SIGNATURE_HEADER } from '@/lib/payment/signature';
import { consume } from '@/lib/rate-limit';

/** The payment provider's asynchronous result: HMAC-signed (401 otherwise), idempotent per transaction. */
export const POST = route({ auth: 'none' }, async ({ req, ip }) => {
  await consume('paymentNotifyClient', ip);
  return handlePaymentNotify(db, await readCapped(req, MAX_BODY_BYTES), req.headers.get(SIGNATURE_HEADER));
});
