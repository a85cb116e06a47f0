/**
 * SQL for the order lifecycle (1 unpaid → 2 paid → 3 used; 1 → 4 cancelled; 2 → 5 refunding → 6
 * refunded). Every transition is ONE conditional UPDATE on (id, status): of two transitions that
 * race for one order exactly one matches a row, and the time column it implies is written with it.
 * The payment deadline (create_time + timeout) is judged by the database clock on both sides, so
 * a payment and the timeout also split the time line between them.
 */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';
import { StockReturn, VoucherStatus } from '@/lib/db/schema';

export const OrderStatus = { unpaid: 1, paid: 2, used: 3, cancelled: 4, refunding: 5, refunded: 6 } as const;
export type OrderStatusCode = (typeof OrderStatus)[keyof typeof OrderStatus];

export interface LifecycleOrder {
  id: string;
  userId: string;
  voucherId: string;
  shopId: string | null;
  status: number;
  kind: number;
  payValue: number;
  createTime: Date;
  redeemCode: string | null;
}

export async function findLifecycleOrder(db: Executor, id: string): Promise<LifecycleOrder | undefined> {
  const r = await db
    .selectFrom('tb_voucher_order as o')
    .leftJoin('tb_voucher as v', 'v.id', 'o.voucher_id')
    // The order's own price (fixed when it was placed), never the voucher's current one.
    .select(['o.id', 'o.user_id', 'o.voucher_id', 'v.shop_id', 'o.status', 'o.kind', 'o.pay_value', 'o.create_time', 'o.redeem_code'])
    .where('o.id', '=', id)
    .executeTakeFirst();
  if (!r) return undefined;
  return {
    id: r.id,
    userId: r.user_id,
    voucherId: r.voucher_id,
    shopId: r.shop_id,
    status: r.status,
    kind: r.kind,
    payValue: Number(r.pay_value),
    createTime: r.create_time,
    redeemCode: r.redeem_code,
  };
}

const changed = (r: { numUpdatedRows: bigint }) => Number(r.numUpdatedRows) === 1;
const beforeDeadline = (timeoutSeconds: number) => sql<boolean>`TIMESTAMPADD(SECOND, ${timeoutSeconds}, create_time) > NOW(3)`;

/** 1 → 2, only before the deadline; the redeem code is issued with the payment. */
export async function markPaid(db: Executor, id: string, redeemCode: string, timeoutSeconds: number): Promise<boolean> {
  const r = await db
    .updateTable('tb_voucher_order')
    .set({ status: OrderStatus.paid, pay_time: sql<Date>`NOW(3)`, redeem_code: redeemCode })
    .where('id', '=', id)
    .where('status', '=', OrderStatus.unpaid)
    .where(beforeDeadline(timeoutSeconds))
    .executeTakeFirst();
  return changed(r);
}

/**
 * 1 → 4. A seckill order's unit is returned in the same transaction (the caller adds it back to
 * tb_seckill_voucher) and recorded as owed to Redis until `markRedisReturned`. The timeout only
 * cancels orders whose deadline has passed by the database clock.
 */
export async function markCancelled(db: Executor, id: string, reason: 'buyer' | 'timeout', timeoutSeconds: number): Promise<boolean> {
  let q = db
    .updateTable('tb_voucher_order')
    .set({
      status: OrderStatus.cancelled,
      cancel_time: sql<Date>`NOW(3)`,
      cancel_reason: reason,
      stock_return: sql<number>`IF(kind = 1, ${StockReturn.owedToRedis}, ${StockReturn.none})`,
    })
    .where('id', '=', id)
    .where('status', '=', OrderStatus.unpaid);
  if (reason === 'timeout') q = q.where(sql<boolean>`TIMESTAMPADD(SECOND, ${timeoutSeconds}, create_time) <= NOW(3)`);
  return changed(await q.executeTakeFirst());
}

/** 2 → 5 (the buyer asks before use). */
export async function markRefunding(db: Executor, id: string): Promise<boolean> {
  const r = await db
    .updateTable('tb_voucher_order')
    .set({ status: OrderStatus.refunding, refund_request_time: sql<Date>`NOW(3)` })
    .where('id', '=', id)
    .where('status', '=', OrderStatus.paid)
    .executeTakeFirst();
  return changed(r);
}

/** 5 → 6, returning a seckill unit like a cancel does. */
export async function markRefunded(db: Executor, id: string): Promise<boolean> {
  const r = await db
    .updateTable('tb_voucher_order')
    .set({
      status: OrderStatus.refunded,
      refund_time: sql<Date>`NOW(3)`,
      stock_return: sql<number>`IF(kind = 1, ${StockReturn.owedToRedis}, ${StockReturn.none})`,
    })
    .where('id', '=', id)
    .where('status', '=', OrderStatus.refunding)
    .executeTakeFirst();
  return changed(r);
}

/** 2 → 3, by the redeem code. */
export async function markUsed(db: Executor, id: string): Promise<boolean> {
  const r = await db
    .updateTable('tb_voucher_order')
    .set({ status: OrderStatus.used, use_time: sql<Date>`NOW(3)` })
    .where('id', '=', id)
    .where('status', '=', OrderStatus.paid)
    .executeTakeFirst();
  return changed(r);
}

/** The DB half of a stock return; the CHECK (stock <= initial_stock) and this guard refuse a unit that was never taken. */
export async function returnStockRow(db: Executor, voucherId: string): Promise<boolean> {
  const r = await db
    .updateTable('tb_seckill_voucher')
    .set({ stock: sql<number>`stock + 1` })
    .where('voucher_id', '=', voucherId)
    .where(sql<boolean>`stock < initial_stock`)
    .executeTakeFirst();
  return changed(r);
}

export async function markRedisReturned(db: Executor, id: string): Promise<void> {
  await db.updateTable('tb_voucher_order').set({ stock_return: StockReturn.done }).where('id', '=', id).where('stock_return', '=', StockReturn.owedToRedis).execute();
}

export async function findOrderIdByRedeemCode(db: Executor, code: string): Promise<string | undefined> {
  return (await db.selectFrom('tb_voucher_order').select('id').where('redeem_code', '=', code).executeTakeFirst())?.id;
}

/** Unpaid orders past their deadline by the database clock, oldest first. */
export async function overdueUnpaidIds(db: Executor, timeoutSeconds: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tb_voucher_order')
    .select('id')
    .where('status', '=', OrderStatus.unpaid)
    .where('create_time', '<=', sql<Date>`NOW(3) - INTERVAL ${timeoutSeconds} SECOND`)
    .orderBy('create_time')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Units returned in MySQL but still owed to Redis for longer than `graceMs` (a crash or Redis outage in between). */
export async function owedRedisReturns(db: Executor, graceMs: number, limit: number): Promise<{ id: string; voucherId: string; userId: string }[]> {
  const rows = await db
    .selectFrom('tb_voucher_order')
    .select(['id', 'voucher_id', 'user_id'])
    .where('stock_return', '=', StockReturn.owedToRedis)
    .where('update_time', '<=', sql<Date>`NOW(3) - INTERVAL ${graceMs * 1000} MICROSECOND`)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, voucherId: r.voucher_id, userId: r.user_id }));
}

/** The price is the voucher's at this instant, read by the INSERT itself: the order keeps it whatever the merchant does next. */
/**
 * The order, priced from the voucher row as it is, only while the voucher is on sale (INSERT …
 * SELECT reads the row under a shared lock: a take-down commits before or after it, never
 * in between). False when it is not on sale (any more).
 */
export async function insertNormalOrder(db: Executor, o: { id: string; userId: string; voucherId: string }): Promise<boolean> {
  const r = await db
    .insertInto('tb_voucher_order')
    .columns(['id', 'user_id', 'voucher_id', 'kind', 'pay_value'])
    .expression((eb) =>
      eb
        .selectFrom('tb_voucher')
        .select([sql.val(o.id).as('id'), sql.val(o.userId).as('user_id'), 'id as voucher_id', sql.lit(0).as('kind'), 'pay_value'])
        .where('id', '=', o.voucherId)
        .where('status', '=', VoucherStatus.ON_SALE),
    )
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Serializes one user's normal-voucher purchases, so the per-user cap cannot be overrun by a burst. */
export async function lockUserRow(trx: Executor, userId: string): Promise<void> {
  await trx.selectFrom('tb_user').select('id').where('id', '=', userId).forUpdate().execute();
}

export interface VoucherOrderRow {
  id: string;
  userId: string;
  phone: string | null;
  status: number;
  createTime: Date;
  payTime: Date | null;
  useTime: Date | null;
  cancelTime: Date | null;
  cancelReason: 'buyer' | 'timeout' | null;
  refundTime: Date | null;
  stockReturn: number;
}

/** A voucher's orders for the console, newest first, optionally one state. */
export async function listVoucherOrders(db: Executor, voucherId: string, status: number | undefined, offset: number, limit: number): Promise<VoucherOrderRow[]> {
  let q = db
    .selectFrom('tb_voucher_order as o')
    .leftJoin('tb_user as u', 'u.id', 'o.user_id')
    .select(['o.id', 'o.user_id', 'u.phone', 'o.status', 'o.create_time', 'o.pay_time', 'o.use_time', 'o.cancel_time', 'o.cancel_reason', 'o.refund_time', 'o.stock_return'])
    .where('o.voucher_id', '=', voucherId);
  if (status !== undefined) q = q.where('o.status', '=', status);
  const rows = await q.orderBy('o.id', 'desc').offset(offset).limit(limit).execute();
  return rows.map((r) => ({
    id: r.id,
    userId: r.user_id,
    phone: r.phone,
    status: r.status,
    createTime: r.create_time,
    payTime: r.pay_time,
    useTime: r.use_time,
    cancelTime: r.cancel_time,
    cancelReason: r.cancel_reason,
    refundTime: r.refund_time,
    stockReturn: r.stock_return,
  }));
}

/** Orders of a voucher per status, and how many units went back (cancelled + refunded seckill orders). */
export async function voucherOrderCounts(db: Executor, voucherId: string): Promise<{ byStatus: Record<number, number>; returned: number }> {
  const rows = await db
    .selectFrom('tb_voucher_order')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n'), sql<string>`SUM(stock_return = 2)`.as('returned')])
    .where('voucher_id', '=', voucherId)
    .groupBy('status')
    .execute();
  const byStatus: Record<number, number> = {};
  let returned = 0;
  for (const r of rows) {
    byStatus[r.status] = Number(r.n);
    returned += Number(r.returned ?? 0);
  }
  return { byStatus, returned };
}
