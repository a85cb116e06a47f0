import type { Metadata } from 'next';
import Link from 'next/link';
import QRCode from 'qrcode';
import { db } from '@/lib/db/client';
import { listMyOrders, type OrderDto } from '@/lib/order/query';
import { requirePageUser } from '@/lib/web/page-auth';
import { stateWords } from '@/lib/order/lifecycle';
import { OrderActions } from './order-actions';

export const metadata: Metadata = { title: '我的订单' };

const PAGE_SIZE = 10;
const yuan = (fen: number) => `¥${(fen / 100).toFixed(2)}`;
const shanghai = new Intl.DateTimeFormat('zh-CN', { timeZone: 'Asia/Shanghai', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

export default async function OrdersPage({ searchParams }: { searchParams: Promise<{ page?: string }> }) {
  const user = await requirePageUser('/orders');
  const page = Math.min(10_000, Math.max(1, Math.floor(Number((await searchParams).page)) || 1));
  const { items, hasMore } = await listMyOrders(db, user.id, page, PAGE_SIZE);
  // QR codes are drawn here on the server (no network, no client bundle).
  const qr = new Map(await Promise.all(items.filter((o) => o.redeemCode).map(async (o) => [o.id, await QRCode.toString(o.redeemCode!, { type: 'svg', margin: 1 })] as const)));

  return (
    <section className="p-4">
      <h1 className="mb-1 text-xl font-semibold">我的订单</h1>
      <p className="mb-4 text-xs text-gray-600">刚抢到的券需要片刻生成订单，稍后刷新即可看到。</p>
      {items.length === 0 ? (
        <div className="rounded-lg bg-white p-8 text-center text-gray-600" data-testid="orders-empty">
          {page === 1 ? '还没有订单' : '没有更多订单了'}
          <Link href="/" className="mt-3 block text-brand">去首页抢券</Link>
        </div>
      ) : (
        <ul className="space-y-3" data-testid="orders-list">
          {items.map((o) => <OrderCard key={o.id} order={o} qrSvg={qr.get(o.id) ?? null} />)}
        </ul>
      )}
      <nav className="mt-4 flex justify-between text-sm">
        {page > 1 ? <Link href={`/orders?page=${page - 1}`} className="text-brand" data-testid="orders-prev">上一页</Link> : <span />}
        {hasMore && <Link href={`/orders?page=${page + 1}`} className="text-brand" data-testid="orders-next">下一页</Link>}
      </nav>
    </section>
  );
}

function OrderCard({ order, qrSvg }: { order: OrderDto; qrSvg: string | null }) {
  return (
    <li id={`order-${order.id}`} className="rounded-lg bg-white p-4 shadow-sm" data-testid="order-item" data-order-id={order.id}>
      <div className="flex items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="truncate font-medium">{order.voucher?.title ?? '优惠券'}</p>
          {order.shop && <p className="truncate text-sm text-gray-600">{order.shop.name}</p>}
        </div>
        <span className="shrink-0 rounded bg-brand/10 px-2 py-0.5 text-xs text-brand" data-testid="order-status" data-state={order.state}>
          {order.state === 'created' ? stateWords(order.orderStatus ?? 1) : order.state === 'pending' ? '生成订单中' : '下单失败'}
        </span>
      </div>
      <div className="mt-2 flex items-end justify-between text-sm">
        <div className="text-gray-600">
          <p>订单号 <span className="font-mono" data-testid="order-id">{order.id}</span></p>
          <p>{shanghai.format(new Date(order.createdAt))}</p>
        </div>
        {order.voucher && (
          <p>
            <span className="text-lg font-semibold text-brand">{yuan(order.voucher.payValue)}</span>
            <span className="ml-1 text-xs text-gray-600 line-through">{yuan(order.voucher.actualValue)}</span>
          </p>
        )}
      </div>
      {order.state === 'created' && <OrderActions order={order} qrSvg={qrSvg} />}
    </li>
  );
}
