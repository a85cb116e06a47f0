'use client';

/**
 * One flash-sale voucher's grab box: countdown before the start, remaining stock (kept fresh by
 * the page that renders this), a grab button with an in-flight state, the outcome in words, then
 * polling the order until the worker has created it. The server decides everything; the clock
 * here only drives the countdown.
 */
import Link from 'next/link';
import { useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';
import { mayGrab, ReservationBox, useReservation } from '@/app/_components/seckill-reservation';
import { WaitlistBox } from '@/app/_components/seckill-waitlist';
import { useNow } from '@/app/_components/use-now';
import { usePendingOrder } from '@/app/_components/use-pending-order';

export interface SeckillGrabProps {
  voucherId: string;
  beginTime: string;
  endTime: string;
  remaining: number | null;
}

type OrderState = 'pending' | 'created' | 'failed';
/** The status poll's answer: a failed order may say why (ALREADY_BOUGHT: the buyer holds keptOrderId). */
interface OrderPoll {
  state: OrderState;
  failReason?: 'ALREADY_BOUGHT';
  keptOrderId?: string;
}
type Outcome =
  | { kind: 'order'; orderId: string; state: OrderState; failReason?: OrderPoll['failReason']; keptOrderId?: string }
  | { kind: 'refused'; code: keyof typeof REFUSALS; text: string }
  | { kind: 'error'; text: string };

const REFUSALS = {
  ALREADY_BOUGHT: '已抢过',
  SOLD_OUT: '已售罄',
  NOT_STARTED: '未开始',
  ENDED: '已结束',
  FORFEITED: '你取消过该券的订单，名额已让出，不能再抢',
  NOT_RESERVED: '该秒杀仅限预约用户参与，你没有预约',
  NOT_DRAWN: '很遗憾，你未被抽中，本场不能抢购',
  NEED_TICKET: '该秒杀需要排队抢购',
} as const;

/**
 * An overloaded server sheds grabs with 503 + Retry-After instead of queueing them. Try again a
 * few times, each after a random 0.5–1.5 s × attempt, so a crowd's retries spread out instead of
 * arriving together.
 */
async function grabRetryingWhenShed(voucherId: string) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await api<{ orderId: string; status: 'pending' | 'created' }>(`/api/seckill/${voucherId}`, { method: 'POST' });
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 503 || attempt > 3) throw e;
      await new Promise((r) => setTimeout(r, (500 + Math.random() * 1000) * attempt));
    }
  }
}

function countdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const hms = [Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, '0')).join(':');
  return d > 0 ? `${d} 天 ${hms}` : hms;
}


export function SeckillGrab({ voucherId, beginTime, endTime, remaining }: SeckillGrabProps) {
  const now = useNow();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const begin = Date.parse(beginTime);
  const end = Date.parse(endTime);
  const phase = now === null ? 'loading' : now < begin ? 'upcoming' : now >= end ? 'ended' : 'live';
  const soldOut = remaining === 0 || (outcome?.kind === 'refused' && outcome.code === 'SOLD_OUT');
  const done = outcome?.kind === 'order' || (outcome?.kind === 'refused' && outcome.code === 'ALREADY_BOUGHT');
  // This buyer gave a unit of this sale back (cancelled, timed out, refunded): the server refuses every further grab.
  const forfeited = outcome?.kind === 'refused' && outcome.code === 'FORFEITED';

  const pendingId = outcome?.kind === 'order' && outcome.state === 'pending' ? outcome.orderId : null;
  usePendingOrder<OrderPoll>(pendingId, (p) => setOutcome((o) => (o?.kind === 'order' ? { ...o, state: p.state, failReason: p.failReason, keptOrderId: p.keptOrderId } : o)));

  async function grab() {
    setBusy(true);
    setOutcome(null);
    try {
      const r = await grabRetryingWhenShed(voucherId);
      setOutcome({ kind: 'order', orderId: r.orderId, state: r.status });
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(0, 'NETWORK', '网络异常，请稍后再试');
      if (err.code in REFUSALS) {
        const code = err.code as keyof typeof REFUSALS;
        setOutcome({ kind: 'refused', code, text: REFUSALS[code] });
      } else setOutcome({ kind: 'error', text: err.message });
    } finally {
      setBusy(false);
    }
  }

  const label =
    phase === 'loading' ? '加载中…'
    : phase === 'upcoming' ? '即将开抢'
    : phase === 'ended' ? '已结束'
    : busy ? '抢购中…'
    // Whoever took the last unit has it: 已抢到 wins over the 已售罄 the stock poll brings next.
    : done ? '已抢到'
    : forfeited ? '不能再抢'
    : soldOut ? '已售罄'
    : '立即抢购';
  // A reservation-only sale: only the reserved (or, in a draw, the drawn) may press the button.
  const [reservation, setReservation] = useReservation(voucherId, beginTime);
  const shut = outcome?.kind === 'refused' && (outcome.code === 'NOT_RESERVED' || outcome.code === 'NOT_DRAWN');
  const gatedOut = phase === 'live' && !done && (shut || !mayGrab(reservation));
  const finalLabel = gatedOut && !busy && !soldOut ? (reservation?.me === 'lost' || (outcome?.kind === 'refused' && outcome.code === 'NOT_DRAWN') ? '未中签' : '未预约') : label;
  const disabled = phase !== 'live' || busy || soldOut || done || forfeited || gatedOut;

  return (
    <div className="rounded-lg border border-brand/30 bg-brand/5 p-3" data-testid="seckill-grab" data-voucher-id={voucherId}>
      {reservation?.gated && now !== null && <ReservationBox voucherId={voucherId} view={reservation} now={now} live={phase === 'live' || phase === 'ended'} onChange={setReservation} />}
      <div className="flex items-center justify-between gap-3">
        <div className="text-sm">
          {phase === 'upcoming' && now !== null && (
            <p className="text-brand" data-testid="seckill-countdown">
              距开抢 <span className="font-mono tabular-nums">{countdown(begin - now)}</span>
            </p>
          )}
          {phase === 'live' && now !== null && (
            <p className="text-gray-600" data-testid="seckill-countdown">
              距结束 <span className="font-mono tabular-nums">{countdown(end - now)}</span>
            </p>
          )}
          {phase === 'ended' && <p className="text-gray-600">活动已结束</p>}
          <p className="text-xs text-gray-600" data-testid="seckill-remaining">
            {remaining === null ? '库存加载中' : `剩余 ${remaining} 张`}
          </p>
        </div>
        {reservation?.room && phase !== 'ended' && !soldOut && !done ? (
          // A room sale is grabbed from the room's page, with a token (docs/fair-sale.md#the-waiting-room).
          <Link
            href={`/seckill/${voucherId}/room`}
            data-testid="seckill-room-link"
            className="shrink-0 rounded-full bg-brand px-5 py-2 text-sm font-medium text-white active:bg-brand-dark"
          >
            {phase === 'upcoming' ? '提前排队' : '排队抢购'}
          </Link>
        ) : (
        <button
          type="button"
          data-testid="seckill-button"
          disabled={disabled}
          onClick={grab}
          className="shrink-0 rounded-full bg-brand px-5 py-2 text-sm font-medium text-white active:bg-brand-dark disabled:bg-gray-300"
        >
          {finalLabel}
        </button>
        )}
      </div>
      {outcome && <OutcomeLine outcome={outcome} voucherId={voucherId} />}
      {/* Sold out: wait for a unit someone gives back (docs/fair-sale.md#waitlist). */}
      {phase === 'live' && soldOut && !done && !forfeited && <WaitlistBox voucherId={voucherId} />}
    </div>
  );
}

function OutcomeLine({ outcome, voucherId }: { outcome: Outcome; voucherId: string }) {
  if (outcome.kind === 'order') {
    // Folded: Redis forgot this buyer's earlier grab and took a second one; the earlier order stands.
    const alreadyHeld = outcome.state === 'failed' && outcome.failReason === 'ALREADY_BOUGHT';
    const text =
      outcome.state === 'created' ? '抢购成功！订单已生成'
      : alreadyHeld ? '你已有这张券的订单，这次抢购未生成新订单'
      : outcome.state === 'failed' ? '抢购成功，但下单失败，请联系客服'
      : '抢购成功，正在生成订单…';
    return (
      <p role="status" className={`mt-2 text-sm ${outcome.state === 'failed' ? 'text-amber-700' : 'text-green-700'}`} data-testid="seckill-result" data-state={outcome.state}>
        {text}
        {outcome.state === 'created' && (
          <Link href={`/orders#order-${outcome.orderId}`} className="ml-2 text-brand underline" data-testid="seckill-order-link">
            去支付
          </Link>
        )}
        {alreadyHeld && (
          <Link href={outcome.keptOrderId ? `/orders#order-${outcome.keptOrderId}` : '/orders'} className="ml-2 whitespace-nowrap text-brand underline" data-testid="seckill-kept-order-link">
            查看我的订单
          </Link>
        )}
      </p>
    );
  }
  return (
    <p role="alert" className="mt-2 text-sm text-red-600" data-testid="seckill-result" data-state={outcome.kind === 'refused' ? outcome.code : 'error'}>
      {outcome.text}
      {outcome.kind === 'refused' && outcome.code === 'NEED_TICKET' && (
        <Link href={`/seckill/${voucherId}/room`} className="ml-2 text-brand underline" data-testid="seckill-room-result-link">
          去排队
        </Link>
      )}
    </p>
  );
}
