import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { idSchema } from '@/lib/http/parse';
import { listShopTypes } from '@/lib/shop/shop.service';
import { ShopList } from '@/app/(shop)/types/_components/shop-list';

type Props = { params: Promise<{ id: string }> };

async function findType(raw: string) {
  if (!idSchema.safeParse(raw).success) return null;
  return (await listShopTypes(db, redis)).find((t) => t.id === raw) ?? null;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const type = await findType((await params).id);
  return { title: type?.name ?? '分类不存在' };
}

export default async function TypePage({ params }: Props) {
  const type = await findType((await params).id);
  if (!type) notFound();
  return (
    <>
      <header className="flex items-center gap-3 border-b border-gray-100 px-4 py-3">
        {/* eslint-disable-next-line @next/next/no-img-element -- tiny local SVG icon */}
        <img src={type.icon || '/types/food.svg'} alt="" width={36} height={36} />
        <div>
          <h1 className="text-lg font-semibold" data-testid="type-title">{type.name}</h1>
          <p className="text-xs text-gray-600">{type.shopCount} 家商户</p>
        </div>
      </header>
      <ShopList typeId={type.id} />
    </>
  );
}
