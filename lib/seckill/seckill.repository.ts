/** SQL for tb_seckill_voucher and the buyers view of tb_voucher_order. */
import { sql } from 'kysely';
import type { DB, Executor } from '@/lib/db/client';
import { StockReturn } from '@/lib/db/schema';

export interface SeckillRow {
  voucherId: string;
  shopId: string;
  type: number;
  status: number;
  initialStock: number;
  stock: number;
  beginTime: Date;
  endTime: Date;
}

export async function findSeckillVoucher(db: Executor, voucherId: string): Promise<SeckillRow | undefined> {
  const row = await db
    .selectFrom('tb_seckill_voucher as s')
    .innerJoin('tb_voucher as v', 'v.id', 's.voucher_id')
    .select(['s.voucher_id', 'v.shop_id', 'v.type', 'v.status', 's.initial_stock', 's.stock', 's.begin_time', 's.end_time'])
    .where('s.voucher_id', '=', voucherId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    voucherId: row.voucher_id,
    shopId: row.shop_id,
    type: row.type,
    status: row.status,
    initialStock: row.initial_stock,
    stock: row.stock,
    beginTime: row.begin_time,
    endTime: row.end_time,
  };
}

/**
 * Locks the voucher's stock row for the caller's transaction and reads the sale's numbers. Every
 * writer of the stock (worker, add-stock, admin edits) takes this row lock, so whatever Redis
 * work happens while it is held sees the database as it stays until commit.
 */
export async function lockSeckillRow(trx: Executor, voucherId: string): Promise<{ initialStock: number; beginTime: Date; endTime: Date; buckets: number } | undefined> {
  const row = await trx
    .selectFrom('tb_seckill_voucher')
    .select(['initial_stock', 'begin_time', 'end_time', 'buckets'])
    .where('voucher_id', '=', voucherId)
    .forUpdate()
    .executeTakeFirst();
  return row && { initialStock: row.initial_stock, beginTime: row.begin_time, endTime: row.end_time, buckets: row.buckets };
}

/** How many stock buckets the sale has (fixed at creation), or null for no such flash sale. */
export async function findBucketCount(db: Executor, voucherId: string): Promise<number | null> {
  const row = await db.selectFrom('tb_seckill_voucher').select('buckets').where('voucher_id', '=', voucherId).executeTakeFirst();
  return row ? Number(row.buckets) : null;
}

/** Orders that hold a unit: unpaid, paid, used, refunding (cancelled and refunded ones gave it back). */
export const LIVE_ORDER_STATUSES = [1, 2, 3, 5];

/** Orders whose unit went back on sale: the buyer cancelled, the payment timed out, or it was refunded. */
export const RETURNED_ORDER_STATUSES = [4, 6];

/** Every user with a live order for the voucher, in id pages (a sale can have many buyers). */
export function buyerIdPages(db: Executor, voucherId: string, pageSize = 5000): AsyncGenerator<string[]> {
  return userIdPages(db, voucherId, LIVE_ORDER_STATUSES, pageSize, false);
}

/** Every user who gave a unit of the voucher back (the sale's forfeit set), in id pages. */
export function forfeitIdPages(db: Executor, voucherId: string, pageSize = 5000): AsyncGenerator<string[]> {
  // distinct: before the forfeit rule a buyer could cancel the same sale more than once
  return userIdPages(db, voucherId, RETURNED_ORDER_STATUSES, pageSize, true);
}

/**
 * The users who gave a unit of the voucher back, hold none now and are owed nothing by Redis: never
 * buyers, whatever Redis remembers. A user whose return is still owed to Redis (stock_return = 1:
 * MySQL took the unit back, the Redis step has not run yet) is left out: that return takes them
 * out of the buyers set itself and gives the unit to the head of the waitlist, and only when nobody
 * waits to the open stock. Taken out here first, their unit went to the open stock at the preheat
 * and the owed return, finding them gone, offered nothing: the waitlist skipped.
 */
export function goneBuyerIdPages(db: Executor, voucherId: string, pageSize = 5000): AsyncGenerator<string[]> {
  return userIdPages(db, voucherId, RETURNED_ORDER_STATUSES, pageSize, true, true);
}

async function* userIdPages(db: Executor, voucherId: string, statuses: number[], pageSize: number, distinct: boolean, gone = false): AsyncGenerator<string[]> {
  let after = '0';
  for (;;) {
    let q = db
      .selectFrom('tb_voucher_order as o')
      .select('o.user_id')
      .where('o.voucher_id', '=', voucherId)
      .where('o.status', 'in', statuses)
      .where('o.user_id', '>', after)
      .orderBy('o.user_id')
      .limit(pageSize);
    if (distinct) q = q.distinct();
    if (gone) {
      // Holding no live order, and no return of theirs still owed to Redis.
      q = q.where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('tb_voucher_order as l')
              .select('l.id')
              .whereRef('l.voucher_id', '=', 'o.voucher_id')
              .whereRef('l.user_id', '=', 'o.user_id')
              .where((w) => w.or([w('l.status', 'in', LIVE_ORDER_STATUSES), w('l.stock_return', '=', StockReturn.owedToRedis)])),
          ),
        ),
      );
    }
    const rows = await q.execute();
    if (rows.length === 0) return;
    yield rows.map((r) => r.user_id);
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.user_id;
  }
}

/** Takes n units with the `stock >= n` guard; false when the DB has fewer left (or no such row). */
export async function takeStock(db: Executor, voucherId: string, n: number): Promise<boolean> {
  const r = await db
    .updateTable('tb_seckill_voucher')
    .set({ stock: sql<number>`stock - ${n}` })
    .where('voucher_id', '=', voucherId)
    .where('stock', '>=', n)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Adds n units to both the initial and remaining stock (the caller holds the row lock). */
export async function addStockRow(trx: Executor, voucherId: string, n: number): Promise<void> {
  await trx
    .updateTable('tb_seckill_voucher')
    .set({ initial_stock: sql<number>`initial_stock + ${n}`, stock: sql<number>`stock + ${n}` })
    .where('voucher_id', '=', voucherId)
    .execute();
}

export interface DbStockCounts {
  initialStock: number;
  stock: number;
  /** Live orders (LIVE_ORDER_STATUSES). */
  orders: number;
  /** Users holding more than one live order for the voucher (the unique key makes this 0). */
  duplicateUsers: number;
  /** Cancelled / refunded orders whose unit MySQL took back but Redis not yet (stock_return = 1). */
  returnsOwedToRedis: number;
}

export async function dbStockCounts(db: Executor, voucherId: string): Promise<DbStockCounts | undefined> {
  const sv = await db.selectFrom('tb_seckill_voucher').select(['initial_stock', 'stock']).where('voucher_id', '=', voucherId).executeTakeFirst();
  if (!sv) return undefined;
  const counts = await db
    .selectFrom('tb_voucher_order')
    .select((eb) => [
      eb.fn.countAll<number>().as('orders'),
      sql<number>`COUNT(DISTINCT user_id)`.as('users'),
      sql<number>`(SELECT COUNT(*) FROM tb_voucher_order WHERE voucher_id = ${voucherId} AND stock_return = 1)`.as('owed'),
    ])
    .where('voucher_id', '=', voucherId)
    .where('status', 'in', LIVE_ORDER_STATUSES)
    .executeTakeFirstOrThrow();
  const orders = Number(counts.orders);
  return { initialStock: sv.initial_stock, stock: sv.stock, orders, duplicateUsers: orders - Number(counts.users), returnsOwedToRedis: Number(counts.owed) };
}

/** Creates a seckill voucher (tb_voucher + tb_seckill_voucher) — test and benchmark fixture. */
export async function insertSeckillVoucher(
  db: DB,
  v: { shopId: string; title: string; payValue: number; actualValue: number; stock: number; beginTime: Date; endTime: Date; buckets?: number },
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const res = await trx
      .insertInto('tb_voucher')
      .values({ shop_id: v.shopId, title: v.title, pay_value: v.payValue, actual_value: v.actualValue, type: 1 })
      .executeTakeFirstOrThrow();
    const id = String(res.insertId);
    await trx
      .insertInto('tb_seckill_voucher')
      .values({ voucher_id: id, initial_stock: v.stock, stock: v.stock, begin_time: v.beginTime, end_time: v.endTime, buckets: v.buckets ?? 1 })
      .execute();
    return id;
  });
}

export async function firstShopId(db: Executor): Promise<string | undefined> {
  return (await db.selectFrom('tb_shop').select('id').orderBy('id').limit(1).executeTakeFirst())?.id;
}

/**
 * Vouchers a Redis repair must rebuild: every sale on now, plus the listed ones (Redis's
 * `seckill:active`, which a forgetful Redis may have lost) that have not ended yet.
 */
export async function unendedSaleIds(db: Executor, now: Date, also: string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('tb_seckill_voucher')
    .select('voucher_id')
    .where('end_time', '>', now)
    .where((eb) => (also.length ? eb.or([eb('begin_time', '<=', now), eb('voucher_id', 'in', also)]) : eb('begin_time', '<=', now)))
    .execute();
  return rows.map((r) => r.voucher_id);
}
