'use client';

/**
 * The reservation part of a reservation-only flash sale's grab box (docs/fair-sale.md#the-shop-page):
 * 预约 / 已预约 + 取消预约 before the start, how many reserved, and for a draw sale its committed
 * seed hash, then 已中签 / 未中签 as soon as the draw has run. It asks the server once on mount
 * (an ordinary sale answers `{ gated: false }` and this renders nothing) and again around the start.
 */
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';

export interface ReservationView {
  gated: boolean;
  /** Behind the waiting room (docs/fair-sale.md#the-waiting-room): grabbed from the room's page. */
  room?: boolean;
  mode?: 'first-come' | 'draw';
  reserveBegin?: string;
  beginTime?: string;
  reserved?: number;
  me?: 'none' | 'reserved' | 'won' | 'lost' | null;
  draw?: { seedHash: string; seed: string | null; drawnAt: string | null; reserved: number | null; winners: number | null };
}

/** Whether this user may press 立即抢购 once the sale is live (an ordinary sale: always). */
export function mayGrab(r: ReservationView | null): boolean {
  if (!r?.gated) return true;
  return r.mode === 'draw' ? r.me === 'won' || (r.me === 'reserved' && !r.draw?.drawnAt) : r.me === 'reserved';
}

export function useReservation(voucherId: string, beginTime: string): [ReservationView | null, (v: ReservationView) => void] {
  const [view, setView] = useState<ReservationView | null>(null);
  const load = useCallback(async () => {
    try {
      setView(await api<ReservationView>(`/api/seckill/${voucherId}/reservation`, { redirectOn401: false }));
    } catch {
      // Keep what we had: the grab itself still decides.
    }
  }, [voucherId]);
  useEffect(() => {
    const first = setTimeout(load, 0);
    // Again just after the start: a draw sale's outcome is known then.
    const wait = Date.parse(beginTime) - Date.now();
    const again = wait > 0 && wait < 2 ** 31 - 1 ? setTimeout(load, wait + 500) : undefined;
    return () => {
      clearTimeout(first);
      clearTimeout(again);
    };
  }, [load, beginTime]);
  return [view, setView];
}

export function ReservationBox({ voucherId, view, now, live, onChange }: { voucherId: string; view: ReservationView; now: number; live: boolean; onChange: (v: ReservationView) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const open = view.reserveBegin !== undefined && now >= Date.parse(view.reserveBegin) && !live && !view.draw?.drawnAt;
  const reserved = view.me === 'reserved' || view.me === 'won' || view.me === 'lost';

  async function act(method: 'POST' | 'DELETE') {
    setBusy(true);
    setError(null);
    try {
      onChange(await api<ReservationView>(`/api/seckill/${voucherId}/reservation`, { method }));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : '网络异常，请稍后再试');
    } finally {
      setBusy(false);
    }
  }

  const drawn = view.mode === 'draw' && view.draw?.drawnAt;
  return (
    <div className="mb-2 flex flex-wrap items-center justify-between gap-2 border-b border-brand/20 pb-2 text-sm" data-testid="reservation">
      <div className="min-w-0">
        <p>
          <span className="mr-1 rounded bg-amber-700 px-1 text-xs text-white">{view.mode === 'draw' ? '预约抽签' : '预约抢购'}</span>
          <span className="text-gray-600" data-testid="reservation-count">
            {view.reserved ?? 0} 人已预约
          </span>
        </p>
        <p className="mt-0.5 text-xs text-gray-600" data-testid="reservation-state" data-me={view.me ?? 'anonymous'}>
          {view.me === 'won' ? (live ? '已中签，可以抢购' : '已中签，开抢后可抢购')
          : view.me === 'lost' ? '很遗憾，未中签'
          : view.me === 'reserved' ? (view.mode === 'draw' ? '已预约，开抢时抽签' : '已预约，开抢后可抢购')
          : live || drawn ? '仅限预约用户抢购，你未预约'
          : view.mode === 'draw' ? '预约后参加抽签，中签者可抢购'
          : '仅限预约用户抢购'}
        </p>
        {view.mode === 'draw' && view.draw && (
          <p className="mt-0.5 break-all font-mono text-[10px] text-gray-600" data-testid="reservation-seed">
            {drawn ? `种子 ${view.draw.seed} · ${view.draw.winners}/${view.draw.reserved} 人中签` : `种子哈希 ${view.draw.seedHash.slice(0, 16)}…`}
          </p>
        )}
        {error && (
          <p role="alert" className="mt-0.5 text-xs text-red-600" data-testid="reservation-error">
            {error}
          </p>
        )}
      </div>
      {open && (
        <button
          type="button"
          data-testid="reservation-button"
          disabled={busy}
          onClick={() => act(reserved ? 'DELETE' : 'POST')}
          className={`shrink-0 rounded-full px-4 py-1.5 text-sm ${reserved ? 'border border-gray-300 text-gray-600' : 'bg-amber-700 font-medium text-white'} disabled:opacity-50`}
        >
          {busy ? '请稍候…' : reserved ? '取消预约' : '立即预约'}
        </button>
      )}
      {!open && reserved && !live && !drawn && (
        <span className="shrink-0 text-sm font-medium text-amber-700" data-testid="reservation-done">
          已预约
        </span>
      )}
    </div>
  );
}
