/**
 * Order transitions after the grab (docs/order-lifecycle.md): cancel (buyer or timeout), refund
 * request and approval, redeem. Each one is a conditional write (lifecycle.repository.ts); a
 * cancel or refund of a seckill order gives its unit back in MySQL inside the same transaction
 * and then in Redis (stock-return.ts), exactly once.
 */
import type { DB, Executor } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import {
  findLifecycleOrder,
  markCancelled,
  markRefunded,
  markRefunding,
  OrderStatus,
  returnStockRow,
  type LifecycleOrder,
} from '@/lib/order/lifecycle.repository';
import { completeReturn } from '@/lib/order/stock-return';
import { retryDeadlock } from '@/lib/db/retry-deadlock';

const STATE_WORDS: Record<number, string> = { 1: '待支付', 2: '已支付', 3: '已使用', 4: '已取消', 5: '退款中', 6: '已退款' };
export const stateWords = (status: number) => STATE_WORDS[status] ?? '未知';

export function orderStateError(status: number, action: string): AppError {
  return new AppError('ORDER_STATE', `订单${stateWords(status)}，不能${action}`);
}

/** The owner's order, or 404 for anyone else (an order id reveals nothing to a stranger). */
export async function ownOrder(db: DB, userId: string, orderId: string): Promise<LifecycleOrder> {
  const o = await findLifecycleOrder(db, orderId);
  if (!o || o.userId !== userId) throw notFound('订单');
  return o;
}

/**
 * Runs `transition` and, when it won and the order is a seckill one, the unit's DB return, in one
 * transaction; then the Redis return. False when the order was no longer in the `from` state.
 * The transaction runs again if InnoDB kills it as a deadlock victim (the order row, then the stock
 * row, against a worker that holds the (voucher, user) key of a second order of the same buyer),
 * so `transition` must be safe to run again from the start.
 */
export async function transitionReturningUnit(db: DB, redis: RedisClient, o: LifecycleOrder, transition: (trx: Executor) => Promise<boolean>): Promise<boolean> {
  const won = await retryDeadlock(() => db.transaction().execute(async (trx) => {
    if (!(await transition(trx))) return false;
    if (o.kind === 1 && !(await returnStockRow(trx, o.voucherId))) {
      throw new Error(`stock return refused for voucher ${o.voucherId}: its DB stock is already at the initial stock`);
    }
    return true;
  }));
  if (won && o.kind === 1) await completeReturn(db, redis, { id: o.id, voucherId: o.voucherId, userId: o.userId });
  return won;
}

export async function cancelByBuyer(db: DB, redis: RedisClient, userId: string, orderId: string): Promise<void> {
  const o = await ownOrder(db, userId, orderId);
  if (o.status !== OrderStatus.unpaid) throw orderStateError(o.status, '取消');
  const won = await transitionReturningUnit(db, redis, o, (trx) => markCancelled(trx, o.id, 'buyer', env.ORDER_PAY_TIMEOUT_SECONDS));
  if (!won) throw orderStateError((await findLifecycleOrder(db, orderId))?.status ?? o.status, '取消');
}

export type TimeoutOutcome = 'cancelled' | 'not-due' | 'settled' | 'missing';

/** The timeout's cancel: only an unpaid order past its deadline (database clock). */
export async function cancelIfOverdue(db: DB, redis: RedisClient, orderId: string, timeoutSeconds = env.ORDER_PAY_TIMEOUT_SECONDS): Promise<TimeoutOutcome> {
  const o = await findLifecycleOrder(db, orderId);
  if (!o) return 'missing';
  if (o.status !== OrderStatus.unpaid) return 'settled';
  const won = await transitionReturningUnit(db, redis, o, (trx) => markCancelled(trx, o.id, 'timeout', timeoutSeconds));
  if (won) return 'cancelled';
  const now = await findLifecycleOrder(db, orderId);
  return now?.status === OrderStatus.unpaid ? 'not-due' : 'settled';
}

export async function requestRefund(db: DB, userId: string, orderId: string): Promise<void> {
  const o = await ownOrder(db, userId, orderId);
  if (o.status !== OrderStatus.paid) throw orderStateError(o.status, '申请退款');
  if (!(await markRefunding(db, o.id))) throw orderStateError((await findLifecycleOrder(db, orderId))?.status ?? o.status, '申请退款');
}

/** The merchant's approval (access checked by the caller): 5 → 6 and the unit back on sale. */
export async function approveRefund(db: DB, redis: RedisClient, o: LifecycleOrder, refundMoney: () => Promise<void>): Promise<void> {
  if (o.status !== OrderStatus.refunding) throw orderStateError(o.status, '退款');
  const won = await transitionReturningUnit(db, redis, o, (trx) => markRefunded(trx, o.id));
  if (!won) throw orderStateError((await findLifecycleOrder(db, o.id))?.status ?? o.status, '退款');
  await refundMoney();
}
