import { forbidden } from 'next/navigation';
import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { parseId } from '@/lib/http/parse';
import { getShopForEdit } from '@/lib/admin/shop-view';
import { consoleUser } from '@/app/admin/_lib/gate';
import { load } from '@/app/admin/_lib/load';
import { ShopForm } from '@/app/admin/_components/shop-form';

export const metadata: Metadata = { title: '编辑店铺' };

export default async function ShopEditPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await consoleUser(`/admin/shops/${id}`);
  const res = await load(() => getShopForEdit(db, user, parseId(id)));
  if (res.forbidden) forbidden();
  return (
    <section className="space-y-4">
      <Link href="/admin/shops" className="text-sm text-gray-600">
        ← 返回店铺
      </Link>
      <h1 className="text-xl font-semibold" data-testid="shop-edit-title">
        编辑店铺 · {res.value.shop.name}
      </h1>
      <ShopForm shop={res.value.shop} types={res.value.types} />
    </section>
  );
}
