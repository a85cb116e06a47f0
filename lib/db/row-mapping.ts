/**
 * A row → view mapping that must account for every column: each column of `Row` is either the
 * name of the `View` field it fills or `KEPT_OUT`. Written as `{ … } as const satisfies
 * RowMapping<Row, View>`, a column added to the table (lib/db/schema.ts) and left out of the
 * mapping is a compile error, and so is a mapping to a field the view does not have
 * (docs/recipes.md#adding-a-shop-field-end-to-end).
 */
export const KEPT_OUT = '(kept out of the view)';

export type RowMapping<Row, View> = { [K in keyof Row]-?: keyof View | typeof KEPT_OUT };

/** The view fields a mapping fills: what a cached view's shape version is made of. */
export function viewFields<M extends Record<string, string>>(mapping: M): string[] {
  return Object.values(mapping).filter((f) => f !== KEPT_OUT);
}
