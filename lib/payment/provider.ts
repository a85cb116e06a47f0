/**
 * Payment providers, like the SMS one: an interface and a dev implementation. A provider either
 * pays at once (`paid`, with its transaction id) or later, by calling POST /api/payments/notify
 * with an HMAC-signed body (`pending`). The dev provider pays and refunds at once, with no money,
 * and refuses NODE_ENV=production unless ALLOW_DEV_PAYMENT_IN_PRODUCTION=true.
 *
 * Every call carries the id of its tb_payment_attempt row, written before the call: the provider
 * must treat a repeated id as the same operation (one charge per attemptId, one refund per
 * refundId), which is what lets the reconciler retry a call whose outcome was lost.
 */
import { env, isProduction } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';

export type ChargeResult = { kind: 'paid'; txnId: string } | { kind: 'pending' };
/** What the provider knows of an attempt: `none` = it never took money under that id. */
export type ChargeStatus = ChargeResult | { kind: 'none' };

/** Thrown by a provider when it is sure it took no money (declined, refused before charging). */
export class PaymentDeclined extends Error {
  constructor(message = 'payment declined') {
    super(message);
    this.name = 'PaymentDeclined';
  }
}

export interface PaymentProvider {
  readonly name: string;
  charge(c: { attemptId: string; orderId: string; amount: number }): Promise<ChargeResult>;
  /** The reconciler's question about a charge whose answer was lost. */
  chargeStatus(attemptId: string): Promise<ChargeStatus>;
  refund(r: { refundId: string; orderId: string; txnId: string; amount: number }): Promise<void>;
}

function refuseInProduction(): void {
  if (isProduction && !env.ALLOW_DEV_PAYMENT_IN_PRODUCTION) {
    log.error('the dev payment provider refuses NODE_ENV=production; configure a real provider or set ALLOW_DEV_PAYMENT_IN_PRODUCTION=true for a demo');
    throw new PaymentDeclined('the dev payment provider is off in production');
  }
}

/** The dev provider's transaction id is a function of the attempt: the same attempt never "pays" twice. */
const devTxn = (attemptId: string) => `dev-${attemptId}`;

export const devPaymentProvider: PaymentProvider = {
  name: 'dev',
  async charge(c) {
    refuseInProduction();
    return { kind: 'paid', txnId: devTxn(c.attemptId) };
  },
  async chargeStatus() {
    // It keeps no books (and the reconciler asks from another process): an attempt left unsettled
    // is answered as never charged, so the order stays unpaid and the buyer may pay again. No
    // money moved either way.
    return { kind: 'none' };
  },
  async refund(r) {
    log.info({ orderId: r.orderId, txnId: r.txnId, refundId: r.refundId, amount: r.amount }, 'dev payment: refunded');
  },
};

let override: PaymentProvider | null = null;

/** Tests swap in a provider that counts and fails on demand (e2e/support/fixtures/payment.ts); null restores. */
export function setPaymentProviderForTests(p: PaymentProvider | null): void {
  if (env.NODE_ENV !== 'test') throw new AppError('INTERNAL', 'payment provider override outside tests');
  override = p;
}

export function paymentProvider(): PaymentProvider {
  if (override) return override;
  switch (env.PAYMENT_PROVIDER) {
    case 'dev':
      return devPaymentProvider;
  }
}
