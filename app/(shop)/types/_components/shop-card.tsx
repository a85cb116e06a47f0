import Link from 'next/link';
import type { ShopListItem } from '@/lib/shop/shop.types';
import { distanceText, scoreText, yuan } from '@/lib/shop/format';

export function Stars({ score }: { score: number }) {
  const full = Math.round(score / 10);
  return (
    <span className="text-amber-700" aria-label={`${scoreText(score)} 分`}>
      {'★'.repeat(full)}
      <span className="text-gray-600">{'★'.repeat(5 - full)}</span>
    </span>
  );
}

/** One row of a shop list: picture, name, score, price per person, area and distance. */
export function ShopCard({ shop }: { shop: ShopListItem }) {
  return (
    <Link href={`/shops/${shop.id}`} className="flex gap-3 px-4 py-3 active:bg-gray-50" data-testid="shop-card" data-shop-id={shop.id}>
      {/* eslint-disable-next-line @next/next/no-img-element -- small local SVGs, no optimisation needed */}
      <img src={shop.images[0] ?? '/shops/1.svg'} alt="" className="h-20 w-24 flex-none rounded-md object-cover" loading="lazy" />
      <div className="min-w-0 flex-1">
        <h3 className="truncate font-medium" data-testid="shop-card-name">{shop.name}</h3>
        <p className="mt-1 flex items-center gap-2 text-xs">
          <Stars score={shop.score} />
          <span className="text-gray-600">{scoreText(shop.score)}分</span>
          <span className="text-gray-600">¥{yuan(shop.avgPrice)}/人</span>
        </p>
        <p className="mt-1 flex justify-between text-xs text-gray-600">
          <span className="truncate">{shop.area} · 已售 {shop.sold}</span>
          {shop.distance !== undefined && (
            <span className="flex-none text-brand" data-testid="shop-card-distance">
              {distanceText(shop.distance)}
            </span>
          )}
        </p>
      </div>
    </Link>
  );
}
