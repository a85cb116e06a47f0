/**
 * Sending money back. A refund is decided in a transaction that also writes its tb_payment_attempt
 * row (the intent); the provider is called after the commit with that row's id as the refund's
 * idempotency id, so the request that decided it and the reconciler (lib/payment/reconcile.ts) may
 * both send it and the buyer is refunded once. Only when the provider agrees is it done: the payment
 * becomes refunded and, for a refund the merchant approved, the order moves 5 → 6 (and a seckill
 * unit goes back on sale) in the same transaction.
 */
import { retryDeadlock } from '@/lib/db/retry-deadlock';
import type { DB, Executor } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';
import { transitionReturningUnit } from '@/lib/order/lifecycle';
import { findLifecycleOrder, markRefunded } from '@/lib/order/lifecycle.repository';
import { markRefundDone, noteAttemptFailure, setPaymentStatus, type AttemptRow } from '@/lib/payment/payment.repository';
import type { PaymentProvider } from '@/lib/payment/provider';

/** The id the provider sees for a refund attempt: stable across retries. */
export const refundIdOf = (a: Pick<AttemptRow, 'id'>) => `rf-${a.id}`;

/** Records the provider's yes: false when another finisher already did. */
export async function completeRefund(db: DB, redis: RedisClient | null, a: AttemptRow): Promise<boolean> {
  const o = a.closesOrder ? await findLifecycleOrder(db, a.orderId) : undefined;
  let done = false;
  const finish = async (trx: Executor) => {
    done = false; // a deadlock victim's run is rolled back and runs again
    if (!(await markRefundDone(trx, a.id))) return false;
    done = true;
    if (a.refundOf) await setPaymentStatus(trx, a.refundOf, 'refund_due', 'refunded');
    return a.closesOrder ? markRefunded(trx, a.orderId) : false;
  };
  if (o && redis) {
    // 5 → 6 with the unit's return, in the transaction that records the refund done.
    await transitionReturningUnit(db, redis, o, finish);
  } else {
    await retryDeadlock(() => db.transaction().execute(finish));
  }
  return done;
}

/** Calls the provider for an owed refund and records the outcome. True when the refund is done. */
export async function sendRefund(db: DB, redis: RedisClient | null, provider: PaymentProvider, a: AttemptRow): Promise<boolean> {
  if (!a.txnId) throw new Error(`refund attempt ${a.id} names no transaction`);
  try {
    await provider.refund({ refundId: refundIdOf(a), orderId: a.orderId, txnId: a.txnId, amount: a.amount });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    log.error({ err: msg, attemptId: a.id, orderId: a.orderId }, 'refund refused or failed at the provider; it stays owed and the reconciler retries it');
    await noteAttemptFailure(db, a.id, msg).catch(() => {});
    return false;
  }
  await completeRefund(db, redis, a);
  return true;
}
