'use client';

/**
 * A shop's vouchers. Seckill ones get <SeckillGrab>, and their remaining stock stays live by
 * polling GET /api/shops/{id}/vouchers every few seconds while the tab is visible.
 */
import { useEffect, useState } from 'react';
import { api } from '@/lib/web/client-api';
import type { VoucherView } from '@/lib/shop/shop.types';
import { shanghaiTime, yuan } from '@/lib/shop/format';
import { SeckillGrab } from '@/app/_components/seckill-grab';
import { BuyVoucher } from '@/app/_components/buy-voucher';

const POLL_MS = 3000;

export function ShopVouchers({ shopId, initial }: { shopId: string; initial: VoucherView[] }) {
  const [vouchers, setVouchers] = useState(initial);
  const [stale, setStale] = useState(false);

  useEffect(() => {
    if (!initial.some((v) => v.seckill)) return; // nothing live to refresh
    let timer: ReturnType<typeof setTimeout>;
    let stopped = false;
    const poll = async () => {
      if (document.visibilityState === 'visible') {
        try {
          setVouchers(await api<VoucherView[]>(`/api/shops/${shopId}/vouchers`));
          setStale(false);
        } catch {
          setStale(true); // keep showing the last numbers
        }
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    timer = setTimeout(poll, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [shopId, initial]);

  if (vouchers.length === 0) {
    return (
      <p className="px-4 py-8 text-center text-sm text-gray-600" data-testid="vouchers-empty">
        暂无优惠券
      </p>
    );
  }
  return (
    <ul className="space-y-3 px-4 pb-6" data-testid="voucher-list">
      {stale && <li className="text-xs text-amber-700">库存暂时无法刷新，显示的是最近一次的数据</li>}
      {vouchers.map((v) => (
        <li key={v.id} className="overflow-hidden rounded-lg border border-gray-100 shadow-sm" data-testid="voucher" data-voucher-type={v.type}>
          <div className="flex items-center gap-3 p-3">
            <div className="flex-none text-center text-brand">
              <p className="text-xl font-bold">¥{yuan(v.payValue)}</p>
              <p className="text-xs text-gray-600 line-through">¥{yuan(v.actualValue)}</p>
            </div>
            <div className="min-w-0 flex-1">
              <h3 className="font-medium" data-testid="voucher-title">
                {v.type === 'seckill' && <span className="mr-1 rounded bg-brand px-1 text-xs text-white">秒杀</span>}
                {v.title}
              </h3>
              {v.subTitle && <p className="truncate text-xs text-gray-600">{v.subTitle}</p>}
              {v.seckill && (
                <p className="mt-1 text-xs text-gray-600" data-testid="seckill-window">
                  {shanghaiTime(v.seckill.beginTime)} 开抢 · {shanghaiTime(v.seckill.endTime)} 结束 · 共 {v.seckill.initialStock} 张
                </p>
              )}
            </div>
          </div>
          {v.seckill && (
            <div className="border-t border-dashed border-gray-200 p-2">
              <SeckillGrab voucherId={v.id} beginTime={v.seckill.beginTime} endTime={v.seckill.endTime} remaining={v.seckill.remaining} />
            </div>
          )}
          {!v.seckill && (
            <div className="border-t border-dashed border-gray-200 p-2">
              <BuyVoucher voucherId={v.id} />
            </div>
          )}
          {v.rules && <p className="whitespace-pre-line bg-gray-50 px-3 py-2 text-xs text-gray-600">{v.rules}</p>}
        </li>
      ))}
    </ul>
  );
}
