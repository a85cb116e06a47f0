/**
 * Payment providers, like the SMS one: an interface and a dev implementation. A provider either
 * pays at once (`paid`, with its transaction id) or later, by calling POST /api/payments/notify
 * with an HMAC-signed body (`pending`). The dev provider pays and refunds at once, with no money.
 */
import { randomUUID } from 'node:crypto';
import { env } from '@/lib/env';
import { log } from '@/lib/log';

export type ChargeResult = { kind: 'paid'; txnId: string } | { kind: 'pending' };

export interface PaymentProvider {
  readonly name: string;
  charge(order: { orderId: string; amount: number }): Promise<ChargeResult>;
  refund(payment: { orderId: string; txnId: string; amount: number }): Promise<void>;
}

export const devPaymentProvider: PaymentProvider = {
  name: 'dev',
  async charge() {
    return { kind: 'paid', txnId: `dev-${randomUUID()}` };
  },
  async refund(p) {
    log.info({ orderId: p.orderId, txnId: p.txnId, amount: p.amount }, 'dev payment: refunded');
  },
};

export function paymentProvider(): PaymentProvider {
  switch (env.PAYMENT_PROVIDER) {
    case 'dev':
      return devPaymentProvider;
  }
}
