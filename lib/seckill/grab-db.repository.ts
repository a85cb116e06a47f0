/** SQL behind lib/seckill/grab-db.ts, the benchmark baseline that writes its order in the grab. */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';
import { LIVE_ORDER_STATUSES } from '@/lib/seckill/seckill.repository';

export async function insertOrder(db: Executor, order: { id: string; userId: string; voucherId: string }): Promise<void> {
  await db
    .insertInto('tb_voucher_order')
    .values({ id: order.id, user_id: order.userId, voucher_id: order.voucherId, pay_value: sql<string>`(SELECT pay_value FROM tb_voucher WHERE id = ${order.voucherId})` })
    .execute();
}

export async function hasOrderFor(db: Executor, voucherId: string, userId: string): Promise<boolean> {
  // Only a live order counts: a cancelled or refunded one gave its unit back. (The Redis grab also
  // refuses such a buyer, from the sale's forfeit set; this benchmark baseline's check does not.)
  const row = await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).where('user_id', '=', userId).where('status', 'in', LIVE_ORDER_STATUSES).executeTakeFirst();
  return row !== undefined;
}
