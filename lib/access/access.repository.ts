/** Who owns what: the shop rows behind every merchant-scoping decision. */
import type { Executor } from '@/lib/db/client';

export interface ShopRef {
  id: string;
  name: string;
  ownerId: string | null;
}

export async function findShopRef(db: Executor, shopId: string): Promise<ShopRef | undefined> {
  const row = await db.selectFrom('tb_shop').select(['id', 'name', 'owner_id']).where('id', '=', shopId).executeTakeFirst();
  return row && { id: String(row.id), name: row.name, ownerId: row.owner_id === null ? null : String(row.owner_id) };
}

/** Shops a console user manages: a merchant's own, or every shop for an admin (ownerId undefined). */
export async function listShopRefs(db: Executor, ownerId: string | undefined): Promise<ShopRef[]> {
  let q = db.selectFrom('tb_shop').select(['id', 'name', 'owner_id']).orderBy('id');
  if (ownerId !== undefined) q = q.where('owner_id', '=', ownerId);
  const rows = await q.execute();
  return rows.map((r) => ({ id: String(r.id), name: r.name, ownerId: r.owner_id === null ? null : String(r.owner_id) }));
}
