'use client';

/** Types or scans (a scanner types the code and Enter) a redeem code; shows the outcome in words. */
import { useRef, useState } from 'react';
import { api, type ApiError } from '@/lib/web/client-api';

export function RedeemForm() {
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const input = useRef<HTMLInputElement>(null);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setResult(null);
    try {
      const r = await api<{ orderId: string; voucherTitle: string; shopName: string }>('/api/admin/redeem', { body: { code: code.replace(/\s/g, '') } });
      setResult({ ok: true, text: `核销成功：${r.shopName} · ${r.voucherTitle}（订单 ${r.orderId}）` });
      setCode('');
    } catch (err) {
      setResult({ ok: false, text: (err as ApiError).message });
    } finally {
      setBusy(false);
      input.current?.focus();
    }
  }

  return (
    <form onSubmit={submit} className="space-y-3 rounded-lg bg-white p-5 shadow-sm">
      <label className="block text-sm font-medium" htmlFor="redeem-code">核销码</label>
      <input
        ref={input}
        id="redeem-code"
        autoFocus
        inputMode="numeric"
        autoComplete="off"
        value={code}
        onChange={(e) => setCode(e.target.value)}
        placeholder="例如 1234 5678 9012"
        className="w-full rounded border border-gray-300 px-3 py-2 font-mono text-lg tracking-widest"
        data-testid="redeem-input"
      />
      <button type="submit" disabled={busy || code.trim() === ''} className="rounded bg-brand px-5 py-2 text-sm text-white disabled:opacity-50" data-testid="redeem-submit">
        {busy ? '核销中…' : '核销'}
      </button>
      {result && (
        <p role={result.ok ? 'status' : 'alert'} className={`text-sm ${result.ok ? 'text-green-700' : 'text-red-600'}`} data-testid="redeem-result" data-ok={result.ok}>
          {result.text}
        </p>
      )}
    </form>
  );
}
