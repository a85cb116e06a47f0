/**
 * Paying an order, synchronously (POST /api/orders/{id}/pay through the provider) or through the
 * provider's signed notify. Both end in `settlePayment`: in one transaction the order's 1 → 2
 * conditional write and the payment row (unique per provider transaction and per user
 * Idempotency-Key). Money that arrives for an order that is no longer unpaid — cancelled by the
 * buyer or the timeout — is recorded as refund_due and refunded; the order is never revived.
 */
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { idSchema } from '@/lib/http/parse';
import { log } from '@/lib/log';
import { orderStateError, ownOrder } from '@/lib/order/lifecycle';
import { findLifecycleOrder, markPaid, OrderStatus, type LifecycleOrder } from '@/lib/order/lifecycle.repository';
import {
  findPaymentByIdempotencyKey,
  findPaymentByTxn,
  insertPaymentOnce,
  setPaymentStatus,
  type PaymentRow,
} from '@/lib/payment/payment.repository';
import { paymentProvider, type PaymentProvider } from '@/lib/payment/provider';
import { verifyNotify } from '@/lib/payment/signature';

export interface PayResult {
  orderId: string;
  status: 'paid' | 'pending';
}

/** 12 digits, the code the buyer shows at the shop (and as a QR code). */
export const newRedeemCode = () => String(randomInt(1e11, 1e12));

class AlreadyRecorded extends Error {}

const expired = () => new AppError('PAY_EXPIRED', '支付已超时，订单已取消或即将取消');

/** The answer a recorded payment gets when it is presented again (replayed notify, repeated Idempotency-Key). */
function answerRecorded(p: PaymentRow, status: number): PayResult {
  if (p.status === 'paid') return { orderId: p.orderId, status: 'paid' };
  throw orderStateError(status, '支付');
}

async function settlePayment(db: DB, provider: PaymentProvider, o: LifecycleOrder, txnId: string, idempotencyKey: string | null): Promise<PayResult> {
  let paid: boolean;
  try {
    paid = await db.transaction().execute(async (trx) => {
      const won = await markPaid(trx, o.id, newRedeemCode(), env.ORDER_PAY_TIMEOUT_SECONDS);
      const row = { orderId: o.id, userId: o.userId, provider: provider.name, txnId, idempotencyKey, amount: o.payValue, status: won ? ('paid' as const) : ('refund_due' as const) };
      if (!(await insertPaymentOnce(trx, row))) throw new AlreadyRecorded();
      return won;
    });
  } catch (err) {
    if (!(err instanceof AlreadyRecorded)) throw err;
    // The same transaction (or key) was settled by a concurrent call: answer what it decided.
    const prior = (await findPaymentByTxn(db, provider.name, txnId)) ?? (idempotencyKey ? await findPaymentByIdempotencyKey(db, o.userId, idempotencyKey) : undefined);
    const now = await findLifecycleOrder(db, o.id);
    if (!prior) throw err;
    return answerRecorded(prior, now?.status ?? o.status);
  }
  if (paid) return { orderId: o.id, status: 'paid' };
  const now = await findLifecycleOrder(db, o.id);
  await provider
    .refund({ orderId: o.id, txnId, amount: o.payValue })
    .then(() => setPaymentStatus(db, provider.name, txnId, 'refunded'))
    .catch((e: Error) => log.error({ err: e.message, orderId: o.id, txnId }, 'refund of a late payment failed; tb_payment keeps it as refund_due'));
  if (now?.status === OrderStatus.unpaid) throw expired();
  throw orderStateError(now?.status ?? o.status, '支付');
}

export const idempotencyKeySchema = z.string().trim().min(8).max(64).regex(/^[\w.:-]+$/, 'Idempotency-Key: 8–64 letters, digits, _ . : -');

export async function payOrder(db: DB, input: { userId: string; orderId: string; idempotencyKey: string | null }): Promise<PayResult> {
  const o = await ownOrder(db, input.userId, input.orderId);
  if (input.idempotencyKey) {
    const prior = await findPaymentByIdempotencyKey(db, input.userId, input.idempotencyKey);
    if (prior) {
      if (prior.orderId !== o.id) throw new AppError('CONFLICT', '这个 Idempotency-Key 已用于另一笔订单');
      return answerRecorded(prior, o.status);
    }
  }
  if (o.status !== OrderStatus.unpaid) throw orderStateError(o.status, '支付');
  // A cheap early refusal; the conditional write decides by the database clock.
  if (o.createTime.getTime() + env.ORDER_PAY_TIMEOUT_SECONDS * 1000 <= Date.now() - 1000) throw expired();
  const provider = paymentProvider();
  const charge = await provider.charge({ orderId: o.id, amount: o.payValue });
  if (charge.kind === 'pending') return { orderId: o.id, status: 'pending' };
  return settlePayment(db, provider, o, charge.txnId, input.idempotencyKey);
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
  if (!o) throw notFound('订单');
  if (n.amount !== o.payValue) throw new AppError('VALIDATION', '支付金额与订单不符');
  const provider = paymentProvider();
  const prior = await findPaymentByTxn(db, provider.name, n.txnId);
  if (prior) return answerRecorded(prior, o.status);
  return settlePayment(db, provider, o, n.txnId, null);
}
