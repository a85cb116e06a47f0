/**
 * The console's side of the lifecycle, scoped like every console service (lib/access/access.ts):
 * redeem a code (核销) at one of the merchant's own shops, approve a refund, list a voucher's orders.
 */
import { z } from 'zod';
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { assertOwns, type Actor } from '@/lib/access/access';
import { AppError, notFound } from '@/lib/errors';
import { approveRefund, orderStateError, stateWords } from '@/lib/order/lifecycle';
import {
  findLifecycleOrder,
  findOrderIdByRedeemCode,
  listVoucherOrders,
  markUsed,
  OrderStatus,
  voucherOrderCounts,
  type LifecycleOrder,
} from '@/lib/order/lifecycle.repository';
import { findAttempt, findClosingRefund, findPaidPayment, insertRefundIntent, setPaymentStatus } from '@/lib/payment/payment.repository';
import { paymentProvider } from '@/lib/payment/provider';
import { sendRefund } from '@/lib/payment/refund';
import { findVoucherRow } from '@/lib/voucher/voucher.repository';

export const redeemCodeSchema = z.object({ code: z.string().trim().regex(/^\d{12}$/, '核销码是 12 位数字') });

/** The order behind a voucher the actor manages; a foreign one is 403, like every console check. */
async function managedOrder(db: DB, actor: Actor, o: LifecycleOrder | undefined): Promise<LifecycleOrder> {
  if (!o) throw notFound('订单');
  const v = await findVoucherRow(db, o.voucherId);
  if (!v) throw notFound('订单');
  assertOwns(actor, v.owner_id, '该店铺的订单');
  return o;
}

export interface RedeemResult {
  orderId: string;
  voucherTitle: string;
  shopName: string;
}

export async function redeemCode(db: DB, actor: Actor, code: string): Promise<RedeemResult> {
  const id = await findOrderIdByRedeemCode(db, code);
  if (!id) throw new AppError('NOT_FOUND', '核销码无效');
  const o = await managedOrder(db, actor, await findLifecycleOrder(db, id));
  if (o.status !== OrderStatus.paid) throw new AppError('ORDER_STATE', `该券${stateWords(o.status)}，不能核销`);
  if (!(await markUsed(db, o.id))) throw new AppError('ORDER_STATE', '该券已被核销');
  const v = await findVoucherRow(db, o.voucherId);
  return { orderId: o.id, voucherTitle: v?.title ?? '', shopName: v?.shop_name ?? '' };
}

/**
 * The merchant's approval. The decision is one transaction: the payment paid → refund_due (a
 * conditional write, so of concurrent approvals exactly one decides) and the refund's intent row.
 * Then the provider is asked; only its yes moves the order 5 → 6 and the unit back on sale. If it
 * fails, the order stays 退款中 and the reconciler retries the same refund id until it agrees.
 */
export async function approveRefundAsMerchant(db: DB, redis: RedisClient, actor: Actor, orderId: string): Promise<{ orderId: string; status: number }> {
  const o = await managedOrder(db, actor, await findLifecycleOrder(db, orderId));
  if (o.status !== OrderStatus.refunding) throw orderStateError(o.status, '退款');
  const decided = await db.transaction().execute(async (trx) => {
    const p = await findPaidPayment(trx, o.id);
    if (!p) return (await findClosingRefund(trx, o.id)) ? ('taken' as const) : ('no-payment' as const);
    if (!(await setPaymentStatus(trx, p.id, 'paid', 'refund_due'))) return 'taken' as const;
    const id = await insertRefundIntent(trx, { orderId: o.id, userId: o.userId, provider: p.provider, amount: p.amount, txnId: p.txnId, paymentId: p.id, closesOrder: true });
    if (!id) throw new Error(`payment ${p.id} already has a refund`);
    return id;
  });
  if (decided === 'taken') throw new AppError('ORDER_STATE', '退款已受理，正在处理');
  if (decided === 'no-payment') {
    // Nothing was charged for it (an order paid before payments were recorded): the state alone.
    await approveRefund(db, redis, o, async () => {});
    return { orderId: o.id, status: OrderStatus.refunded };
  }
  const intent = await findAttempt(db, decided);
  const done = intent ? await sendRefund(db, redis, paymentProvider(), intent) : false;
  return { orderId: o.id, status: done ? OrderStatus.refunded : OrderStatus.refunding };
}

export const voucherOrdersQuery = z.object({
  status: z.coerce.number().int().min(1).max(6).optional(),
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  size: z.coerce.number().int().min(1).max(100).default(20),
});

export async function voucherOrders(db: DB, actor: Actor, voucherId: string, q: z.infer<typeof voucherOrdersQuery>) {
  const v = await findVoucherRow(db, voucherId);
  if (!v) throw notFound('优惠券');
  assertOwns(actor, v.owner_id, '该店铺的订单');
  const [rows, counts] = await Promise.all([listVoucherOrders(db, voucherId, q.status, (q.page - 1) * q.size, q.size + 1), voucherOrderCounts(db, voucherId)]);
  return {
    voucher: { id: v.id, title: v.title, shopName: v.shop_name, type: v.type },
    counts,
    items: rows.slice(0, q.size).map((r) => ({
      ...r,
      // The console shows a masked phone: enough to tell buyers apart at the counter.
      phone: r.phone ? `${r.phone.slice(0, 3)}****${r.phone.slice(-4)}` : null,
      createTime: r.createTime.toISOString(),
      payTime: r.payTime?.toISOString() ?? null,
      useTime: r.useTime?.toISOString() ?? null,
      cancelTime: r.cancelTime?.toISOString() ?? null,
      refundTime: r.refundTime?.toISOString() ?? null,
    })),
    page: q.page,
    hasMore: rows.length > q.size,
  };
}
