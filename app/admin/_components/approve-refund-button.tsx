'use client';

import { api } from '@/lib/web/client-api';
import { ConfirmButton } from '@/app/admin/_components/confirm-button';
import { useAction } from '@/app/admin/_components/use-action';

/** 同意退款: refunds the buyer and, for a flash sale, puts the unit back on sale. */
export function ApproveRefundButton({ orderId }: { orderId: string }) {
  const { result, act } = useAction();
  return (
    <div className="flex items-center gap-2">
      <ConfirmButton
        label="同意退款"
        title="同意退款？"
        message="款项原路退回买家；秒杀券的库存会放回销售。"
        testId={`approve-refund-${orderId}`}
        onConfirm={act(async () => {
          const r = await api<{ status: number }>(`/api/admin/orders/${orderId}/refund`, { method: 'POST' });
          // 5: approved, but the payment channel has not confirmed yet; it is retried until it does.
          return r.status === 6 ? '已退款' : '已同意，退款处理中';
        })}
      />
      {result && <span className={`text-xs ${result.ok ? 'text-green-700' : 'text-red-600'}`}>{result.text}</span>}
    </div>
  );
}
