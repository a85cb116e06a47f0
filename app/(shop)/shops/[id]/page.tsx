import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { idSchema } from '@/lib/http/parse';
import { getShop, getShopVouchers } from '@/lib/shop/shop.service';
import { scoreText, yuan } from '@/lib/shop/format';
import { Stars } from '@/app/(shop)/types/_components/shop-card';
import { ShopVouchers } from './shop-vouchers';
import { ShopBlogs } from './shop-blogs';
import { ViewBeacon } from './view-beacon';
import { publicReadAllowed } from '@/lib/web/page-limit';

type Props = { params: Promise<{ id: string }> };

/** A junk id is a 404 page without touching Redis or the DB; the cache does the rest. */
async function loadShop(raw: string) {
  return idSchema.safeParse(raw).success ? getShop(db, redis, raw) : null;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  if (!(await publicReadAllowed())) return { title: '访问太频繁' };
  const shop = await loadShop((await params).id);
  return { title: shop?.name ?? '商户不存在' };
}

export default async function ShopPage({ params }: Props) {
  // Counted before the lookup: a page for an unknown id costs a MySQL read and a marker in Redis.
  if (!(await publicReadAllowed())) {
    return (
      <p role="alert" className="px-4 py-10 text-center text-sm text-gray-700" data-testid="too-many">
        访问太频繁，请稍后再试
      </p>
    );
  }
  const shop = await loadShop((await params).id);
  if (!shop) notFound();
  const vouchers = await getShopVouchers(db, redis, shop.id);
  return (
    <article data-testid="shop-detail" data-shop-id={shop.id}>
      <div className="flex snap-x snap-mandatory overflow-x-auto" data-testid="shop-images">
        {shop.images.map((src, i) => (
          // eslint-disable-next-line @next/next/no-img-element -- local SVG illustrations
          <img key={src + i} src={src} alt={`${shop.name} 图片 ${i + 1}`} className="aspect-[4/3] w-full flex-none snap-center object-cover" />
        ))}
      </div>

      <section className="space-y-2 px-4 py-4">
        <h1 className="text-xl font-semibold" data-testid="shop-name">{shop.name}</h1>
        <p className="flex items-center gap-2 text-sm">
          <Stars score={shop.score} />
          <span className="font-medium text-amber-700" data-testid="shop-score">{scoreText(shop.score)}分</span>
          <span className="text-gray-600">{shop.comments} 条评价</span>
          <span className="ml-auto text-gray-700" data-testid="shop-price">¥{yuan(shop.avgPrice)}/人</span>
        </p>
        <dl className="grid grid-cols-[4.5rem_1fr] gap-y-1 text-sm">
          <dt className="text-gray-600">地址</dt>
          <dd data-testid="shop-address">
            {shop.area} · {shop.address}
          </dd>
          <dt className="text-gray-600">营业时间</dt>
          <dd data-testid="shop-hours">{shop.openHours || '以门店公告为准'}</dd>
          <dt className="text-gray-600">已售</dt>
          <dd>{shop.sold}</dd>
        </dl>
      </section>

      <div className="h-2 bg-gray-50" />
      <h2 className="px-4 pb-2 pt-4 text-base font-semibold">优惠券</h2>
      <ShopVouchers shopId={shop.id} initial={vouchers} />

      <ShopBlogs shopId={shop.id} />
      <ViewBeacon shopId={shop.id} />

      <p className="pb-8 text-center">
        <Link href={`/types/${shop.typeId}`} className="text-sm text-brand" data-testid="shop-type-link">
          查看同类商户
        </Link>
      </p>
    </article>
  );
}
