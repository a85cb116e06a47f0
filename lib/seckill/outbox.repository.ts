/**
 * The SQL the outbox's sweeper asks before it releases or republishes a pending grab: is the order
 * written (tb_voucher_order), and did it end as a dead letter (tb_order_dead_letter). The order
 * status query reads the dead-letter states too.
 */
import type { Executor } from '@/lib/db/client';

export async function existingOrderIds(db: Executor, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('tb_voucher_order').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

export type DeadLetterStatus = 'dead' | 'replayed' | 'discarded';

/** The latest dead-letter status per order id, for orders that have one. */
export interface DeadLetterState {
  status: DeadLetterStatus;
  userId: string | null;
  voucherId: string | null;
}

export async function deadLetterStatuses(db: Executor, orderIds: string[]): Promise<Map<string, DeadLetterState>> {
  const out = new Map<string, DeadLetterState>();
  if (orderIds.length === 0) return out;
  const rows = await db
    .selectFrom('tb_order_dead_letter')
    .select(['order_id', 'status', 'user_id', 'voucher_id'])
    .where('order_id', 'in', orderIds)
    .orderBy('id')
    .execute();
  // The latest row of each order, except that a discard is final (the worker's tombstone reads it so too).
  for (const r of rows) if (r.order_id && out.get(r.order_id)?.status !== 'discarded') out.set(r.order_id, { status: r.status, userId: r.user_id, voucherId: r.voucher_id });
  return out;
}
