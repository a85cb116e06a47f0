/** SQL for tb_voucher_order and tb_order_dead_letter. */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';
import type { OrderMessage } from '@/lib/seckill/message';

/**
 * INSERT IGNORE: an order id (or user + voucher) that is already there is skipped, which is what
 * makes redelivered and duplicated messages harmless. Returns how many rows were really inserted.
 */
export async function insertOrdersIgnoringDuplicates(db: Executor, msgs: OrderMessage[], payValue?: number): Promise<number> {
  if (msgs.length === 0) return 0;
  // Each order keeps the price it was placed at: the batch's voucher read (one voucher per call)
  // passes it; without it the INSERT reads it per row from tb_voucher.
  const price = (voucherId: string) => (payValue !== undefined ? payValue : sql<string>`(SELECT pay_value FROM tb_voucher WHERE id = ${voucherId})`);
  const r = await db
    .insertInto('tb_voucher_order')
    .ignore()
    .values(msgs.map((m) => ({ id: m.orderId, user_id: m.userId, voucher_id: m.voucherId, pay_value: price(m.voucherId), create_time: new Date(m.at), update_time: new Date(m.at) })))
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n);
}

export interface OrderView {
  id: string;
  userId: string;
  voucherId: string;
  orderStatus: number;
  createdAt: Date;
  voucherTitle: string | null;
  payValue: number | null;
  actualValue: number | null;
  shopId: string | null;
  shopName: string | null;
  kind: number;
  payTime: Date | null;
  useTime: Date | null;
  cancelTime: Date | null;
  cancelReason: 'buyer' | 'timeout' | null;
  refundTime: Date | null;
  redeemCode: string | null;
}

function orderViewQuery(db: Executor) {
  return db
    .selectFrom('tb_voucher_order as o')
    .leftJoin('tb_voucher as v', 'v.id', 'o.voucher_id')
    .leftJoin('tb_shop as s', 's.id', 'v.shop_id')
    .select([
      'o.id',
      'o.user_id',
      'o.voucher_id',
      'o.status',
      'o.create_time',
      'v.title',
      'o.pay_value',
      'v.actual_value',
      'v.shop_id',
      's.name as shop_name',
      'o.kind',
      'o.pay_time',
      'o.use_time',
      'o.cancel_time',
      'o.cancel_reason',
      'o.refund_time',
      'o.redeem_code',
    ]);
}

type OrderViewRow = Awaited<ReturnType<ReturnType<typeof orderViewQuery>['executeTakeFirstOrThrow']>>;

const toView = (r: OrderViewRow): OrderView => ({
  id: r.id,
  userId: r.user_id,
  voucherId: r.voucher_id,
  orderStatus: r.status,
  createdAt: r.create_time,
  voucherTitle: r.title,
  payValue: r.pay_value === null ? null : Number(r.pay_value),
  actualValue: r.actual_value === null ? null : Number(r.actual_value),
  shopId: r.shop_id,
  shopName: r.shop_name,
  kind: r.kind,
  payTime: r.pay_time,
  useTime: r.use_time,
  cancelTime: r.cancel_time,
  cancelReason: r.cancel_reason,
  refundTime: r.refund_time,
  redeemCode: r.redeem_code,
});

export async function findOrderView(db: Executor, id: string): Promise<OrderView | undefined> {
  const r = await orderViewQuery(db).where('o.id', '=', id).executeTakeFirst();
  return r ? toView(r) : undefined;
}

/** Newest first (ids grow with time); one extra row tells the caller whether a next page exists. */
export async function listUserOrderViews(db: Executor, userId: string, offset: number, limit: number): Promise<OrderView[]> {
  const rows = await orderViewQuery(db).where('o.user_id', '=', userId).orderBy('o.id', 'desc').offset(offset).limit(limit).execute();
  return rows.map(toView);
}

export interface DeadLetterInput {
  orderId: string | null;
  voucherId: string | null;
  userId: string | null;
  payload: string;
  reason: string;
  attempts: number;
}

/**
 * Records a dead letter once per order: a worker that dies between this insert and its ack sees
 * the message again, and must not file it twice. Nor after an admin discarded it: a copy of the
 * order still in flight (a redelivery, a sweeper republish) that fails after the discard would
 * file a new `dead` row behind the `discarded` one, and the sweeper, reading the latest row, would
 * then keep the unit the discard gave back for good. After a replay a new failure is filed again.
 * A poison message (no order id): once per body while its row waits for the admin.
 *
 * "Once" is the table's unique key (once_key, migration 012: the order id while its row is dead or
 * discarded, the body's hash while a poison row is dead), so this is a plain insert that leaves an
 * existing row alone. It was INSERT ... SELECT ... WHERE NOT EXISTS: two workers filing at once,
 * even two different orders, deadlocked on its gap locks and the AUTO-INC lock, and MariaDB
 * reported ER_AUTOINC_READ_FAILED, which the worker does not retry: that dead letter was lost
 * (lib/order/dead-letter-once.test.ts).
 */
export async function insertDeadLetterOnce(db: Executor, d: DeadLetterInput): Promise<void> {
  await sql`
    INSERT INTO tb_order_dead_letter (order_id, voucher_id, user_id, payload, reason, attempts)
    VALUES (${d.orderId}, ${d.voucherId}, ${d.userId}, ${d.payload}, ${d.reason.slice(0, 512)}, ${d.attempts})
    ON DUPLICATE KEY UPDATE id = id
  `.execute(db);
}
