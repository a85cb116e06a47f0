/** Read-only shop rows for the console's shop pages (writes go through the shops API). */
import type { Executor } from '@/lib/db/client';

export async function findShopRow(db: Executor, id: string) {
  return db.selectFrom('tb_shop').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listShopTypeRows(db: Executor) {
  return db.selectFrom('tb_shop_type').select(['id', 'name']).orderBy('sort').orderBy('id').execute();
}
