/**
 * The shop as the console's edit form needs it, access-checked (a merchant only its own shops).
 * Saving goes through PUT /api/admin/shops/{id} (the shop domain updates the row, audits it and
 * deletes the cache), so this module only reads.
 */
import type { Executor } from '@/lib/db/client';
import type { ShopView } from '@/lib/shop/shop.types';
import { notFound } from '@/lib/errors';
import { assertOwns, type Actor } from '@/lib/access/access';
import { findShopRow, listShopTypeRows } from '@/lib/admin/shop-view.repository';

/** The editable part of what the shop pages show. */
export type ShopEditView = Pick<ShopView, 'id' | 'name' | 'typeId' | 'images' | 'area' | 'address' | 'x' | 'y' | 'avgPrice' | 'openHours'>;

export async function getShopForEdit(db: Executor, actor: Actor, id: string): Promise<{ shop: ShopEditView; types: { id: string; name: string }[] }> {
  const row = await findShopRow(db, id);
  if (!row) throw notFound('店铺');
  assertOwns(actor, row.owner_id === null ? null : String(row.owner_id));
  const types = await listShopTypeRows(db);
  return {
    shop: {
      id: String(row.id),
      name: row.name,
      typeId: String(row.type_id),
      images: row.images ? row.images.split(',').filter(Boolean) : [],
      area: row.area,
      address: row.address,
      x: row.x,
      y: row.y,
      avgPrice: Number(row.avg_price),
      openHours: row.open_hours,
    },
    types: types.map((t) => ({ id: String(t.id), name: t.name })),
  };
}
