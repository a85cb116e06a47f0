'use client';

/**
 * What a buyer can do with one order, by its state: pay or cancel an unpaid one (with the live
 * countdown to the payment deadline), show the redeem code and its QR code for a paid one, ask
 * for a refund before use. The server decides every transition; this only asks and refreshes.
 */
import { useEffect, useState } from 'react';
import { useRouter } from 'next/navigation';
import { api, type ApiError } from '@/lib/web/client-api';
import type { OrderDto } from '@/lib/order/query';

function useCountdown(deadline: string | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!deadline) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [deadline]);
  return deadline ? Math.max(0, new Date(deadline).getTime() - now) : null;
}

const mmss = (ms: number) => {
  const s = Math.ceil(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};

export function OrderActions({ order, qrSvg }: { order: OrderDto; qrSvg: string | null }) {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // One key per page view: a double click or a retried request pays once.
  const [payKey] = useState(() => `pay-${order.id}-${Math.random().toString(36).slice(2, 12)}`);
  const left = useCountdown(order.orderStatus === 1 ? order.payDeadline : null);

  useEffect(() => {
    // The deadline passed on screen: the timeout cancels within seconds; show it.
    if (left === 0) {
      const t = setTimeout(() => router.refresh(), 2000);
      return () => clearTimeout(t);
    }
  }, [left, router]);

  const act = (path: string, headers?: Record<string, string>) => async () => {
    setBusy(true);
    setError(null);
    try {
      if (headers) {
        const res = await fetch(path, { method: 'POST', headers, credentials: 'same-origin' });
        if (!res.ok) {
          const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
          throw new Error(body?.error?.message ?? `请求失败 (${res.status})`);
        }
      } else {
        await api(path, { method: 'POST' });
      }
      router.refresh();
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  };

  const btn = 'rounded px-4 py-1.5 text-sm disabled:opacity-50';
  return (
    <div className="mt-3 border-t border-dashed border-gray-200 pt-3" data-testid="order-actions">
      {order.orderStatus === 1 && (
        <div className="flex items-center justify-between gap-2">
          <p className="text-sm text-gray-600" data-testid="order-countdown">
            {left === null || left > 0 ? <>剩余支付时间 <span className="font-mono text-brand">{mmss(left ?? 0)}</span></> : '支付已超时，正在取消…'}
          </p>
          <div className="flex gap-2">
            <button type="button" className={`${btn} border border-gray-300`} disabled={busy} onClick={act(`/api/orders/${order.id}/cancel`)} data-testid="order-cancel">
              取消
            </button>
            <button type="button" className={`${btn} bg-brand text-white`} disabled={busy || left === 0} onClick={act(`/api/orders/${order.id}/pay`, { 'idempotency-key': payKey })} data-testid="order-pay">
              支付
            </button>
          </div>
        </div>
      )}
      {order.orderStatus === 2 && order.redeemCode && (
        <div className="flex items-center gap-3">
          {qrSvg && <div className="h-24 w-24 flex-none" aria-label="核销二维码" data-testid="order-qr" dangerouslySetInnerHTML={{ __html: qrSvg }} />}
          <div className="min-w-0 flex-1">
            <p className="text-xs text-gray-600">到店出示核销码</p>
            <p className="font-mono text-lg tracking-widest" data-testid="order-redeem-code">{order.redeemCode.replace(/(\d{4})(?=\d)/g, '$1 ')}</p>
            <button type="button" className={`${btn} mt-1 border border-gray-300`} disabled={busy} onClick={act(`/api/orders/${order.id}/refund`)} data-testid="order-refund">
              申请退款
            </button>
          </div>
        </div>
      )}
      {order.orderStatus === 3 && <p className="text-sm text-gray-600">已于门店核销，感谢使用</p>}
      {order.orderStatus === 4 && <p className="text-sm text-gray-600">{order.cancelReason === 'timeout' ? '超时未支付，订单已自动取消' : '订单已取消'}</p>}
      {order.orderStatus === 5 && <p className="text-sm text-gray-600">退款申请已提交，等待商家处理</p>}
      {order.orderStatus === 6 && <p className="text-sm text-gray-600">已退款</p>}
      {error && <p className="mt-2 text-sm text-red-600" role="alert" data-testid="order-error">{error}</p>}
    </div>
  );
}
