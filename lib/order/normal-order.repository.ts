import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';
import { OrderStatus } from '@/lib/order/lifecycle.repository';

export interface NormalOrderCounts {
  /** unpaid + paid: what the per-user holding cap counts */
  live: number;
  unpaid: number;
  /** cancelled by the buyer or by the payment timeout within the last 24 h (database clock) */
  cancelledToday: number;
}

/** One user's orders of one normal voucher, counted in one read (the caller holds the user's row lock). */
export async function countNormalOrders(db: Executor, voucherId: string, userId: string): Promise<NormalOrderCounts> {
  const r = await db
    .selectFrom('tb_voucher_order')
    .select([
      sql<number>`COALESCE(SUM(status IN (${OrderStatus.unpaid}, ${OrderStatus.paid})), 0)`.as('live'),
      sql<number>`COALESCE(SUM(status = ${OrderStatus.unpaid}), 0)`.as('unpaid'),
      sql<number>`COALESCE(SUM(status = ${OrderStatus.cancelled} AND cancel_time > NOW(3) - INTERVAL 1 DAY), 0)`.as('cancelledToday'),
    ])
    .where('user_id', '=', userId)
    .where('voucher_id', '=', voucherId)
    .where('kind', '=', 0)
    .executeTakeFirstOrThrow();
  return { live: Number(r.live), unpaid: Number(r.unpaid), cancelledToday: Number(r.cancelledToday) };
}
