/**
 * The notify signature: header `x-payment-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>">` with PAYMENT_NOTIFY_SECRET. The timestamp is signed too, and a notify older
 * (or newer) than the tolerance is refused, so a captured call cannot be replayed later; one
 * replayed within the window only meets the transaction id's unique key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-payment-signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function signNotify(secret: string, body: string, t = Math.floor(Date.now() / 1000)): string {
  const mac = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${mac}`;
}

export function verifyNotify(secret: string, body: string, header: string | null, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!secret || !header) return false;
  const m = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header.trim());
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(nowSeconds - t) > SIGNATURE_TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'), 'hex');
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}
