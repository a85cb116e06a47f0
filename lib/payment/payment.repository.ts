/** SQL for tb_payment: one row per provider transaction (unique), keyed also by the client's Idempotency-Key. */
import type { Executor } from '@/lib/db/client';

export type PaymentStatus = 'paid' | 'refund_due' | 'refunded';

export interface PaymentRow {
  orderId: string;
  txnId: string;
  provider: string;
  amount: number;
  status: PaymentStatus;
}

const toRow = (r: { order_id: string; txn_id: string; provider: string; amount: number | bigint | string; status: PaymentStatus }): PaymentRow => ({
  orderId: r.order_id,
  txnId: r.txn_id,
  provider: r.provider,
  amount: Number(r.amount),
  status: r.status,
});

const cols = ['order_id', 'txn_id', 'provider', 'amount', 'status'] as const;

/** False when the transaction (or the user's idempotency key) is already recorded. */
export async function insertPaymentOnce(
  db: Executor,
  p: { orderId: string; userId: string; provider: string; txnId: string; idempotencyKey: string | null; amount: number; status: PaymentStatus },
): Promise<boolean> {
  const r = await db
    .insertInto('tb_payment')
    .ignore()
    .values({ order_id: p.orderId, user_id: p.userId, provider: p.provider, txn_id: p.txnId, idempotency_key: p.idempotencyKey, amount: p.amount, status: p.status })
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findPaymentByTxn(db: Executor, provider: string, txnId: string): Promise<PaymentRow | undefined> {
  const r = await db.selectFrom('tb_payment').select(cols).where('provider', '=', provider).where('txn_id', '=', txnId).executeTakeFirst();
  return r && toRow(r);
}

export async function findPaymentByIdempotencyKey(db: Executor, userId: string, key: string): Promise<PaymentRow | undefined> {
  const r = await db.selectFrom('tb_payment').select(cols).where('user_id', '=', userId).where('idempotency_key', '=', key).executeTakeFirst();
  return r && toRow(r);
}

export async function findPaidPayment(db: Executor, orderId: string): Promise<PaymentRow | undefined> {
  const r = await db.selectFrom('tb_payment').select(cols).where('order_id', '=', orderId).where('status', '=', 'paid').executeTakeFirst();
  return r && toRow(r);
}

export async function setPaymentStatus(db: Executor, provider: string, txnId: string, status: PaymentStatus): Promise<void> {
  await db.updateTable('tb_payment').set({ status }).where('provider', '=', provider).where('txn_id', '=', txnId).execute();
}
