'use client';

/** Take down, preheat / repair and add stock for one voucher, each behind a confirmation. */
import { useState } from 'react';
import { api } from '@/lib/web/client-api';
import { useAction } from '@/app/admin/_components/use-action';
import type { VoucherView } from '@/lib/voucher/voucher.view';
import { ConfirmButton } from '@/app/admin/_components/confirm-button';
import { inputCls } from '@/app/admin/_components/field';

export function VoucherActions({ voucher }: { voucher: VoucherView }) {
  const { result, act } = useAction();
  const [amount, setAmount] = useState('10');
  const live = voucher.state === 'live' || voucher.state === 'upcoming';


  const amountOk = /^[1-9]\d{0,6}$/.test(amount);
  return (
    <div className="space-y-3 rounded-lg bg-white p-5 shadow-sm" data-testid="voucher-actions">
      <h2 className="font-medium">操作</h2>
      <div className="flex flex-wrap items-center gap-2">
        {voucher.seckill && (
          <ConfirmButton
            label="预热 / 修复"
            title="预热 / 修复 Redis 库存"
            message="按数据库重建该券在 Redis 中的库存、买家和活动时间。进行中的活动也可安全执行：已抢到的买家只增不减。"
            testId="action-preheat"
            onConfirm={act(async () => {
              const r = await api<{ initial: number; remaining: number; buyers: number }>(`/api/admin/vouchers/${voucher.id}/preheat`, { method: 'POST' });
              return `预热完成：总库存 ${r.initial}，剩余 ${r.remaining}，买家 ${r.buyers}`;
            })}
          />
        )}
        {voucher.seckill && live && (
          <span className="flex items-center gap-2">
            <input className={`${inputCls} w-24`} inputMode="numeric" value={amount} onChange={(e) => setAmount(e.target.value.trim())} aria-label="追加数量" data-testid="add-stock-amount" />
            <ConfirmButton
              label="追加库存"
              title="追加库存"
              message={`将为该券追加 ${amount} 张库存，Redis 与数据库同时生效，进行中的活动立即可抢。`}
              disabled={!amountOk}
              testId="action-add-stock"
              onConfirm={act(async () => {
                const r = await api<VoucherView>(`/api/admin/vouchers/${voucher.id}/stock`, { body: { amount: Number(amount) } });
                return `已追加，总库存 ${r.seckill?.initialStock}`;
              })}
            />
          </span>
        )}
        {voucher.state !== 'taken_down' && (
          <ConfirmButton
            label="下架"
            title="确认下架？"
            message="下架后顾客无法再购买或抢购该券，已售出的订单不受影响。下架不可撤销。"
            confirmLabel="下架"
            danger
            testId="action-take-down"
            onConfirm={act(async () => {
              const r = await api<{ redisSynced: boolean }>(`/api/admin/vouchers/${voucher.id}`, { method: 'PATCH', body: { status: 'taken_down' } });
              return r.redisSynced ? '已下架' : '已下架，但 Redis 同步失败，请执行“预热 / 修复”';
            })}
          />
        )}
      </div>
      {result && (
        <p role="status" className={`text-sm ${result.ok ? 'text-green-700' : 'text-red-600'}`} data-testid="action-result">
          {result.text}
        </p>
      )}
    </div>
  );
}
