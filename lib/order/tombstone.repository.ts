/**
 * A discarded dead letter is a tombstone: the admin decided the order must never be written, and
 * its unit goes back on sale. A copy of the message may still be in flight (a retry queue, a
 * sweeper republish), so the persisting transaction reads the tombstones with a shared lock: a
 * discard that is deciding right now (it holds the dead letter's row lock) is waited for, and a
 * discard that comes after sees the committed order and refuses (orderIsPersisted).
 */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

export async function discardedOrderIds(trx: Executor, orderIds: string[]): Promise<Set<string>> {
  if (orderIds.length === 0) return new Set();
  const { rows } = await sql<{ order_id: string }>`
    SELECT order_id FROM tb_order_dead_letter
    WHERE order_id IN (${sql.join(orderIds)}) AND status = 'discarded'
    LOCK IN SHARE MODE`.execute(trx);
  return new Set(rows.map((r) => String(r.order_id)));
}

/** Read under a shared lock, inside the discard's transaction (after it locked its dead letter row). */
export async function orderIsPersisted(trx: Executor, orderId: string): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM tb_voucher_order WHERE id = ${orderId} LOCK IN SHARE MODE`.execute(trx);
  return rows.length > 0;
}
