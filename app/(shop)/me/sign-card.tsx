'use client';

import { useState } from 'react';
import type { SignStatus } from '@/lib/sign/sign.service';
import { api, ApiError } from '@/lib/web/client-api';

/** This month's sign-in calendar (Beijing days), the streak, and the button. */
export function SignCard({ initial }: { initial: SignStatus }) {
  const [s, setS] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const signed = new Set(s.days);
  const todayDay = Number(s.today.slice(8));
  return (
    <section className="mt-6 rounded-lg border border-gray-100 p-4" data-testid="sign-card">
      <div className="flex items-center justify-between">
        <h2 className="font-semibold">每日签到</h2>
        <span className="text-sm text-gray-600">
          已连续签到 <b className="text-brand" data-testid="sign-streak">{s.streak}</b> 天
        </span>
      </div>
      <ol className="mt-3 grid grid-cols-7 gap-1 text-center text-xs" aria-label={`${s.today.slice(0, 7)} 签到日历`}>
        {Array.from({ length: s.daysInMonth }, (_, i) => i + 1).map((d) => (
          <li key={d} data-testid={signed.has(d) ? 'sign-day-signed' : 'sign-day'} className={`rounded py-1 ${signed.has(d) ? 'bg-brand text-white' : d === todayDay ? 'ring-1 ring-brand' : 'bg-gray-50 text-gray-600'}`}>
            {d}
          </li>
        ))}
      </ol>
      <button
        type="button"
        disabled={busy || s.signedToday}
        data-testid="sign-button"
        className="mt-3 w-full rounded-full bg-brand py-2 text-sm text-white disabled:bg-gray-200 disabled:text-gray-600"
        onClick={async () => {
          setBusy(true);
          setError('');
          try {
            setS(await api<SignStatus>('/api/sign', { method: 'POST' }));
          } catch (e) {
            setError(e instanceof ApiError ? e.message : '签到失败');
          } finally {
            setBusy(false);
          }
        }}
      >
        {s.signedToday ? '今日已签到' : '签到'}
      </button>
      {error && <p className="mt-1 text-xs text-red-600">{error}</p>}
    </section>
  );
}
