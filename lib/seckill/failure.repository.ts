/**
 * SQL for tb_order_failure (migration 004): accepted grabs the worker will never write, and why.
 *   ALREADY_BOUGHT: the buyer already holds a different live order of the voucher (Redis forgot
 *   their first grab and accepted a second; both messages reached the worker). The persisting
 *   transaction records it next to the insert that skipped it, so it happens exactly once.
 *   UNCONFIRMED: the grab's publish got no confirm but the broker may hold the message; the grab
 *   records this (voidUnconfirmedOrder) before it gives the unit back and answers 503.
 * The persisting transaction reads these with the tombstones before inserting, under a shared lock,
 * so a copy of the message is never written afterwards, and a void racing the insert is decided
 * one way: whichever transaction commits first, the other sees it.
 */
import { sql } from 'kysely';
import type { DB, Executor } from '@/lib/db/client';
import type { OrderMessage } from '@/lib/seckill/message';
import { retryDeadlock } from '@/lib/db/retry-deadlock';

export type OrderFailureReason = 'ALREADY_BOUGHT' | 'UNCONFIRMED';

export interface OrderFailure {
  orderId: string;
  userId: string;
  voucherId: string;
  reason: OrderFailureReason;
  keptOrderId: string | null;
}

export interface NeverWritten {
  /**
   * Discarded dead letters (tombstones, lib/order/tombstone.repository.ts) and voided unconfirmed
   * grabs: never written, and their unit goes back (the sweeper's job if the grab could not).
   */
  discarded: Set<string>;
  /** Folded (ALREADY_BOUGHT): never written, and their unit is the one the kept order holds. */
  failed: Set<string>;
}

/**
 * One query for both reasons an order id must not be written. The tombstones are read with a
 * shared lock (see tombstone.repository.ts: a discard deciding right now is waited for).
 */
export async function neverWrittenOrderIds(trx: Executor, orderIds: string[]): Promise<NeverWritten> {
  const out: NeverWritten = { discarded: new Set(), failed: new Set() };
  if (orderIds.length === 0) return out;
  const ids = sql.join(orderIds);
  const { rows } = await sql<{ order_id: string; kind: string }>`
    (SELECT order_id, 'DISCARDED' AS kind FROM tb_order_dead_letter WHERE order_id IN (${ids}) AND status = 'discarded' LOCK IN SHARE MODE)
    UNION ALL
    (SELECT order_id, reason AS kind FROM tb_order_failure WHERE order_id IN (${ids}) LOCK IN SHARE MODE)`.execute(trx);
  for (const r of rows) (r.kind === 'ALREADY_BOUGHT' ? out.failed : out.discarded).add(String(r.order_id));
  return out;
}

/**
 * After an INSERT IGNORE of one voucher's group inserted fewer rows than the group holds: sorts the
 * skipped messages into redeliveries (their id is there) and folded ones (the user holds another
 * live order of the voucher), and records the folded ones. Locking reads: they must see rows that
 * other transactions committed after this one's snapshot (the insert waited for them).
 */
export async function recordFoldedOrders(trx: Executor, voucherId: string, group: OrderMessage[]): Promise<OrderFailure[]> {
  if (group.length === 0) return [];
  const { rows: byId } = await sql<{ id: string }>`
    SELECT id FROM tb_voucher_order WHERE id IN (${sql.join(group.map((m) => m.orderId))}) LOCK IN SHARE MODE`.execute(trx);
  const present = new Set(byId.map((r) => String(r.id)));
  const missing = group.filter((m) => !present.has(m.orderId));
  if (missing.length === 0) return [];
  const { rows: live } = await sql<{ id: string; user_id: string }>`
    SELECT id, user_id FROM tb_voucher_order
    WHERE voucher_id = ${voucherId} AND live_seckill_user IN (${sql.join(missing.map((m) => m.userId))})
    LOCK IN SHARE MODE`.execute(trx);
  const kept = new Map(live.map((r) => [String(r.user_id), String(r.id)]));
  const folded: OrderFailure[] = [];
  for (const m of missing) {
    const keptOrderId = kept.get(m.userId);
    // Skipped for another reason than these two: counted as a duplicate, as before this table.
    if (keptOrderId === undefined || keptOrderId === m.orderId) continue;
    folded.push({ orderId: m.orderId, userId: m.userId, voucherId, reason: 'ALREADY_BOUGHT', keptOrderId });
  }
  if (folded.length > 0) {
    await trx
      .insertInto('tb_order_failure')
      .ignore()
      .values(folded.map((f) => ({ order_id: f.orderId, user_id: f.userId, voucher_id: f.voucherId, reason: f.reason, kept_order_id: f.keptOrderId })))
      .execute();
  }
  return folded;
}

/** For the sweeper and the bench: order ids recorded as failed, with their reason. */
export async function failedOrderIds(db: Executor, orderIds: string[]): Promise<Map<string, OrderFailureReason>> {
  if (orderIds.length === 0) return new Map();
  const rows = await db.selectFrom('tb_order_failure').select(['order_id', 'reason']).where('order_id', 'in', orderIds).execute();
  return new Map(rows.map((r) => [r.order_id, r.reason]));
}

/**
 * A grab whose publish got no confirm, though the broker may hold its message: records that the
 * order must never be written — unless the worker already wrote it. True: voided (the caller gives
 * the unit back and answers 503); false: the order is in MySQL (the caller answers 200). The
 * locking read of the order row (a gap lock when absent) and the worker's shared read of this table
 * serialize the two; a deadlock between them is retried (the whole transaction, from the read).
 */
export function voidUnconfirmedOrder(db: DB, m: OrderMessage): Promise<boolean> {
  return retryDeadlock(() =>
    db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string }>`SELECT id FROM tb_voucher_order WHERE id = ${m.orderId} FOR UPDATE`.execute(trx);
      if (rows.length > 0) return false;
      await trx
        .insertInto('tb_order_failure')
        .ignore()
        .values({ order_id: m.orderId, user_id: m.userId, voucher_id: m.voucherId, reason: 'UNCONFIRMED', kept_order_id: null })
        .execute();
      return true;
    }),
  );
}

export async function findOrderFailure(db: Executor, orderId: string): Promise<OrderFailure | undefined> {
  const r = await db.selectFrom('tb_order_failure').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  return r ? { orderId: r.order_id, userId: r.user_id, voucherId: r.voucher_id, reason: r.reason, keptOrderId: r.kept_order_id } : undefined;
}
