/**
 * A payment provider for tests that keeps books like a real one: every charge that took money,
 * every refund, keyed by the attempt / refund id it was given (a repeated id is the same
 * operation, as the interface demands), and faults on demand: decline, throw before charging
 * (nothing taken), throw after charging (money taken, answer lost), answer pending, throw on refund.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PaymentDeclined, type ChargeResult, type ChargeStatus, type PaymentProvider } from '@/lib/payment/provider';

export type ChargeFault = 'decline' | 'throw-before' | 'throw-after' | 'pending';

export interface CountingProvider extends PaymentProvider {
  /** Charges that took money, in order (one per distinct attempt id). */
  readonly charges: { attemptId: string; orderId: string; amount: number; txnId: string }[];
  /** charge() calls, whatever they did. */
  chargeCalls: number;
  /** Refunds that moved money back (one per distinct refund id). */
  readonly refunds: { refundId: string; txnId: string; amount: number }[];
  refundCalls: number;
  /** Faults for the next charge() calls, consumed one per call. */
  chargeFaults: ChargeFault[];
  /** How many of the next refund() calls throw (before refunding). */
  refundFailures: number;
  /** Every call waits this long first, so concurrent callers overlap. */
  delayMs: number;
  /** Sum of charges minus refunds of one order: what the buyer is out of pocket. */
  netOf(orderId: string): number;
  /** An attempt answered pending is paid now, as an asynchronous provider does before its notify; returns the transaction. */
  payPending(attemptId: string, orderId: string, amount: number): string;
}

export function countingProvider(name = 'test'): CountingProvider {
  const byAttempt = new Map<string, { attemptId: string; orderId: string; amount: number; txnId: string }>();
  const pending = new Set<string>();
  const refundedIds = new Set<string>();
  const p: CountingProvider = {
    name,
    charges: [],
    chargeCalls: 0,
    refunds: [],
    refundCalls: 0,
    chargeFaults: [],
    refundFailures: 0,
    delayMs: 20,
    async charge(c): Promise<ChargeResult> {
      p.chargeCalls++;
      const fault = p.chargeFaults.shift();
      await sleep(p.delayMs);
      if (fault === 'decline') throw new PaymentDeclined('test: declined');
      if (fault === 'throw-before') throw new Error('test: provider unreachable before charging');
      if (fault === 'pending') {
        pending.add(c.attemptId ?? randomUUID());
        return { kind: 'pending' };
      }
      // A caller that names no attempt gets a new charge every time, as a provider without idempotency would.
      const attemptId = (c.attemptId as string | undefined) ?? randomUUID();
      let done = byAttempt.get(attemptId);
      if (!done) {
        done = { attemptId, orderId: c.orderId, amount: c.amount, txnId: `${name}-txn-${attemptId}` };
        byAttempt.set(attemptId, done);
        p.charges.push(done);
      }
      if (fault === 'throw-after') throw new Error('test: connection reset after charging');
      return { kind: 'paid', txnId: done.txnId };
    },
    async chargeStatus(attemptId): Promise<ChargeStatus> {
      await sleep(p.delayMs);
      const done = byAttempt.get(attemptId);
      if (done) return { kind: 'paid', txnId: done.txnId };
      return pending.has(attemptId) ? { kind: 'pending' } : { kind: 'none' };
    },
    async refund(r) {
      p.refundCalls++;
      await sleep(p.delayMs);
      if (p.refundFailures > 0) {
        p.refundFailures--;
        throw new Error('test: refund refused by the provider');
      }
      const refundId = (r.refundId as string | undefined) ?? randomUUID();
      if (refundedIds.has(refundId)) return;
      refundedIds.add(refundId);
      p.refunds.push({ refundId, txnId: r.txnId, amount: r.amount });
    },
    payPending(attemptId, orderId, amount) {
      pending.delete(attemptId);
      const done = { attemptId, orderId, amount, txnId: `${name}-txn-${attemptId}` };
      byAttempt.set(attemptId, done);
      p.charges.push(done);
      return done.txnId;
    },
    netOf(orderId) {
      const txns = new Set(p.charges.filter((c) => c.orderId === orderId).map((c) => c.txnId));
      const charged = p.charges.filter((c) => c.orderId === orderId).reduce((s, c) => s + c.amount, 0);
      const refunded = p.refunds.filter((r) => txns.has(r.txnId)).reduce((s, r) => s + r.amount, 0);
      return charged - refunded;
    },
  };
  return p;
}
