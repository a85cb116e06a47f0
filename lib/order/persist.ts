/**
 * Writes a batch of accepted orders in one MySQL transaction (docs/flash-sale.md#the-order-worker). Idempotent:
 * INSERT IGNORE skips orders already written (redeliveries, sweeper republishes, a message twice
 * in one batch), and each voucher's DB stock drops by the number of rows really inserted, under a
 * `stock >= n` guard — so a duplicate creates nothing and takes nothing.
 *
 * A message skipped because its buyer already holds a *different* live order of the voucher (Redis
 * forgot their first grab and accepted a second) is not a duplicate: it is recorded as failed
 * (tb_order_failure, same transaction) so its buyer's status poll says so. That costs queries only
 * when a group inserts fewer rows than it holds.
 */
import type { DB } from '@/lib/db/client';
import type { OrderMessage } from '@/lib/seckill/message';
import { insertOrdersIgnoringDuplicates } from '@/lib/order/order.repository';
import { takeStock } from '@/lib/seckill/seckill.repository';
import { neverWrittenOrderIds, recordFoldedOrders, type OrderFailure } from '@/lib/seckill/failure.repository';
import { saleWindows } from '@/lib/order/sale-window.repository';
import { grabbedInWindow } from '@/lib/order/off-sale';
import { env } from '@/lib/env';

/** The DB has fewer units left than the new orders need: Redis and MySQL disagree about this voucher. */
export class StockGuardError extends Error {
  constructor(readonly voucherId: string, readonly wanted: number) {
    super(`stock guard: voucher ${voucherId} has fewer than ${wanted} units left in the database (or no seckill row)`);
    this.name = 'StockGuardError';
  }
}

export interface PersistResult {
  /** Rows inserted now. */
  inserted: number;
  /** Messages whose order was already there, or already recorded as failed (redeliveries). */
  duplicates: number;
  /** Orders whose dead letter the admin discarded: never written; the sweeper gives their unit back. */
  discarded: Set<string>;
  /** Orders grabbed outside the window MySQL holds: not written, for the caller to dead-letter. */
  offSale: OrderMessage[];
  /** Orders never to be written whose failure is recorded (now or by an earlier delivery): done, ack them. */
  failed: Set<string>;
  /** Of those, the ones recorded by this call. */
  folded: OrderFailure[];
  /**
   * When each order's payment window starts, by order id (`payableFrom`: the create_time this call
   * inserts), so that its timeout is scheduled from the instant written, not from a second
   * computation. Every order not discarded, off sale or failed is here, written now or already (a
   * redelivery).
   */
  payableAt: Map<string, number>;
}

/** A write later than this after the grab (or half the payment window, if shorter) is late. */
export const LATE_WRITE_MS = 10_000;

/**
 * When the order's payment window starts: at the grab (`at`, its create_time), unless the order is
 * written late (a database outage, retries, a dead letter replayed later), when it starts at the
 * write. Else an order written after its deadline would be cancelled on arrival, and its buyer,
 * answered 200, could never pay for it. The timeout is scheduled from the same instant.
 */
export function payableFrom(m: OrderMessage, writtenAt: number, windowMs = env.ORDER_PAY_TIMEOUT_SECONDS * 1000): OrderMessage {
  return writtenAt - m.at > Math.min(LATE_WRITE_MS, windowMs / 2) ? { ...m, at: writtenAt } : m;
}

export function groupByVoucher(msgs: OrderMessage[]): [string, OrderMessage[]][] {
  const byOrder = new Map<string, OrderMessage>();
  for (const m of msgs) byOrder.set(m.orderId, m);
  const groups = new Map<string, OrderMessage[]>();
  for (const m of byOrder.values()) {
    const g = groups.get(m.voucherId);
    if (g) g.push(m);
    else groups.set(m.voucherId, [m]);
  }
  // A fixed lock order (voucher id, then order id) keeps concurrent workers from deadlocking.
  const byId = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
  for (const g of groups.values()) g.sort((a, b) => byId(a.orderId, b.orderId));
  return [...groups.entries()].sort(([a], [b]) => byId(a, b));
}

export async function persistOrders(db: DB, msgs: OrderMessage[], writtenAt = Date.now()): Promise<PersistResult> {
  const groups = groupByVoucher(msgs);
  let discarded = new Set<string>();
  let failed = new Set<string>();
  let offSale: OrderMessage[] = [];
  let folded: OrderFailure[] = [];
  let payableAt = new Map<string, number>();
  const inserted = await db.transaction().execute(async (trx) => {
    let total = 0;
    ({ discarded, failed } = await neverWrittenOrderIds(trx, msgs.map((m) => m.orderId)));
    const windows = await saleWindows(trx, groups.map(([voucherId]) => voucherId));
    offSale = [];
    folded = [];
    payableAt = new Map();
    for (const [voucherId, all] of groups) {
      const w = windows.get(voucherId);
      const group: OrderMessage[] = [];
      for (const m of all) {
        if (discarded.has(m.orderId) || failed.has(m.orderId)) continue;
        if (grabbedInWindow(m, w)) group.push(m);
        else offSale.push(m);
      }
      if (group.length === 0) continue;
      // The window check above is on the grab's time; the row's create_time is when its payment window starts.
      const rows = group.map((m) => payableFrom(m, writtenAt));
      for (const m of rows) payableAt.set(m.orderId, m.at);
      const n = await insertOrdersIgnoringDuplicates(trx, rows, w?.payValue);
      if (n > 0 && !(await takeStock(trx, voucherId, n))) throw new StockGuardError(voucherId, n);
      if (n < group.length) folded.push(...(await recordFoldedOrders(trx, voucherId, group)));
      total += n;
    }
    return total;
  });
  for (const f of folded) failed.add(f.orderId);
  return { inserted, duplicates: msgs.length - inserted - discarded.size - offSale.length - folded.length, discarded, offSale, failed, folded, payableAt };
}

const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_QUERY_INTERRUPTED',
  'ER_CONNECTION_KILLED',
]);

/**
 * Errors that say nothing about the message — the database is unreachable, restarting or busy —
 * are retried in place without spending the message's attempts; anything else counts.
 */
export function isTransientDbError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: string; fatal?: boolean; message?: string };
  if (e.code && TRANSIENT_CODES.has(e.code)) return true;
  if (e.fatal) return true;
  return /Pool is closed|connect ETIMEDOUT|Connection lost|Can't add new command when connection is in closed state/i.test(e.message ?? '');
}
