/** What the shop API and pages see: camelCase, ids as strings, money in integer fen. */
import type { Shop } from '@/lib/db/schema';
import { KEPT_OUT, viewFields, type RowMapping } from '@/lib/db/row-mapping';
import { shapeOf } from '@/lib/cache/entry';

export interface ShopView {
  id: string;
  name: string;
  typeId: string;
  images: string[];
  area: string;
  address: string;
  /** Longitude, latitude. */
  x: number;
  y: number;
  /** Fen per person. */
  avgPrice: number;
  sold: number;
  comments: number;
  /** Score × 10 (0..50), so 4.7 stars is 47. */
  score: number;
  openHours: string;
}

export interface ShopListItem extends ShopView {
  /** Metres from the caller, when the list was asked for with a position. */
  distance?: number;
}

export interface ShopPage {
  items: ShopListItem[];
  page: number;
  hasMore: boolean;
}

export interface ShopTypeView {
  id: string;
  name: string;
  icon: string;
  sort: number;
  shopCount: number;
}

export interface SeckillView {
  beginTime: string;
  endTime: string;
  initialStock: number;
  /** Live from Redis once preheated, else the DB stock. */
  remaining: number;
  live: boolean;
}

export interface VoucherView {
  id: string;
  shopId: string;
  title: string;
  subTitle: string;
  rules: string;
  payValue: number;
  actualValue: number;
  type: 'normal' | 'seckill';
  seckill: SeckillView | null;
}

/**
 * What toShopView does with each tb_shop column. A new column fails to compile here until it is
 * mapped into ShopView or kept out on purpose; toShopView's return type makes every ShopView field
 * required.
 */
const shopColumns = {
  id: 'id',
  name: 'name',
  type_id: 'typeId',
  images: 'images',
  area: 'area',
  address: 'address',
  x: 'x',
  y: 'y',
  avg_price: 'avgPrice',
  sold: 'sold',
  comments: 'comments',
  score: 'score',
  open_hours: 'openHours',
  owner_id: KEPT_OUT, // who may edit it: the console's business, not the public view
  create_time: KEPT_OUT,
  update_time: KEPT_OUT,
} as const satisfies RowMapping<Shop, ShopView>;

/**
 * The shape version of a cached ShopView (lib/cache/entry.ts shapeOf): a field added to the view
 * changes it, so a shop cached before the field existed is rebuilt, not served without it. Raise
 * the revision when a field keeps its name but changes meaning.
 */
export const SHOP_VIEW_SHAPE = shapeOf(viewFields(shopColumns), 1);

export function toShopView(s: Shop): ShopView {
  return {
    id: String(s.id),
    name: s.name,
    typeId: String(s.type_id),
    images: s.images.split(',').map((i) => i.trim()).filter(Boolean),
    area: s.area,
    address: s.address,
    x: s.x,
    y: s.y,
    avgPrice: Number(s.avg_price),
    sold: s.sold,
    comments: s.comments,
    score: s.score,
    openHours: s.open_hours,
  };
}
