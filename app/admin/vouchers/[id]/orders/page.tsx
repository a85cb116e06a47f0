import { forbidden } from 'next/navigation';
import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { formatShanghai } from '@/lib/admin/format';
import { parseId } from '@/lib/http/parse';
import { stateWords } from '@/lib/order/lifecycle';
import { voucherOrders, voucherOrdersQuery } from '@/lib/admin/merchant-orders';
import { consoleUser } from '@/app/admin/_lib/gate';
import { load } from '@/app/admin/_lib/load';
import { ApproveRefundButton } from '@/app/admin/_components/approve-refund-button';

export const metadata: Metadata = { title: '券的订单' };

const TABS: [string, string][] = [['', '全部'], ['1', '待支付'], ['2', '已支付'], ['3', '已使用'], ['4', '已取消'], ['5', '退款中'], ['6', '已退款']];

export default async function VoucherOrdersPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { id } = await params;
  const user = await consoleUser(`/admin/vouchers/${id}/orders`);
  const sp = await searchParams;
  const parsed = voucherOrdersQuery.safeParse(Object.fromEntries(Object.entries(sp).filter(([, v]) => typeof v === 'string' && v !== '')));
  const q = parsed.success ? parsed.data : voucherOrdersQuery.parse({});
  const res = await load(async () => voucherOrders(db, user, parseId(id), q));
  if (res.forbidden) forbidden();
  const { voucher, counts, items, hasMore } = res.value;
  const href = (status: string, page = 1) => `/admin/vouchers/${id}/orders?${new URLSearchParams({ ...(status ? { status } : {}), ...(page > 1 ? { page: String(page) } : {}) })}`;
  const current = q.status ? String(q.status) : '';

  return (
    <section className="space-y-4">
      <Link href={`/admin/vouchers/${id}`} className="text-sm text-gray-600">← 返回优惠券</Link>
      <div>
        <h1 className="text-xl font-semibold">{voucher.title} · 订单</h1>
        <p className="mt-1 text-sm text-gray-600">
          {voucher.shopName} · 已退回库存 <span data-testid="orders-returned">{counts.returned}</span>
        </p>
      </div>
      <div className="flex flex-wrap gap-2">
        {TABS.map(([s, label]) => (
          <Link key={s} href={href(s)} className={`rounded px-3 py-1.5 text-sm ${current === s ? 'bg-gray-900 text-white' : 'bg-white text-gray-700'}`} data-testid={`orders-tab-${s || 'all'}`}>
            {label}
            {s && <span className="ml-1 text-xs opacity-70">{counts.byStatus[Number(s)] ?? 0}</span>}
          </Link>
        ))}
      </div>
      <div className="overflow-x-auto rounded-lg bg-white shadow-sm">
        <table className="w-full text-left text-sm" data-testid="voucher-orders">
          <thead className="bg-gray-50 text-gray-600">
            <tr>
              <th className="px-3 py-2">订单号</th><th className="px-3 py-2">买家</th><th className="px-3 py-2">状态</th><th className="px-3 py-2">下单</th><th className="px-3 py-2">最近变化</th><th className="px-3 py-2" />
            </tr>
          </thead>
          <tbody>
            {items.length === 0 && (
              <tr><td colSpan={6} className="px-3 py-6 text-center text-gray-600">没有订单</td></tr>
            )}
            {items.map((o) => (
              <tr key={o.id} className="border-t" data-testid="voucher-order-row" data-status={o.status}>
                <td className="px-3 py-2 font-mono">{o.id}</td>
                <td className="px-3 py-2">{o.phone ?? o.userId}</td>
                <td className="px-3 py-2">{stateWords(o.status)}{o.cancelReason === 'timeout' ? '（超时）' : ''}</td>
                <td className="px-3 py-2">{formatShanghai(o.createTime)}</td>
                <td className="px-3 py-2">{formatShanghai(o.refundTime ?? o.cancelTime ?? o.useTime ?? o.payTime ?? o.createTime)}</td>
                <td className="px-3 py-2">{o.status === 5 && <ApproveRefundButton orderId={o.id} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="flex justify-between text-sm">
        {q.page > 1 ? <Link href={href(current, q.page - 1)} className="text-brand">上一页</Link> : <span />}
        {hasMore && <Link href={href(current, q.page + 1)} className="text-brand">下一页</Link>}
      </div>
    </section>
  );
}
