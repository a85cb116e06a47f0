'use client';

/** 「购买」 for a normal voucher: creates an unpaid order at once, then 我的订单 takes over (pay, cancel, redeem). */
import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { api, type ApiError } from '@/lib/web/client-api';

export function BuyVoucher({ voucherId }: { voucherId: string }) {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function buy() {
    setBusy(true);
    setError(null);
    try {
      const o = await api<{ id: string }>(`/api/vouchers/${voucherId}/buy`, { method: 'POST' });
      router.push(`/orders#order-${o.id}`);
    } catch (e) {
      setError((e as ApiError).message);
      setBusy(false);
    }
  }
  return (
    <div className="flex items-center justify-end gap-3">
      {error && <p role="alert" className="text-sm text-red-600" data-testid="buy-error">{error}</p>}
      <button type="button" onClick={buy} disabled={busy} className="rounded bg-brand px-5 py-1.5 text-sm text-white disabled:opacity-50" data-testid="voucher-buy">
        {busy ? '下单中…' : '购买'}
      </button>
    </div>
  );
}
