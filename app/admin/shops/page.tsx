import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { listManagedShops } from '@/lib/access/access';
import { consoleUser } from '@/app/admin/_lib/gate';

export const metadata: Metadata = { title: '店铺' };

export default async function ShopsPage() {
  const user = await consoleUser('/admin/shops');
  const shops = await listManagedShops(db, user);
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">{user.role === 'admin' ? '全部店铺' : '我的店铺'}</h1>
      {shops.length === 0 ? (
        <p className="rounded-lg bg-white p-10 text-center text-gray-600 shadow-sm" data-testid="shops-empty">
          没有可管理的店铺
        </p>
      ) : (
        <ul className="divide-y rounded-lg bg-white shadow-sm" data-testid="shop-list">
          {shops.map((s) => (
            <li key={s.id} className="flex items-center justify-between px-4 py-3" data-testid={`shop-row-${s.id}`}>
              <span>{s.name}</span>
              <span className="space-x-4 text-sm">
                <Link href={`/admin/vouchers?shopId=${s.id}`} className="text-brand" data-testid={`shop-vouchers-${s.id}`}>
                  优惠券
                </Link>
                <Link href={`/admin/shops/${s.id}`} className="text-brand" data-testid={`shop-edit-${s.id}`}>
                  编辑
                </Link>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
