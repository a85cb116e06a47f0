'use client';

import { useRouter } from 'next/navigation';

/** Shop picker of the voucher list: navigates, so the filter lives in the URL (shareable, back-button safe). */
export function ShopFilter({ shops, shopId, state }: { shops: { id: string; name: string }[]; shopId?: string; state?: string }) {
  const router = useRouter();
  return (
    <select
      aria-label="按店铺筛选"
      className="rounded border border-gray-300 bg-white px-3 py-2 text-sm"
      data-testid="filter-shop"
      value={shopId ?? ''}
      onChange={(e) => {
        const q = new URLSearchParams();
        if (e.target.value) q.set('shopId', e.target.value);
        if (state) q.set('state', state);
        router.push(`/admin/vouchers${q.size ? `?${q}` : ''}`);
      }}
    >
      <option value="">全部店铺</option>
      {shops.map((s) => (
        <option key={s.id} value={s.id}>
          {s.name}
        </option>
      ))}
    </select>
  );
}
