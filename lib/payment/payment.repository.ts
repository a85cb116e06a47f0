/**
 * SQL for tb_payment (one row per provider transaction, unique, keyed also by the client's
 * Idempotency-Key) and tb_payment_attempt (every provider call: written before it, updated after).
 */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';
import type { PaymentAttemptStatus } from '@/lib/db/schema';

export type PaymentStatus = 'paid' | 'refund_due' | 'refunded';

export interface PaymentRow {
  id: string;
  orderId: string;
  userId: string;
  txnId: string;
  provider: string;
  amount: number;
  status: PaymentStatus;
}

const toRow = (r: { id: string; order_id: string; user_id: string; txn_id: string; provider: string; amount: number | bigint | string; status: PaymentStatus }): PaymentRow => ({
  id: r.id,
  orderId: r.order_id,
  userId: r.user_id,
  txnId: r.txn_id,
  provider: r.provider,
  amount: Number(r.amount),
  status: r.status,
});

const cols = ['id', 'order_id', 'user_id', 'txn_id', 'provider', 'amount', 'status'] as const;

/** The new row's id, or null when the transaction (or the user's idempotency key) is already recorded. */
export async function insertPaymentOnce(
  db: Executor,
  p: { orderId: string; userId: string; provider: string; txnId: string; idempotencyKey: string | null; amount: number; status: PaymentStatus },
): Promise<string | null> {
  const r = await db
    .insertInto('tb_payment')
    .ignore()
    .values({ order_id: p.orderId, user_id: p.userId, provider: p.provider, txn_id: p.txnId, idempotency_key: p.idempotencyKey, amount: p.amount, status: p.status })
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1 ? String(r.insertId) : null;
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

/** Conditional: only from `from`, so a late writer never undoes a later state. */
export async function setPaymentStatus(db: Executor, id: string, from: PaymentStatus, to: PaymentStatus): Promise<boolean> {
  const r = await db.updateTable('tb_payment').set({ status: to }).where('id', '=', id).where('status', '=', from).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

// ---- tb_payment_attempt ----

export interface AttemptRow {
  id: string;
  kind: 'charge' | 'refund';
  orderId: string;
  userId: string;
  provider: string;
  idempotencyKey: string | null;
  amount: number;
  txnId: string | null;
  refundOf: string | null;
  closesOrder: boolean;
  status: PaymentAttemptStatus;
  tries: number;
  lastError: string | null;
  createTime: Date;
  updateTime: Date;
}

const attemptCols = [
  'id',
  'kind',
  'order_id',
  'user_id',
  'provider',
  'idempotency_key',
  'amount',
  'txn_id',
  'refund_of',
  'closes_order',
  'status',
  'tries',
  'last_error',
  'create_time',
  'update_time',
] as const;

type AttemptDbRow = {
  id: string;
  kind: 'charge' | 'refund';
  order_id: string;
  user_id: string;
  provider: string;
  idempotency_key: string | null;
  amount: string;
  txn_id: string | null;
  refund_of: string | null;
  closes_order: number;
  status: PaymentAttemptStatus;
  tries: number;
  last_error: string | null;
  create_time: Date;
  update_time: Date;
};

const toAttempt = (r: AttemptDbRow): AttemptRow => ({
  id: r.id,
  kind: r.kind,
  orderId: r.order_id,
  userId: r.user_id,
  provider: r.provider,
  idempotencyKey: r.idempotency_key,
  amount: Number(r.amount),
  txnId: r.txn_id,
  refundOf: r.refund_of,
  closesOrder: r.closes_order === 1,
  status: r.status,
  tries: r.tries,
  lastError: r.last_error,
  createTime: r.create_time,
  updateTime: r.update_time,
});

/** Attempts the books still owe an outcome: a charge that may have taken (or took) money unsettled, a refund the provider has not confirmed. */
export const OWED: PaymentAttemptStatus[] = ['intent', 'pending', 'charged'];

/**
 * Claims the right to charge an order, durably, before the provider is called: the row is the
 * intent. Null when the order already has a live charge or the user's key is taken (a unique key
 * decides, so of concurrent claims exactly one wins).
 */
export async function claimCharge(db: Executor, c: { orderId: string; userId: string; provider: string; idempotencyKey: string | null; amount: number }): Promise<string | null> {
  const r = await db
    .insertInto('tb_payment_attempt')
    .ignore()
    .values({ kind: 'charge', order_id: c.orderId, user_id: c.userId, provider: c.provider, idempotency_key: c.idempotencyKey, amount: c.amount, status: 'intent' })
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1 ? String(r.insertId) : null;
}

export async function findAttempt(db: Executor, id: string): Promise<AttemptRow | undefined> {
  const r = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('id', '=', id).executeTakeFirst();
  return r && toAttempt(r);
}

export async function findAttemptByKey(db: Executor, userId: string, key: string): Promise<AttemptRow | undefined> {
  const r = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('user_id', '=', userId).where('idempotency_key', '=', key).executeTakeFirst();
  return r && toAttempt(r);
}

export async function findLiveCharge(db: Executor, orderId: string): Promise<AttemptRow | undefined> {
  const r = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('live_charge_order', '=', orderId).executeTakeFirst();
  return r && toAttempt(r);
}

export async function attemptsOfOrder(db: Executor, orderId: string): Promise<AttemptRow[]> {
  const rows = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('order_id', '=', orderId).orderBy('id').execute();
  return rows.map(toAttempt);
}

/**
 * A live charge's outcome (pending / charged with its transaction / failed). False if it already
 * moved on. A failed charge took nothing, so it gives its Idempotency-Key back: the buyer's retry
 * from the same page (same key) is a new attempt, not the old refusal.
 */
export async function setChargeOutcome(db: Executor, id: string, to: 'pending' | 'charged' | 'failed', txnId: string | null, error?: string): Promise<boolean> {
  const r = await db
    .updateTable('tb_payment_attempt')
    .set({ status: to, ...(txnId ? { txn_id: txnId } : {}), ...(error ? { last_error: error.slice(0, 255) } : {}), ...(to === 'failed' ? { idempotency_key: null } : {}) })
    .where('id', '=', id)
    .where('kind', '=', 'charge')
    .where('status', 'in', OWED)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The charge is in tb_payment: settled, whatever it was (even `failed`: the money arrived after all). */
export async function markChargeSettled(db: Executor, id: string, txnId: string): Promise<void> {
  await db.updateTable('tb_payment_attempt').set({ status: 'settled', txn_id: txnId }).where('id', '=', id).where('kind', '=', 'charge').where('status', '!=', 'settled').execute();
}

/** The refund's intent, in the transaction that decides the money goes back. Null if that payment already has one. */
export async function insertRefundIntent(
  db: Executor,
  r: { orderId: string; userId: string; provider: string; amount: number; txnId: string; paymentId: string; closesOrder: boolean },
): Promise<string | null> {
  const res = await db
    .insertInto('tb_payment_attempt')
    .ignore()
    .values({
      kind: 'refund',
      order_id: r.orderId,
      user_id: r.userId,
      provider: r.provider,
      amount: r.amount,
      txn_id: r.txnId,
      refund_of: r.paymentId,
      closes_order: r.closesOrder ? 1 : 0,
      status: 'intent',
    })
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1 ? String(res.insertId) : null;
}

export async function findRefundOf(db: Executor, paymentId: string): Promise<AttemptRow | undefined> {
  const r = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('refund_of', '=', paymentId).executeTakeFirst();
  return r && toAttempt(r);
}

/** The refund a merchant approved for this order (it moves the order 5 → 6 when done), if any. */
export async function findClosingRefund(db: Executor, orderId: string): Promise<AttemptRow | undefined> {
  const r = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('order_id', '=', orderId).where('kind', '=', 'refund').where('closes_order', '=', 1).executeTakeFirst();
  return r && toAttempt(r);
}

/** intent → done, once: of two finishers (the request, the reconciler) one does the follow-up writes. */
export async function markRefundDone(db: Executor, id: string): Promise<boolean> {
  const r = await db.updateTable('tb_payment_attempt').set({ status: 'done' }).where('id', '=', id).where('kind', '=', 'refund').where('status', '=', 'intent').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A provider call failed: counted, and its update_time moves, so the reconciler waits a grace before the next try. */
export async function noteAttemptFailure(db: Executor, id: string, error: string): Promise<void> {
  await db
    .updateTable('tb_payment_attempt')
    .set({ tries: sql<number>`tries + 1`, last_error: error.slice(0, 255), update_time: sql<Date>`NOW(3)` })
    .where('id', '=', id)
    .execute();
}

/** One provider's attempts still owing an outcome and untouched for `graceSeconds` (oldest first). */
export async function owedAttempts(db: Executor, provider: string, graceSeconds: number, limit: number): Promise<AttemptRow[]> {
  const rows = await db
    .selectFrom('tb_payment_attempt')
    .select(attemptCols)
    .where('status', 'in', OWED)
    .where('provider', '=', provider)
    .where('update_time', '<=', sql<Date>`NOW(3) - INTERVAL ${graceSeconds} SECOND`)
    .orderBy('update_time')
    .limit(limit)
    .execute();
  return rows.map(toAttempt);
}

export interface OwedSummary {
  refunds: { count: number; amount: number };
  charges: { count: number; amount: number };
}

/** What the books still owe: refunds the provider has not confirmed, charges not settled. */
export async function owedSummary(db: Executor): Promise<OwedSummary> {
  const rows = await db
    .selectFrom('tb_payment_attempt')
    .select(['kind', (eb) => eb.fn.countAll<string>().as('n'), sql<string>`COALESCE(SUM(amount), 0)`.as('amount')])
    .where('status', 'in', OWED)
    .groupBy('kind')
    .execute();
  const out: OwedSummary = { refunds: { count: 0, amount: 0 }, charges: { count: 0, amount: 0 } };
  for (const r of rows) out[r.kind === 'refund' ? 'refunds' : 'charges'] = { count: Number(r.n), amount: Number(r.amount) };
  return out;
}

/** The console's list of what is owed, oldest first. */
export async function listOwedAttempts(db: Executor, offset: number, limit: number): Promise<AttemptRow[]> {
  const rows = await db.selectFrom('tb_payment_attempt').select(attemptCols).where('status', 'in', OWED).orderBy('create_time').orderBy('id').offset(offset).limit(limit).execute();
  return rows.map(toAttempt);
}
