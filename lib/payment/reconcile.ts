/**
 * The payment reconciler (runs in the order worker): what the books still owe, retried until the
 * provider agrees. Every provider call has its tb_payment_attempt row, so after any failure —
 * the provider threw, the database failed after a charge, the process died between two writes —
 * the row is left in intent / pending / charged, and this loop finishes it:
 *   refund (intent): sent again with the same refund id (the provider refunds once), then done.
 *   charge charged:  the provider's transaction is known; settled (paid, or refund_due and refunded).
 *   charge intent / pending: the provider is asked about the attempt; paid → settled as above,
 *     none → failed (nothing was taken, the buyer may pay again), pending → asked again later.
 * Only attempts untouched for PAYMENT_RECONCILE_GRACE_SECONDS are taken, so a request still
 * waiting for its own provider answer is left alone; every write is conditional on the row's
 * state, so two reconcilers (two workers) or a reconciler and a late request cannot both finish
 * one attempt. Metrics: hmdp_payment_owed / hmdp_payment_owed_fen (gauges, per kind) and
 * hmdp_payment_reconcile_total{outcome}.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { findLifecycleOrder } from '@/lib/order/lifecycle.repository';
import { settleCharge } from '@/lib/payment/pay';
import { noteAttemptFailure, owedAttempts, owedSummary, setChargeOutcome, type AttemptRow, type OwedSummary } from '@/lib/payment/payment.repository';
import { paymentProvider, type PaymentProvider } from '@/lib/payment/provider';
import { sendRefund } from '@/lib/payment/refund';

export type ReconcileOutcome = 'refunded' | 'refund_failed' | 'settled' | 'settled_refund_due' | 'failed' | 'still_pending' | 'ask_failed' | 'error';

export interface ReconcileOptions {
  db: DB;
  redis: RedisClient;
  provider?: PaymentProvider;
  graceSeconds?: number;
  /** Attempts per pass. */
  limit?: number;
}

export function createPaymentMetrics(registry?: Registry) {
  const registers = registry ? [registry] : [];
  return {
    owed: new Gauge({ name: 'hmdp_payment_owed', help: 'Provider calls still owing an outcome (refunds not confirmed, charges not settled)', labelNames: ['kind'] as const, registers }),
    owedFen: new Gauge({ name: 'hmdp_payment_owed_fen', help: 'Their amount, fen', labelNames: ['kind'] as const, registers }),
    outcomes: new Counter({ name: 'hmdp_payment_reconcile_total', help: 'Owed payment attempts the reconciler handled, by outcome', labelNames: ['outcome'] as const, registers }),
  };
}
export type PaymentMetrics = ReturnType<typeof createPaymentMetrics>;

async function reconcileCharge(o: Required<Omit<ReconcileOptions, 'limit' | 'graceSeconds'>>, a: AttemptRow): Promise<ReconcileOutcome> {
  const { db, provider } = o;
  let txnId = a.status === 'charged' ? a.txnId : null;
  if (!txnId) {
    let st;
    try {
      st = await provider.chargeStatus(a.id);
    } catch (err) {
      await noteAttemptFailure(db, a.id, err instanceof Error ? err.message : String(err));
      return 'ask_failed';
    }
    if (st.kind === 'none') return (await setChargeOutcome(db, a.id, 'failed', null, 'the provider never took money for this attempt')) ? 'failed' : 'error';
    if (st.kind === 'pending') {
      if (a.status === 'intent') await setChargeOutcome(db, a.id, 'pending', null);
      else await noteAttemptFailure(db, a.id, 'still pending at the provider');
      return 'still_pending';
    }
    txnId = st.txnId;
  }
  const order = await findLifecycleOrder(db, a.orderId);
  if (!order) throw new Error(`order ${a.orderId} of payment attempt ${a.id} is missing`);
  const s = await settleCharge(db, provider, order, { attemptId: a.id, txnId, idempotencyKey: a.idempotencyKey });
  return s.kind === 'refund_due' ? 'settled_refund_due' : 'settled';
}

/** One pass over what is owed; returns the outcome of each attempt it took. */
export async function reconcileOnce(opts: ReconcileOptions, metrics?: PaymentMetrics): Promise<{ outcomes: ReconcileOutcome[]; owed: OwedSummary }> {
  const o = { db: opts.db, redis: opts.redis, provider: opts.provider ?? paymentProvider() };
  // Only the configured provider can answer for its attempts; another's stay owed (and shown) for an operator.
  const due = await owedAttempts(o.db, o.provider.name, opts.graceSeconds ?? env.PAYMENT_RECONCILE_GRACE_SECONDS, opts.limit ?? 100);
  const outcomes: ReconcileOutcome[] = [];
  for (const a of due) {
    let outcome: ReconcileOutcome;
    try {
      outcome = a.kind === 'refund' ? ((await sendRefund(o.db, o.redis, o.provider, a)) ? 'refunded' : 'refund_failed') : await reconcileCharge(o, a);
    } catch (err) {
      log.error({ err: err instanceof Error ? err.message : String(err), attemptId: a.id }, 'payment reconcile step failed; retried next pass');
      await noteAttemptFailure(o.db, a.id, err instanceof Error ? err.message : String(err)).catch(() => {});
      outcome = 'error';
    }
    outcomes.push(outcome);
    metrics?.outcomes.inc({ outcome });
  }
  const owed = await owedSummary(o.db);
  if (metrics) {
    metrics.owed.set({ kind: 'refund' }, owed.refunds.count);
    metrics.owed.set({ kind: 'charge' }, owed.charges.count);
    metrics.owedFen.set({ kind: 'refund' }, owed.refunds.amount);
    metrics.owedFen.set({ kind: 'charge' }, owed.charges.amount);
  }
  return { outcomes, owed };
}

export interface PaymentReconciler {
  readonly metrics: PaymentMetrics;
  stop(): Promise<void>;
}

/** The background loop the order worker starts: one pass every PAYMENT_RECONCILE_INTERVAL_MS (0 = off). */
export function startPaymentReconciler(opts: ReconcileOptions & { intervalMs?: number; registry?: Registry }): PaymentReconciler {
  const metrics = createPaymentMetrics(opts.registry);
  const intervalMs = opts.intervalMs ?? env.PAYMENT_RECONCILE_INTERVAL_MS;
  let running: Promise<unknown> | null = null;
  let stopped = false;
  const tick = () => {
    if (stopped || running) return;
    running = reconcileOnce(opts, metrics)
      .catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'payment reconcile pass failed'))
      .finally(() => {
        running = null;
      });
  };
  const timer = intervalMs > 0 ? setInterval(tick, intervalMs) : null;
  timer?.unref();
  if (timer) tick();
  return {
    metrics,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
