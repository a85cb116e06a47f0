/** SQL behind the payment tests: the books as the database holds them. */
import type { Executor } from '@/lib/db/client';

export async function paymentRowsOf(db: Executor, orderId: string) {
  const rows = await db.selectFrom('tb_payment').select(['id', 'txn_id', 'amount', 'status', 'idempotency_key']).where('order_id', '=', orderId).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, txnId: r.txn_id, amount: Number(r.amount), status: r.status, key: r.idempotency_key }));
}

export async function attemptRowsOf(db: Executor, orderId: string) {
  const rows = await db.selectFrom('tb_payment_attempt').select(['id', 'kind', 'status', 'amount', 'txn_id', 'tries']).where('order_id', '=', orderId).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, kind: r.kind, status: r.status, amount: Number(r.amount), txnId: r.txn_id, tries: r.tries }));
}

export async function setVoucherPrice(db: Executor, voucherId: string, fen: number): Promise<void> {
  await db.updateTable('tb_voucher').set({ pay_value: fen }).where('id', '=', voucherId).execute();
}

/** Makes every attempt of these orders look older than any reconcile grace. */
export async function ageAttempts(db: Executor, orderIds: string[], seconds = 3600): Promise<void> {
  if (orderIds.length === 0) return;
  const { sql } = await import('kysely');
  await sql`UPDATE tb_payment_attempt SET update_time = update_time - INTERVAL ${seconds} SECOND WHERE order_id IN (${sql.join(orderIds)})`.execute(db);
}
