import { route } from '@/lib/http/route';
import { MAX_BODY_BYTES, readCapped } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { handlePaymentNotify } from '@/lib/payment/pay';
import { SIGNATURE_HEADER } from '@/lib/payment/signature';

/** The payment provider's asynchronous result: HMAC-signed (401 otherwise), idempotent per transaction. */
export const POST = route({ auth: 'none' }, async ({ req }) => handlePaymentNotify(db, await readCapped(req, MAX_BODY_BYTES), req.headers.get(SIGNATURE_HEADER)));
