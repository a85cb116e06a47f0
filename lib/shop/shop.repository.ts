/** SQL for shops, shop types and a shop's vouchers. The only file of lib/shop that builds queries. */
import type { Executor } from '@/lib/db/client';
import type { Shop, ShopUpdate } from '@/lib/db/schema';
import { VoucherStatus } from '@/lib/db/schema';

export async function findShopById(db: Executor, id: string): Promise<Shop | undefined> {
  return db.selectFrom('tb_shop').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Locks the row for the rest of the transaction, so concurrent edits of one shop serialise. */
export async function findShopForUpdate(trx: Executor, id: string): Promise<Shop | undefined> {
  return trx.selectFrom('tb_shop').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateShopRow(trx: Executor, id: string, patch: ShopUpdate): Promise<void> {
  await trx.updateTable('tb_shop').set(patch).where('id', '=', id).execute();
}

export async function shopTypeExists(db: Executor, typeId: string): Promise<boolean> {
  return !!(await db.selectFrom('tb_shop_type').select('id').where('id', '=', typeId).executeTakeFirst());
}

export async function listShopTypesWithCounts(db: Executor) {
  return db
    .selectFrom('tb_shop_type as t')
    .leftJoin('tb_shop as s', 's.type_id', 't.id')
    .select((eb) => ['t.id', 't.name', 't.icon', 't.sort', eb.fn.count<string>('s.id').as('shop_count')])
    .groupBy(['t.id', 't.name', 't.icon', 't.sort'])
    .orderBy('t.sort')
    .orderBy('t.id')
    .execute();
}

/** A type's shop ids in the default order: most sold first. */
export async function listShopIdsByType(db: Executor, typeId: string): Promise<string[]> {
  const rows = await db.selectFrom('tb_shop').select('id').where('type_id', '=', typeId).orderBy('sold', 'desc').orderBy('id').execute();
  return rows.map((r) => r.id);
}

export async function listShopPositionsByType(db: Executor, typeId: string) {
  return db.selectFrom('tb_shop').select(['id', 'x', 'y']).where('type_id', '=', typeId).execute();
}

export async function topShopIdsBySold(db: Executor, n: number): Promise<string[]> {
  if (n <= 0) return [];
  const rows = await db.selectFrom('tb_shop').select('id').orderBy('sold', 'desc').orderBy('id').limit(n).execute();
  return rows.map((r) => r.id);
}

export async function listShopTypeIds(db: Executor): Promise<string[]> {
  return (await db.selectFrom('tb_shop_type').select('id').execute()).map((r) => r.id);
}

/** On-sale vouchers of a shop, seckill columns filled for seckill ones. */
export async function listVouchersOfShop(db: Executor, shopId: string) {
  return db
    .selectFrom('tb_voucher as v')
    .leftJoin('tb_seckill_voucher as sv', 'sv.voucher_id', 'v.id')
    .select([
      'v.id',
      'v.shop_id',
      'v.title',
      'v.sub_title',
      'v.rules',
      'v.pay_value',
      'v.actual_value',
      'v.type',
      'sv.initial_stock',
      'sv.stock',
      'sv.begin_time',
      'sv.end_time',
    ])
    .where('v.shop_id', '=', shopId)
    .where('v.status', '=', VoucherStatus.ON_SALE)
    .orderBy('v.type', 'desc')
    .orderBy('v.id')
    .execute();
}
