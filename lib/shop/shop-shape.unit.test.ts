/** The shop row → view mapping and the cached view's shape version, without any service. */
import { describe, expect, it } from 'vitest';
import type { Shop } from '@/lib/db/schema';
import { KEPT_OUT, viewFields, type RowMapping } from '@/lib/db/row-mapping';
import { decodeEntry, encodeEntry, shapeOf } from '@/lib/cache/entry';
import { SHOP_VIEW_SHAPE, type ShopView } from '@/lib/shop/shop.types';

describe('ShopView shape version', () => {
  it('changes when a field is added, removed or renamed, not when fields are reordered', () => {
    const fields = ['id', 'name', 'openHours'];
    expect(shapeOf(fields)).toBe(shapeOf([...fields].reverse()));
    expect(shapeOf([...fields, 'rating'])).not.toBe(shapeOf(fields));
    expect(shapeOf(['id', 'name'])).not.toBe(shapeOf(fields));
    expect(shapeOf(fields, 2)).not.toBe(shapeOf(fields));
  });

  it('an entry of another shape, or of none, reads as a miss', () => {
    expect(decodeEntry(encodeEntry({ a: 1 }, 0), SHOP_VIEW_SHAPE)).toEqual({ kind: 'miss' });
    expect(decodeEntry(encodeEntry({ a: 1 }, 0, 'older'), SHOP_VIEW_SHAPE)).toEqual({ kind: 'miss' });
    expect(decodeEntry(encodeEntry({ a: 1 }, 7, SHOP_VIEW_SHAPE), SHOP_VIEW_SHAPE)).toEqual({ kind: 'value', value: { a: 1 }, expiresAt: 7 });
    expect(decodeEntry(encodeEntry({ a: 1 }, 0))).toEqual({ kind: 'value', value: { a: 1 }, expiresAt: 0 });
  });

  it('a column left out of a row mapping, or mapped to no view field, does not compile (checked by tsc)', () => {
    const full = {
      id: 'id', name: 'name', type_id: 'typeId', images: 'images', area: 'area', address: 'address', x: 'x', y: 'y',
      avg_price: 'avgPrice', sold: 'sold', comments: 'comments', score: 'score', open_hours: 'openHours',
      owner_id: KEPT_OUT, create_time: KEPT_OUT, update_time: KEPT_OUT,
    } as const satisfies RowMapping<Shop, ShopView>;
    // @ts-expect-error open_hours (and the rest) is neither mapped nor kept out
    const missing = { id: 'id', name: 'name' } as const satisfies RowMapping<Shop, ShopView>;
    // @ts-expect-error ShopView has no field `rating`
    const wrong = { ...full, score: 'rating' } as const satisfies RowMapping<Shop, ShopView>;
    expect(viewFields(full)).toHaveLength(13);
    expect(missing && wrong).toBeTruthy();
  });
});
