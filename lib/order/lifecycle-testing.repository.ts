/** SQL behind lib/order/lifecycle-testing.ts (tests and the bench only). */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

export async function insertNormalVoucher(db: Executor, shopId: string, payValue = 4750): Promise<string> {
  const r = await db.insertInto('tb_voucher').values({ shop_id: shopId, title: `测试代金券 ${Date.now() % 1e6}`, pay_value: payValue, actual_value: 5000, type: 0 }).executeTakeFirstOrThrow();
  return String(r.insertId);
}

export interface OrderSnapshot {
  id: string;
  userId: string;
  status: number;
  stockReturn: number;
  cancelReason: string | null;
  /** cancel_time − (create_time + timeout), ms; null unless cancelled. */
  latenessMs: number | null;
}

export async function orderSnapshots(db: Executor, voucherId: string, timeoutSeconds: number): Promise<OrderSnapshot[]> {
  const rows = await db
    .selectFrom('tb_voucher_order')
    .select([
      'id',
      'user_id',
      'status',
      'stock_return',
      'cancel_reason',
      sql<string | null>`TIMESTAMPDIFF(MICROSECOND, TIMESTAMPADD(SECOND, ${timeoutSeconds}, create_time), cancel_time) / 1000`.as('lateness'),
    ])
    .where('voucher_id', '=', voucherId)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    userId: r.user_id,
    status: r.status,
    stockReturn: r.stock_return,
    cancelReason: r.cancel_reason,
    latenessMs: r.lateness === null ? null : Number(r.lateness),
  }));
}

export async function paymentsOf(db: Executor, orderIds: string[]): Promise<{ orderId: string; status: string }[]> {
  if (orderIds.length === 0) return [];
  const rows = await db.selectFrom('tb_payment').select(['order_id', 'status']).where('order_id', 'in', orderIds).execute();
  return rows.map((r) => ({ orderId: r.order_id, status: r.status }));
}

export async function orderRow(db: Executor, id: string) {
  return db.selectFrom('tb_voucher_order').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Moves an order's acceptance time into the past (a lost timeout message, long overdue). */
export async function backdateOrder(db: Executor, id: string, seconds: number): Promise<void> {
  await sql`UPDATE tb_voucher_order SET create_time = create_time - INTERVAL ${seconds} SECOND WHERE id = ${id}`.execute(db);
}
