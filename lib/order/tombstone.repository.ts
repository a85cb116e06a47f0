/**
 * A discarded dead letter is a tombstone: the admin decided the order must never be written, and
 * its unit goes back on sale. A copy of the message may still be in flight (a retry queue, a
 * sweeper republish), so the persisting transaction reads the tombstones with a shared lock
 * (neverWrittenOrderIds in lib/seckill/failure.repository.ts): a
 * discard that is deciding right now (it holds the dead letter's row lock) is waited for, and a
 * discard that comes after sees the committed order and refuses (orderIsPersisted).
 */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

/** Read under a shared lock, inside the discard's transaction (after it locked its dead letter row). */
export async function orderIsPersisted(trx: Executor, orderId: string): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM tb_voucher_order WHERE id = ${orderId} LOCK IN SHARE MODE`.execute(trx);
  return rows.length > 0;
}
