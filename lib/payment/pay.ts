/**
 * Paying an order, synchronously (POST /api/orders/{id}/pay through the provider) or through the
 * provider's signed notify, at the order's own price (fixed when it was placed).
 *
 * Before any charge the pay route claims it durably: a tb_payment_attempt row whose unique keys
 * allow one live charge per order and one attempt per client Idempotency-Key. A concurrent tap or
 * retry finds the claim and waits for its answer instead of charging again. Whatever the provider
 * answers is written back to that row, and the settlement (`settleCharge`) is one transaction: the
 * order's 1 → 2 conditional write, the payment row (unique per provider transaction) and the
 * attempt marked settled. Money that arrives for an order that is no longer unpaid — cancelled by
 * the buyer or the timeout, or paid by another transaction — is recorded as refund_due with a
 * refund intent in that same transaction, then refunded; the order is never revived. So is money a
 * signed notify reports at the wrong amount, or for an order that does not exist. A charge whose
 * outcome is lost (the provider or the database failed after it) stays owed on its attempt row
 * until the reconciler (lib/payment/reconcile.ts) settles it.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { retryDeadlock } from '@/lib/db/retry-deadlock';
import { AppError, notFound } from '@/lib/errors';
import { idSchema } from '@/lib/http/parse';
import { log } from '@/lib/log';
import { orderStateError, ownOrder } from '@/lib/order/lifecycle';
import { findLifecycleOrder, markPaid, OrderStatus, type LifecycleOrder } from '@/lib/order/lifecycle.repository';
import {
  claimCharge,
  findAttempt,
  findAttemptByKey,
  findLiveCharge,
  findPaymentByIdempotencyKey,
  findPaymentByTxn,
  insertPaymentOnce,
  insertRefundIntent,
  markChargeSettled,
  noteAttemptFailure,
  setChargeOutcome,
  type AttemptRow,
  type PaymentRow,
} from '@/lib/payment/payment.repository';
import { PaymentDeclined, paymentProvider, type PaymentProvider } from '@/lib/payment/provider';
import { sendRefund } from '@/lib/payment/refund';
import { verifyNotify } from '@/lib/payment/signature';

export interface PayResult {
  orderId: string;
  status: 'paid' | 'pending';
}

/** 12 digits, the code the buyer shows at the shop (and as a QR code). */
export const newRedeemCode = () => String(randomInt(1e11, 1e12));

/** How long a repeated request waits for the claim it found to get the provider's answer. */
const CLAIM_WAIT_MS = 5000;

class AlreadyRecorded extends Error {}

const expired = () => new AppError('PAY_EXPIRED', '支付已超时，订单已取消或即将取消');
const inFlight = () => new AppError('CONFLICT', '这笔订单正在支付，请稍后查看结果');

/** The answer a recorded payment gets when it is presented again (replayed notify, repeated Idempotency-Key). */
function answerRecorded(p: PaymentRow, status: number): PayResult {
  if (p.status === 'paid') return { orderId: p.orderId, status: 'paid' };
  throw orderStateError(status, '支付');
}

export type Settlement = { kind: 'paid' } | { kind: 'refund_due'; refunded: boolean } | { kind: 'recorded'; prior: PaymentRow };

/**
 * Records a transaction the provider reports (its answer to a charge, a notify, the reconciler's
 * question): the order paid if it still may be, else the money owed back and refunded.
 */
export async function settleCharge(db: DB, provider: PaymentProvider, o: LifecycleOrder, c: { attemptId: string | null; txnId: string; idempotencyKey: string | null }): Promise<Settlement> {
  let refund: string | null = null;
  try {
    // A replayed notify settles the same transaction at once: one of the two may be a deadlock
    // victim of the unique checks. Nothing of it was written, so the whole transaction runs again.
    const won = await retryDeadlock(() => db.transaction().execute(async (trx) => {
      refund = null;
      const paid = await markPaid(trx, o.id, newRedeemCode(), env.ORDER_PAY_TIMEOUT_SECONDS);
      const row = { orderId: o.id, userId: o.userId, provider: provider.name, txnId: c.txnId, idempotencyKey: c.idempotencyKey, amount: o.payValue, status: paid ? ('paid' as const) : ('refund_due' as const) };
      const paymentId = await insertPaymentOnce(trx, row);
      if (!paymentId) throw new AlreadyRecorded();
      if (c.attemptId) await markChargeSettled(trx, c.attemptId, c.txnId);
      if (!paid) {
        refund = await insertRefundIntent(trx, { orderId: o.id, userId: o.userId, provider: provider.name, amount: o.payValue, txnId: c.txnId, paymentId, closesOrder: false });
      }
      return paid;
    }));
    if (won) return { kind: 'paid' };
  } catch (err) {
    if (!(err instanceof AlreadyRecorded)) throw err;
    // The same transaction was settled by a concurrent call (a replayed notify): answer what it decided.
    const prior = await findPaymentByTxn(db, provider.name, c.txnId);
    if (!prior) throw new Error(`payment ${c.txnId} neither inserted nor found`);
    if (c.attemptId) await markChargeSettled(db, c.attemptId, c.txnId);
    return { kind: 'recorded', prior };
  }
  const intent = refund ? await findAttempt(db, refund) : undefined;
  const refunded = intent ? await sendRefund(db, null, provider, intent) : false;
  return { kind: 'refund_due', refunded };
}

/** The buyer's answer once a settlement refused their money (it is on its way back). */
async function refusedAnswer(db: DB, o: LifecycleOrder): Promise<never> {
  const now = await findLifecycleOrder(db, o.id);
  if (now?.status === OrderStatus.unpaid) throw expired();
  throw orderStateError(now?.status ?? o.status, '支付');
}

async function answerSettlement(db: DB, o: LifecycleOrder, s: Settlement): Promise<PayResult> {
  if (s.kind === 'paid') return { orderId: o.id, status: 'paid' };
  if (s.kind === 'recorded') return answerRecorded(s.prior, (await findLifecycleOrder(db, o.id))?.status ?? o.status);
  return refusedAnswer(db, o);
}

/** A repeated request found this attempt (same key): wait briefly for its outcome, then answer it. */
async function answerAttempt(db: DB, a: AttemptRow, o: LifecycleOrder): Promise<PayResult> {
  if (a.orderId !== o.id) throw new AppError('CONFLICT', '这个 Idempotency-Key 已用于另一笔订单');
  let cur: AttemptRow | undefined = a;
  for (const deadline = Date.now() + CLAIM_WAIT_MS; cur?.status === 'intent' && Date.now() < deadline; ) {
    await sleep(50);
    cur = await findAttempt(db, a.id);
  }
  if (!cur) throw new Error(`payment attempt ${a.id} vanished`);
  switch (cur.status) {
    case 'settled': {
      const p = cur.txnId ? await findPaymentByTxn(db, cur.provider, cur.txnId) : undefined;
      if (!p) throw new Error(`settled attempt ${cur.id} has no payment`);
      if (p.status === 'paid') return { orderId: o.id, status: 'paid' };
      return refusedAnswer(db, o);
    }
    case 'failed':
      // A concurrent copy of a declined request; the key is free again for the buyer's retry.
      throw new AppError('PAYMENT_FAILED', '支付未成功，未扣款');
    default:
      // intent (still asking), pending (the provider will notify), charged (settling): the order tells.
      return { orderId: o.id, status: 'pending' };
  }
}

export const idempotencyKeySchema = z.string().trim().min(8).max(64).regex(/^[\w.:-]+$/, 'Idempotency-Key: 8–64 letters, digits, _ . : -');

export async function payOrder(db: DB, input: { userId: string; orderId: string; idempotencyKey: string | null }): Promise<PayResult> {
  const o = await ownOrder(db, input.userId, input.orderId);
  const key = input.idempotencyKey;
  if (key) {
    const attempt = await findAttemptByKey(db, input.userId, key);
    if (attempt) return answerAttempt(db, attempt, o);
    // A payment recorded before charges were claimed as attempts.
    const prior = await findPaymentByIdempotencyKey(db, input.userId, key);
    if (prior) {
      if (prior.orderId !== o.id) throw new AppError('CONFLICT', '这个 Idempotency-Key 已用于另一笔订单');
      return answerRecorded(prior, o.status);
    }
  }
  if (o.status !== OrderStatus.unpaid) throw orderStateError(o.status, '支付');
  // A cheap early refusal; the conditional write decides by the database clock.
  if (o.createTime.getTime() + env.ORDER_PAY_TIMEOUT_SECONDS * 1000 <= Date.now() - 1000) throw expired();
  const provider = paymentProvider();
  // The claim, durable before the provider hears of it: of concurrent taps exactly one charges.
  // Concurrent inserts of one key check uniqueness under shared gap locks, so InnoDB may pick one
  // as a deadlock victim (seen with a retry after a decline, whose freed key is still a
  // delete-marked index entry); the victim wrote nothing and claims again.
  const attemptId = await retryDeadlock(() => claimCharge(db, { orderId: o.id, userId: o.userId, provider: provider.name, idempotencyKey: key, amount: o.payValue }));
  if (!attemptId) {
    const same = key ? await findAttemptByKey(db, input.userId, key) : undefined;
    if (same) return answerAttempt(db, same, o);
    const now = await findLifecycleOrder(db, o.id);
    if (now && now.status !== OrderStatus.unpaid) throw orderStateError(now.status, '支付');
    throw inFlight();
  }
  let charge;
  try {
    charge = await provider.charge({ attemptId, orderId: o.id, amount: o.payValue });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (err instanceof PaymentDeclined) {
      await setChargeOutcome(db, attemptId, 'failed', null, msg);
      throw new AppError('PAYMENT_FAILED', '支付未成功，未扣款');
    }
    // Unknown whether money moved: the attempt stays owed and the reconciler asks the provider.
    log.error({ err: msg, attemptId, orderId: o.id }, 'charge failed without an answer; the reconciler will ask the provider');
    await noteAttemptFailure(db, attemptId, msg).catch(() => {});
    throw new AppError('SERVICE_UNAVAILABLE', '支付结果确认中，请稍后查看订单');
  }
  if (charge.kind === 'pending') {
    await setChargeOutcome(db, attemptId, 'pending', null);
    return { orderId: o.id, status: 'pending' };
  }
  let s: Settlement;
  try {
    s = await settleCharge(db, provider, o, { attemptId, txnId: charge.txnId, idempotencyKey: key });
  } catch (err) {
    // The money was taken and the settlement failed: keep its transaction on the attempt if the
    // database answers at all; if not, the attempt (intent) still names it for the reconciler.
    log.error({ err: err instanceof Error ? err.message : String(err), attemptId, orderId: o.id, txnId: charge.txnId }, 'charged but not settled; the reconciler will settle it');
    await setChargeOutcome(db, attemptId, 'charged', charge.txnId).catch(() => {});
    throw err;
  }
  return answerSettlement(db, o, s);
}

/** tb_payment.user_id of money whose buyer is unknown (a notify for an order that does not exist): no user has id 0. */
export const NO_BUYER = '0';

/**
 * Signed money that pays nothing (an order at the wrong amount, an order that does not exist):
 * recorded once per transaction as refund_due with what was taken, with its refund intent, then
 * refunded. A refund the provider refuses stays owed, for the reconciler and the console.
 */
async function recordRefundDue(db: DB, provider: PaymentProvider, o: { id: string; userId: string }, n: { txnId: string; amount: number }): Promise<void> {
  if (n.amount <= 0) return;
  const refund = await retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      const paymentId = await insertPaymentOnce(trx, { orderId: o.id, userId: o.userId, provider: provider.name, txnId: n.txnId, idempotencyKey: null, amount: n.amount, status: 'refund_due' });
      if (!paymentId) return null;
      return insertRefundIntent(trx, { orderId: o.id, userId: o.userId, provider: provider.name, amount: n.amount, txnId: n.txnId, paymentId, closesOrder: false });
    }),
  );
  const intent = refund ? await findAttempt(db, refund) : undefined;
  if (intent) await sendRefund(db, null, provider, intent);
}

export const notifySchema = z.object({
  orderId: idSchema,
  txnId: z.string().min(1).max(64).regex(/^[\w.:-]+$/),
  amount: z.number().int().nonnegative(),
});

/** POST /api/payments/notify: signature first (401 and nothing read otherwise), then the same settlement. */
export async function handlePaymentNotify(db: DB, rawBody: string, signature: string | null): Promise<PayResult> {
  if (!verifyNotify(env.PAYMENT_NOTIFY_SECRET, rawBody, signature)) throw new AppError('BAD_SIGNATURE', '签名无效');
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new AppError('BAD_REQUEST', '请求体不是 JSON');
  }
  const parsed = notifySchema.safeParse(json);
  if (!parsed.success) throw new AppError('VALIDATION', '支付通知格式错误');
  const n = parsed.data;
  const o = await findLifecycleOrder(db, n.orderId);
  const provider = paymentProvider();
  if (!o) {
    // Signed: the provider did take this sum, for an order we have no record of. Nothing is paid,
    // but the books keep it (under the id the provider named, no buyer) and send it back.
    await recordRefundDue(db, provider, { id: n.orderId, userId: NO_BUYER }, n);
    throw notFound('订单');
  }
  // The order's own price: what the buyer was asked to pay when the order was placed.
  if (n.amount !== o.payValue) {
    // Signed: the provider did take this sum. It never pays the order, but the books keep it and send it back.
    await recordRefundDue(db, provider, o, n);
    throw new AppError('VALIDATION', '支付金额与订单不符');
  }
  const prior = await findPaymentByTxn(db, provider.name, n.txnId);
  if (prior) return answerRecorded(prior, o.status);
  // The charge this notify answers, if the pay route claimed one: it is settled with it.
  const live = await findLiveCharge(db, o.id);
  return answerSettlement(db, o, await settleCharge(db, provider, o, { attemptId: live?.id ?? null, txnId: n.txnId, idempotencyKey: null }));
}
