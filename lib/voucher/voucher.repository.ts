/** SQL for tb_voucher + tb_seckill_voucher as the admin console sees them. */
import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '@/lib/db/client';
import { VoucherStatus, VoucherType, type SeckillVoucherTable, type VoucherTable } from '@/lib/db/schema';
import type { VoucherState } from '@/lib/voucher/voucher.schema';
import { LIVE_ORDER_STATUSES } from '@/lib/seckill/seckill.repository';

export interface VoucherRow {
  id: string;
  shop_id: string;
  shop_name: string;
  owner_id: string | null;
  title: string;
  sub_title: string;
  rules: string;
  pay_value: string;
  actual_value: string;
  type: number;
  status: number;
  create_time: Date;
  update_time: Date;
  initial_stock: number | null;
  stock: number | null;
  begin_time: Date | null;
  end_time: Date | null;
}

function baseSelect(db: Executor) {
  return db
    .selectFrom('tb_voucher as v')
    .innerJoin('tb_shop as s', 's.id', 'v.shop_id')
    .leftJoin('tb_seckill_voucher as sv', 'sv.voucher_id', 'v.id')
    .select([
      'v.id', 'v.shop_id', 's.name as shop_name', 's.owner_id', 'v.title', 'v.sub_title', 'v.rules', 'v.pay_value',
      'v.actual_value', 'v.type', 'v.status', 'v.create_time', 'v.update_time',
      'sv.initial_stock', 'sv.stock', 'sv.begin_time', 'sv.end_time',
    ]);
}

export async function findVoucherRow(db: Executor, id: string): Promise<VoucherRow | undefined> {
  return baseSelect(db).where('v.id', '=', id).executeTakeFirst();
}

/** Locks the voucher and its seckill row for an edit (the worker's stock update waits briefly). */
export async function lockVoucherRow(trx: Executor, id: string): Promise<VoucherRow | undefined> {
  await trx.selectFrom('tb_voucher').select('id').where('id', '=', id).forUpdate().execute();
  await trx.selectFrom('tb_seckill_voucher').select('voucher_id').where('voucher_id', '=', id).forUpdate().execute();
  return findVoucherRow(trx, id);
}

export interface VoucherListFilter {
  ownerId?: string;
  shopId?: string;
  state?: VoucherState;
  now: Date;
  limit: number;
  offset: number;
}

export async function listVoucherRows(db: Executor, f: VoucherListFilter): Promise<VoucherRow[]> {
  let q = baseSelect(db).orderBy('v.id', 'desc').limit(f.limit).offset(f.offset);
  if (f.ownerId !== undefined) q = q.where('s.owner_id', '=', f.ownerId);
  if (f.shopId !== undefined) q = q.where('v.shop_id', '=', f.shopId);
  const onSale = VoucherStatus.ON_SALE;
  switch (f.state) {
    case 'taken_down':
      q = q.where('v.status', '=', VoucherStatus.TAKEN_DOWN);
      break;
    case 'live':
      // Normal vouchers have no window: on sale means live.
      q = q.where('v.status', '=', onSale).where((eb) =>
        eb.or([eb('v.type', '=', VoucherType.NORMAL), eb.and([eb('sv.begin_time', '<=', f.now), eb('sv.end_time', '>', f.now)])]),
      );
      break;
    case 'upcoming':
      q = q.where('v.status', '=', onSale).where('sv.begin_time', '>', f.now);
      break;
    case 'ended':
      q = q.where('v.status', '=', onSale).where('sv.end_time', '<=', f.now);
      break;
  }
  return q.execute();
}

/**
 * Vouchers of a shop on sale and not ended at `now`. The shop row is locked first, so creates of one
 * shop count one after another; the count is a locking read, so it sees what the create before it
 * committed (a plain read would answer from the snapshot taken before the wait).
 */
export async function lockShopAndCountOpenVouchers(trx: Executor, shopId: string, now: Date): Promise<number> {
  await trx.selectFrom('tb_shop').select('id').where('id', '=', shopId).forUpdate().execute();
  const row = await trx
    .selectFrom('tb_voucher as v')
    .leftJoin('tb_seckill_voucher as sv', 'sv.voucher_id', 'v.id')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('v.shop_id', '=', shopId)
    .where('v.status', '=', VoucherStatus.ON_SALE)
    .where((eb) => eb.or([eb('sv.end_time', 'is', null), eb('sv.end_time', '>', now)]))
    // MariaDB has no FOR SHARE.
    .modifyEnd(sql`lock in share mode`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertVoucher(trx: Executor, row: Insertable<VoucherTable>): Promise<string> {
  const res = await trx.insertInto('tb_voucher').values(row).executeTakeFirstOrThrow();
  return String(res.insertId);
}

export async function insertSeckillVoucher(trx: Executor, row: Insertable<SeckillVoucherTable>): Promise<void> {
  await trx.insertInto('tb_seckill_voucher').values(row).execute();
}

export async function updateVoucherColumns(trx: Executor, id: string, patch: Updateable<VoucherTable>): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  await trx.updateTable('tb_voucher').set(patch).where('id', '=', id).execute();
}

export async function updateSeckillWindow(trx: Executor, id: string, begin: Date, end: Date): Promise<void> {
  await trx.updateTable('tb_seckill_voucher').set({ begin_time: begin, end_time: end }).where('voucher_id', '=', id).execute();
}

/**
 * Moves the total stock by `delta` (either sign) and the remaining stock with it, refusing to
 * take away more than remains (what is sold stays sold). The columns are UNSIGNED, so a negative
 * delta is written as a guarded subtraction that can never go below zero. False when refused.
 */
export async function shiftSeckillStock(trx: Executor, id: string, delta: number): Promise<boolean> {
  const d = Math.abs(delta);
  const q = trx.updateTable('tb_seckill_voucher').where('voucher_id', '=', id);
  const res = await (delta >= 0
    ? q.set({ stock: sql<number>`stock + ${d}`, initial_stock: sql<number>`initial_stock + ${d}` })
    : q.set({ stock: sql<number>`stock - ${d}`, initial_stock: sql<number>`initial_stock - ${d}` }).where('stock', '>=', d)
  ).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** One SQL snapshot of DB stock and live orders, so "stock + orders = initial" is read consistently. */
export async function readDbStock(db: Executor, id: string): Promise<{ initial: number; remaining: number; orders: number; returnsOwed: number } | undefined> {
  const row = await db
    .selectFrom('tb_seckill_voucher as sv')
    .select((eb) => [
      'sv.initial_stock',
      'sv.stock',
      eb
        .selectFrom('tb_voucher_order as o')
        .select(eb.fn.countAll<string>().as('n'))
        .whereRef('o.voucher_id', '=', 'sv.voucher_id')
        .where('o.status', 'in', LIVE_ORDER_STATUSES)
        .as('orders'),
      eb.selectFrom('tb_voucher_order as o').select(eb.fn.countAll<string>().as('n')).whereRef('o.voucher_id', '=', 'sv.voucher_id').where('o.stock_return', '=', 1).as('owed'),
    ])
    .where('sv.voucher_id', '=', id)
    .executeTakeFirst();
  return row && { initial: Number(row.initial_stock), remaining: Number(row.stock), orders: Number(row.orders ?? 0), returnsOwed: Number(row.owed ?? 0) };
}
