'use client';

/**
 * The waitlist part of a sold-out flash sale's grab box (docs/fair-sale.md#waitlist): 加入候补,
 * then 候补中 · 第 N 位 (asked again every few seconds), and when a returned unit is offered to
 * this user, a countdown and 立即购买. The server decides everything; the countdown here is
 * drawn from the time left the server measured by its own clock, not from this device's clock.
 * A room sale's waitlist asks for the room's bot gate first (`gate` in the view): 加入候补 shows
 * the widget, which solves it on the card (only for the sale the visitor chose, not for every sold-out
 * card on the page), and the join goes with the solution as soon as it is found.
 */
import Link from 'next/link';
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';
import { AltchaGate } from '@/app/_components/altcha-gate';

type Me = { state: 'none' } | { state: 'waiting'; position: number } | { state: 'offered'; expiresInMs: number };
interface WaitlistView {
  waiting: number;
  offerMs: number;
  me: Me | null;
  /** A room sale's bot gate is still to pass before joining. */
  gate?: boolean;
}

/** How often a waiting page asks whether a unit came back. */
const POLL_MS = 3000;

const mmss = (ms: number) => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};

/**
 * `onStockBack`: what 刷新 does when a join finds stock again (409 NOT_SOLD_OUT: a returned unit
 * went on open sale because nobody was waiting). A room page looks again (its polling stopped at
 * 已抢光); by default the page reloads.
 */
export function WaitlistBox({ voucherId, onStockBack }: { voucherId: string; onStockBack?: () => void }) {
  const [view, setView] = useState<WaitlistView | null>(null);
  // When the view was fetched (this device's clock), to count the offer's time left down from it.
  const [fetchedAt, setFetchedAt] = useState(0);
  const [now, setNow] = useState(0);
  const [busy, setBusy] = useState<null | 'join' | 'leave' | 'claim'>(null);
  const [error, setError] = useState<string | null>(null);
  // The last join found stock on open sale again: 刷新 goes back to buying.
  const [stockBack, setStockBack] = useState(false);
  const [orderId, setOrderId] = useState<string | null>(null);
  const [expiredNotice, setExpiredNotice] = useState(false);
  // A room sale's gate being solved for a join (the widget shows while this is true).
  const [gating, setGating] = useState(false);

  const apply = useCallback((v: WaitlistView) => {
    setView((old) => {
      if (old?.me?.state === 'offered' && v.me?.state !== 'offered') setExpiredNotice(true);
      return v;
    });
    const t = Date.now();
    setFetchedAt(t);
    setNow(t);
  }, []);

  const load = useCallback(async () => {
    try {
      apply(await api<WaitlistView>(`/api/seckill/${voucherId}/waitlist`, { redirectOn401: false }));
    } catch {
      // Keep what we had; the next poll tries again.
    }
  }, [voucherId, apply]);

  const state = orderId ? 'bought' : (view?.me?.state ?? null);
  useEffect(() => {
    const first = setTimeout(load, 0);
    // Only a waiting user needs to hear about an offer; an offer's countdown ticks locally.
    const poll = state === 'waiting' ? setInterval(load, POLL_MS) : undefined;
    return () => {
      clearTimeout(first);
      clearInterval(poll);
    };
  }, [load, state]);

  const offer = view?.me?.state === 'offered' ? view.me : null;
  const left = offer ? offer.expiresInMs - (now - fetchedAt) : 0;
  useEffect(() => {
    if (!offer) return;
    const t = setInterval(() => {
      const at = Date.now();
      setNow(at);
      // Time is up: ask the server (the offer has moved on, or it is still ours for a moment).
      if (offer.expiresInMs - (at - fetchedAt) <= 0) {
        clearInterval(t);
        void load();
      }
    }, 250);
    return () => clearInterval(t);
  }, [offer, fetchedAt, load]);

  async function act(kind: 'join' | 'leave' | 'claim', altcha?: string) {
    if (kind === 'join' && view?.gate && altcha === undefined) {
      setError(null);
      setGating(true);
      return;
    }
    setGating(false);
    setBusy(kind);
    setError(null);
    setStockBack(false);
    setExpiredNotice(false);
    try {
      if (kind === 'claim') {
        const r = await api<{ orderId: string }>(`/api/seckill/${voucherId}/waitlist/claim`, { method: 'POST' });
        setOrderId(r.orderId);
      } else {
        const body = kind === 'join' && altcha !== undefined ? { altcha } : undefined;
        apply(await api<WaitlistView>(`/api/seckill/${voucherId}/waitlist`, { method: kind === 'join' ? 'POST' : 'DELETE', body }));
      }
    } catch (e) {
      setError(e instanceof ApiError ? e.message : '网络异常，请稍后再试');
      if (e instanceof ApiError && e.code === 'NOT_SOLD_OUT') setStockBack(true);
      // The view may have moved on: an offer expired meanwhile; a refused solution (the next 加入候补
      // solves a fresh one); a gate passed before a refusal such as NOT_SOLD_OUT (no second solving).
      if (kind !== 'leave') void load();
    } finally {
      setBusy(null);
    }
  }

  if (!view) return <p className="mt-2 text-xs text-gray-600" data-testid="waitlist-loading">候补信息加载中…</p>;

  return (
    <div className="mt-2 border-t border-brand/20 pt-2 text-sm" data-testid="waitlist" data-state={state ?? 'anonymous'}>
      {orderId ? (
        <p role="status" className="text-green-700" data-testid="waitlist-bought">
          候补购买成功，正在生成订单…
          <Link href={`/orders#order-${orderId}`} className="ml-2 text-brand underline" data-testid="waitlist-order-link">
            查看订单
          </Link>
        </p>
      ) : offer && left > 0 ? (
        <div className="rounded-md bg-amber-50 p-2" data-testid="waitlist-offer">
          <div className="flex items-center justify-between gap-3">
            <p className="text-amber-800">
              有人退回了名额，留给你了！请在 <span className="font-mono font-semibold tabular-nums" data-testid="waitlist-countdown">{mmss(left)}</span> 内购买
            </p>
            <button
              type="button"
              data-testid="waitlist-claim"
              disabled={busy !== null}
              onClick={() => act('claim')}
              className="shrink-0 rounded-full bg-brand px-4 py-1.5 font-medium text-white active:bg-brand-dark disabled:bg-gray-300"
            >
              {busy === 'claim' ? '购买中…' : '立即购买'}
            </button>
          </div>
          <div className="mt-2 h-1 overflow-hidden rounded bg-amber-100">
            <div className="h-full bg-amber-500 transition-[width]" style={{ width: `${Math.min(100, (left / view.offerMs) * 100)}%` }} />
          </div>
        </div>
      ) : view.me === null ? (
        <p className="text-gray-600">
          已售罄，有人退单时可候补购买。
          <Link href={`/login?next=${encodeURIComponent(typeof window === 'undefined' ? '/' : window.location.pathname)}`} className="ml-1 text-brand underline">
            登录后加入候补
          </Link>
        </p>
      ) : view.me.state === 'waiting' ? (
        <div className="flex items-center justify-between gap-3">
          <p className="text-gray-700" data-testid="waitlist-position">
            候补中 · 第 <span className="font-semibold tabular-nums">{view.me.position}</span> 位
            <span className="ml-1 text-xs text-gray-600">（有人退单时按顺序通知）</span>
          </p>
          <button type="button" data-testid="waitlist-leave" disabled={busy !== null} onClick={() => act('leave')} className="shrink-0 text-xs text-gray-600 underline disabled:text-gray-300">
            {busy === 'leave' ? '退出中…' : '退出候补'}
          </button>
        </div>
      ) : (
        <>
          <div className="flex items-center justify-between gap-3">
            <p className="text-gray-600">
              已售罄{view.waiting > 0 ? `，${view.waiting} 人候补中` : ''}。有人退单时按顺序留给候补的人
            </p>
            <button
              type="button"
              data-testid="waitlist-join"
              disabled={busy !== null || gating}
              onClick={() => act('join')}
              className="shrink-0 rounded-full border border-brand px-4 py-1.5 font-medium text-brand active:bg-brand/10 disabled:border-gray-300 disabled:text-gray-300"
            >
              {busy === 'join' ? '加入中…' : gating ? '验证中…' : '加入候补'}
            </button>
          </div>
          {gating && (
            <div className="mt-2" data-testid="waitlist-gate">
              <p className="mb-1 text-xs text-gray-600">排队抢购的候补需先完成人机验证（自动进行，约 1 秒），完成后自动加入</p>
              <AltchaGate
                challengeUrl={`/api/seckill/${voucherId}/room/challenge`}
                onSolved={(payload) => void act('join', payload)}
                onFailed={() => {
                  // No challenge (a room that opened by itself has lapsed: no gate any more) or no network: ask again.
                  setGating(false);
                  setError('人机验证未完成，请重试');
                  void load();
                }}
                testId="waitlist-gate-widget"
              />
            </div>
          )}
        </>
      )}
      {expiredNotice && !offer && !orderId && (
        <p role="status" className="mt-1 text-xs text-amber-700" data-testid="waitlist-expired">
          候补名额已过期，已转给下一位
        </p>
      )}
      {error && (
        <p role="alert" className="mt-1 text-xs text-red-600" data-testid="waitlist-error">
          {error}
          {stockBack && (
            <button type="button" data-testid="waitlist-stock-back" onClick={() => (onStockBack ? onStockBack() : window.location.reload())} className="ml-2 font-medium text-brand underline">
              刷新
            </button>
          )}
        </p>
      )}
    </div>
  );
}
