import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { listManagedShops } from '@/lib/access/access';
import { consoleUser, pathWithQuery } from '@/app/admin/_lib/gate';
import { VoucherForm } from '@/app/admin/_components/voucher-form';

export const metadata: Metadata = { title: '新建优惠券' };

export default async function NewVoucherPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const user = await consoleUser(pathWithQuery('/admin/vouchers/new', sp));
  const shops = await listManagedShops(db, user);
  const wanted = typeof sp.shopId === 'string' && shops.some((s) => s.id === sp.shopId) ? sp.shopId : undefined;
  return (
    <section className="space-y-4">
      <Link href="/admin/vouchers" className="text-sm text-gray-600">
        ← 返回列表
      </Link>
      <h1 className="text-xl font-semibold">新建优惠券</h1>
      {shops.length === 0 ? (
        <p className="rounded-lg bg-white p-8 text-center text-gray-600 shadow-sm" data-testid="no-shops">
          你还没有可管理的店铺
        </p>
      ) : (
        <VoucherForm shops={shops.map((s) => ({ id: s.id, name: s.name }))} defaultShopId={wanted} />
      )}
    </section>
  );
}
