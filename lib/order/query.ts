/**
 * Orders as their owner sees them (docs/flash-sale.md#order-status). An accepted grab is `pending` while it sits
 * in the Redis outbox, `created` once the worker has written it, `failed` if it was dead-lettered
 * or recorded in tb_order_failure (lib/seckill/failure.repository.ts): folded — its buyer already
 * holds another order of the voucher, `failReason` ALREADY_BOUGHT and `keptOrderId` — or voided
 * after an unconfirmed publish (UNCONFIRMED; that grab answered 503). Someone else's order reads as
 * not found.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { env } from '@/lib/env';
import { notFound } from '@/lib/errors';
import { idTime } from '@/lib/id';
import { findOrderView, listUserOrderViews, type OrderView } from '@/lib/order/order.repository';
import { deadLetterStatuses } from '@/lib/seckill/outbox.repository';
import { findOrderFailure, type OrderFailureReason } from '@/lib/seckill/failure.repository';
import { findPendingOrder } from '@/lib/seckill/outbox';

export type OrderState = 'pending' | 'created' | 'failed';

export interface OrderDto {
  id: string;
  voucherId: string;
  state: OrderState;
  /** tb_voucher_order.status once created: 1 unpaid, 2 paid, 3 used, 4 cancelled, 5 refunding, 6 refunded. */
  orderStatus: number | null;
  createdAt: string;
  voucher: { title: string; payValue: number; actualValue: number } | null;
  shop: { id: string; name: string } | null;
  /** 1 flash sale, 0 normal voucher; null while in flight. */
  kind: number | null;
  /** Unpaid orders: when the timeout cancels it. */
  payDeadline: string | null;
  /** Paid (unused) orders only: the code the shop redeems. */
  redeemCode: string | null;
  paidAt: string | null;
  usedAt: string | null;
  cancelledAt: string | null;
  cancelReason: 'buyer' | 'timeout' | null;
  refundedAt: string | null;
  /** `failed` orders only: why, when known (ALREADY_BOUGHT: the buyer holds `keptOrderId`). */
  failReason?: OrderFailureReason;
  keptOrderId?: string;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function fromView(v: OrderView): OrderDto {
  return {
    id: v.id,
    voucherId: v.voucherId,
    state: 'created',
    orderStatus: v.orderStatus,
    createdAt: v.createdAt.toISOString(),
    voucher: v.voucherTitle === null ? null : { title: v.voucherTitle, payValue: v.payValue ?? 0, actualValue: v.actualValue ?? 0 },
    shop: v.shopId && v.shopName ? { id: v.shopId, name: v.shopName } : null,
    kind: v.kind,
    payDeadline: v.orderStatus === 1 ? new Date(v.createdAt.getTime() + env.ORDER_PAY_TIMEOUT_SECONDS * 1000).toISOString() : null,
    redeemCode: v.orderStatus === 2 ? v.redeemCode : null,
    paidAt: iso(v.payTime),
    usedAt: iso(v.useTime),
    cancelledAt: iso(v.cancelTime),
    cancelReason: v.cancelReason,
    refundedAt: iso(v.refundTime),
  };
}

const inFlight = (id: string, voucherId: string, at: number, state: OrderState): OrderDto => ({
  id,
  voucherId,
  state,
  orderStatus: null,
  createdAt: new Date(at).toISOString(),
  voucher: null,
  shop: null,
  kind: 1,
  payDeadline: null,
  redeemCode: null,
  paidAt: null,
  usedAt: null,
  cancelledAt: null,
  cancelReason: null,
  refundedAt: null,
});

export async function getMyOrder(db: Executor, redis: RedisClient, userId: string, orderId: string): Promise<OrderDto> {
  const created = await findOrderView(db, orderId);
  if (created) {
    if (created.userId !== userId) throw notFound('订单');
    return fromView(created);
  }
  const pending = await findPendingOrder(redis, orderId);
  if (pending) {
    if (pending.userId !== userId) throw notFound('订单');
    const dead = (await deadLetterStatuses(db, [orderId])).get(orderId);
    return inFlight(orderId, pending.voucherId, pending.at, dead && dead.status !== 'replayed' ? 'failed' : 'pending');
  }
  // The worker commits before it clears the outbox: an order that just left the outbox is in MySQL.
  const committed = await findOrderView(db, orderId);
  if (committed && committed.userId === userId) return fromView(committed);
  // Folded into another order of the buyer, or voided (rare). Recorded before the outbox entry goes.
  const failure = await findOrderFailure(db, orderId);
  if (failure) {
    if (failure.userId !== userId) throw notFound('订单');
    return { ...inFlight(orderId, failure.voucherId, idTime(orderId).getTime(), 'failed'), failReason: failure.reason, ...(failure.keptOrderId ? { keptOrderId: failure.keptOrderId } : {}) };
  }
  // Out of the outbox and not in MySQL: a dead letter (the admin discarded it, or replayed it and
  // the copy is on its way), or no order of this user at all.
  const dead = (await deadLetterStatuses(db, [orderId])).get(orderId);
  if (!dead || dead.userId !== userId || !dead.voucherId) throw notFound('订单');
  return inFlight(orderId, dead.voucherId, idTime(orderId).getTime(), dead.status === 'replayed' ? 'pending' : 'failed');
}

export interface OrderPage {
  items: OrderDto[];
  page: number;
  size: number;
  hasMore: boolean;
}

export async function listMyOrders(db: Executor, userId: string, page: number, size: number): Promise<OrderPage> {
  const rows = await listUserOrderViews(db, userId, (page - 1) * size, size + 1);
  return { items: rows.slice(0, size).map(fromView), page, size, hasMore: rows.length > size };
}
