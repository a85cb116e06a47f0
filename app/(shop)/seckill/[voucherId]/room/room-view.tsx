'use client';

/**
 * The waiting page (docs/fair-sale.md#the-waiting-page): joins the room on arrival (the same user
 * keeps the same place, so a reload loses nothing), then polls its place with a backoff that
 * follows the estimate. The bot gate's altcha widget solves its proof of work while the visitor
 * waits (docs/fair-sale.md#solved-while-waiting), so the turn costs no solving time: once admitted,
 * the solution buys a grab token at once, then the 立即抢购 button posts to the URL the token makes;
 * then the order. Admitted before a solution (or with one that expired), the widget solves then.
 */
import Link from 'next/link';
import { useEffect, useRef, useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';
import { usePendingOrder } from '@/app/_components/use-pending-order';
import type { RoomView } from '@/lib/seckill/room/room';
import { AltchaGate } from '@/app/_components/altcha-gate';
import { WaitlistBox } from '@/app/_components/seckill-waitlist';
import { useNow } from '@/app/_components/use-now';

/**
 * The gate is solved while waiting once the turn is this close (a challenge lives 10 minutes,
 * lib/seckill/room/pow.ts), and a solution older than SOLUTION_FRESH_MS is solved again.
 */
const SOLVE_AHEAD_MS = 5 * 60_000;
const SOLUTION_FRESH_MS = 8 * 60_000;

/** What the room route answers (lib/seckill/room/room.ts). */
type Look = RoomView;

type Grab = { kind: 'idle' } | { kind: 'busy' } | { kind: 'order'; orderId: string; state: 'pending' | 'created' | 'failed' } | { kind: 'error'; code: string; text: string };

function wait(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `约 ${s} 秒`;
  const m = Math.floor(s / 60);
  return m < 60 ? `约 ${m} 分 ${s % 60} 秒` : `约 ${Math.floor(m / 60)} 小时 ${m % 60} 分`;
}

/**
 * Joins once, then looks again with a wait (a long poll, docs/fair-sale.md#waiting-without-polling)
 * that follows the estimate (1–5 s): the answer comes at admission or the sell-out if either falls
 * inside it, else when it runs out, with the place as it is then. A server that answers at once
 * (it holds no more waiting looks) is asked again only once the wait has passed; errors back off.
 */
const ticketKey = (voucherId: string) => `room-ticket:${voucherId}`;

/** The room ticket this browser was given for the sale, or null (another user's on a shared browser only sends the join to Redis, which decides). */
function heldTicket(voucherId: string): string | null {
  try {
    return localStorage.getItem(ticketKey(voucherId));
  } catch {
    return null;
  }
}

function keepTicket(voucherId: string, ticket: string): void {
  try {
    localStorage.setItem(ticketKey(voucherId), ticket);
  } catch {
    // storage off: a reload while the room is full asks again without it
  }
}

function useRoom(voucherId: string, round: number): { look: Look | null; error: string | null; ended: boolean } {
  const [look, setLook] = useState<Look | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    let failures = 0;
    let joined = false;
    let waitMs = 0;
    const step = async () => {
      const started = Date.now();
      let next = 2000;
      try {
        // A join shows the ticket this tab holds, so a reload keeps its place even while the room
        // answers newcomers 名额已满 (docs/fair-sale.md#every-unit-spoken-for).
        const held = joined ? null : heldTicket(voucherId);
        let l = await api<Look>(joined ? `/api/seckill/${voucherId}/room?wait=${waitMs}` : `/api/seckill/${voucherId}/room`, { method: joined ? 'GET' : 'POST', headers: held ? { 'x-room-ticket': held } : undefined });
        // 名额已满 to a join may come from a process's memory, which cannot tell a holder without
        // their ticket (another browser, storage cleared) from a newcomer: a look never comes from
        // it, and finds the place if there is one.
        if (!joined && l.state === 'full') {
          const mine = await api<Look>(`/api/seckill/${voucherId}/room`);
          if (mine.position !== null) l = mine;
        }
        joined = true;
        failures = 0;
        if (stopped) return;
        if (l.ticket) keepTicket(voucherId, l.ticket);
        setLook(l);
        setError(null);
        if (l.state === 'admitted' || l.state === 'soldout' || l.state === 'full') return; // nothing more to wait for
        if (l.state === 'none') joined = false; // the room forgot this place (a Redis loss): join again
        next = Math.max(0, waitMs - (Date.now() - started));
        waitMs = Math.round(Math.min(5000, Math.max(1000, (l.estimateMs ?? 4000) / 4)));
      } catch (e) {
        if (stopped) return;
        const err = e instanceof ApiError ? e : new ApiError(0, 'NETWORK', '网络异常');
        if (err.code === 'ENDED' || err.code === 'NOT_FOUND') {
          setEnded(true);
          setError(err.message);
          return;
        }
        setError(err.message);
        failures++;
        next = Math.min(15_000, 1000 * 2 ** failures) * (0.75 + Math.random() / 2);
      }
      if (!stopped) timer = setTimeout(step, next);
    };
    void step();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [voucherId, round]);
  return { look, error, ended };
}

export function RoomView({ voucherId, shopId, title, beginTime, endTime }: { voucherId: string; shopId: string; title: string; beginTime: string; endTime: string }) {
  // Bumped to join and look again after 已抢光 (a returned unit back on open sale: the waitlist box's 刷新).
  const [round, setRound] = useState(0);
  const { look, error, ended } = useRoom(voucherId, round);
  const [pass, setPass] = useState<{ token: string; grabUrl: string; expiresAt: number } | null>(null);
  const [passError, setPassError] = useState<string | null>(null);
  const [grab, setGrab] = useState<Grab>({ kind: 'idle' });
  // The gate's solution, found while waiting; spent by the first token it buys.
  const [solution, setSolution] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
  const spent = useRef(false);
  const solvedAt = useRef(0);
  const now = useNow();
  function solvedWhileWaiting(payload: string) {
    solvedAt.current = Date.now();
    setSolution(payload);
  }
  // A solution that would expire before the turn: solve a fresh one.
  useEffect(() => {
    if (solution && !spent.current && now !== null && now - solvedAt.current > SOLUTION_FRESH_MS) setSolution(null);
  }, [now, solution]);

  async function askToken(altcha?: string) {
    if (!look?.ticket) return;
    setPassError(null);
    setAsking(true);
    try {
      setPass(await api(`/api/seckill/${voucherId}/room/token`, { body: { ticket: look.ticket, ...(altcha ? { altcha } : {}) } }));
    } catch (e) {
      // A solution that expired while waiting (or was refused): the widget solves a fresh one.
      if (e instanceof ApiError && e.code === 'POW_FAILED') setSolution(null);
      setPassError(e instanceof ApiError ? e.message : '网络异常，请重试');
    } finally {
      setAsking(false);
    }
  }

  // Admitted with the gate solved while waiting: the token at once, no solving on the turn.
  const admitted = look?.state === 'admitted';
  useEffect(() => {
    if (!admitted || !solution || spent.current) return;
    spent.current = true;
    void askToken(solution);
    // askToken reads the latest look; only the turn and the solution start it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [admitted, solution]);
  function solvedOnTurn(payload: string) {
    spent.current = true;
    setSolution(payload);
    void askToken(payload);
  }

  async function grabNow() {
    if (!pass) return;
    setGrab({ kind: 'busy' });
    try {
      const r = await api<{ orderId: string; status: 'pending' | 'created' }>(pass.grabUrl, { method: 'POST' });
      setGrab({ kind: 'order', orderId: r.orderId, state: r.status });
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(0, 'NETWORK', '网络异常，请重试');
      // A used or expired token, or a 503: the gate is passed already, ask for a fresh token.
      if (err.code === 'TOKEN_USED' || err.code === 'NEED_TICKET' || err.status === 503) setPass(null);
      setGrab({ kind: 'error', code: err.code, text: err.message });
    }
  }
  /** Back from 已抢光: a fresh turn (the gate passed stays passed on the server), joined and looked again. */
  function lookAgain() {
    setGrab({ kind: 'idle' });
    setPass(null);
    setPassError(null);
    spent.current = false;
    setRound((r) => r + 1);
  }
  const pendingId = grab.kind === 'order' && grab.state === 'pending' ? grab.orderId : null;
  usePendingOrder<{ state: 'pending' | 'created' | 'failed' }>(pendingId, (o) => pendingId && setGrab({ kind: 'order', orderId: pendingId, state: o.state }));

  const begin = Date.parse(beginTime);
  const turnSoon = look !== null && now !== null && begin - now < SOLVE_AHEAD_MS && (look.estimateMs ?? 0) < SOLVE_AHEAD_MS;
  const soldOut = look?.state === 'soldout' || (grab.kind === 'error' && grab.code === 'SOLD_OUT');
  return (
    <section className="mx-auto max-w-md p-4" data-testid="room">
      <Link href={`/shops/${shopId}`} className="text-sm text-brand">‹ 返回店铺</Link>
      <h1 className="mt-2 text-lg font-semibold">{title}</h1>
      <p className="text-xs text-gray-500">秒杀排队 · 排队时自动完成人机验证，排到你即可抢购</p>

      <div className="mt-4 rounded-xl bg-white p-5 text-center shadow-sm" data-testid="room-card" data-state={soldOut ? 'soldout' : look?.state ?? 'loading'}>
        {!look && !error && <p className="py-6 text-gray-500" data-testid="room-loading">正在进入排队…</p>}
        {!look && error && <p className="py-6 text-red-600" role="alert" data-testid="room-error">{error}</p>}
        {look && soldOut && (
          <div className="py-4" data-testid="room-soldout">
            <p className="text-2xl font-semibold text-gray-700">已抢光</p>
            <p className="mt-1 text-sm text-gray-500">本场秒杀已售罄，感谢排队</p>
            {/* Returned units go to the waitlist, served in the room's place order (docs/fair-sale.md#a-room-sales-waitlist). */}
            <div className="mt-3 text-left">
              <WaitlistBox voucherId={voucherId} onStockBack={lookAgain} />
            </div>
          </div>
        )}
        {look && !soldOut && look.state === 'full' && (
          <div className="py-4" data-testid="room-full">
            <p className="text-2xl font-semibold text-gray-700">名额已满</p>
            <p className="mt-1 text-sm text-gray-600">每件商品都已有人排队认领，有人放弃时会重新开放</p>
            <button type="button" onClick={lookAgain} className="mt-3 rounded-full border border-brand px-4 py-1.5 text-sm text-brand" data-testid="room-full-again">
              再试一次
            </button>
          </div>
        )}
        {look && !soldOut && look.state === 'waiting' && (
          <div data-testid="room-waiting">
            <p className="text-sm text-gray-500">你的排位</p>
            <p className="my-1 font-mono text-5xl font-bold text-brand tabular-nums" data-testid="room-position">{look.position}</p>
            {now !== null && now < begin ? (
              <p className="text-sm text-gray-600" data-testid="room-prestart">
                开售前加入的排队者将在开售时<strong>随机排序</strong>，早到晚到机会相同
                <br />距开售 {wait(begin - now)}
              </p>
            ) : (
              <p className="text-sm text-gray-600" data-testid={look.allHeld ? 'room-all-held' : undefined}>
                前面还有 <span className="font-semibold tabular-nums" data-testid="room-ahead">{look.ahead}</span> 人 ·{' '}
                {look.allHeld ? (
                  // Every unit is held by someone admitted ahead: no estimate holds.
                  <>
                    名额已全部保留给排在你前面的人
                    <br />
                    有人放弃时按排位依次递补，售罄会立即通知你
                  </>
                ) : (
                  <>
                    预计等待 <span data-testid="room-estimate">{wait(look.estimateMs ?? 0)}</span>
                  </>
                )}
              </p>
            )}
            <Progress served={look.served} position={look.position ?? 0} />
            <div className="mt-4 border-t border-gray-100 pt-3">
              {solution ? (
                <p className="text-sm text-green-700" data-testid="room-gate-done">人机验证已完成，轮到你时直接抢购</p>
              ) : turnSoon ? (
                <>
                  <p className="mb-2 text-xs text-gray-500">排队期间自动完成人机验证，轮到你时无需再等</p>
                  <AltchaGate challengeUrl={`/api/seckill/${voucherId}/room/challenge`} onSolved={solvedWhileWaiting} />
                </>
              ) : (
                <p className="text-xs text-gray-500" data-testid="room-gate-later">快轮到你时会自动完成人机验证</p>
              )}
            </div>
            <p className="mt-3 text-xs text-gray-500">请勿关闭页面；刷新不会丢失排位</p>
          </div>
        )}
        {look && !soldOut && look.state === 'admitted' && (
          <div data-testid="room-admitted">
            <p className="text-lg font-semibold text-green-700">轮到你了！</p>
            {look.holdMs > 0 && grab.kind !== 'order' && (
              <p className="mt-1 text-sm text-gray-600" data-testid="room-hold">
                已为你保留 1 个名额 {Math.round(look.holdMs / 1000)} 秒，请尽快完成抢购
              </p>
            )}
            {!pass && asking && (
              <p className="mt-2 text-sm text-gray-600" data-testid="room-pass-loading">{solution ? '人机验证已完成，' : ''}正在获取抢购资格…</p>
            )}
            {!pass && !asking && !solution && (
              <>
                <p className="mb-3 mt-1 text-sm text-gray-600">请先完成人机验证（自动进行，约 1 秒）</p>
                <AltchaGate challengeUrl={`/api/seckill/${voucherId}/room/challenge`} onSolved={solvedOnTurn} />
              </>
            )}
            {!pass && passError && (
              <p className="mt-2 text-sm text-red-600" role="alert" data-testid="room-pass-error">
                {passError}
                <button type="button" className="ml-2 text-brand underline" onClick={() => void askToken(solution ?? undefined)}>重试</button>
              </p>
            )}
            {pass && (
              <button
                type="button"
                data-testid="room-grab"
                disabled={grab.kind === 'busy' || grab.kind === 'order'}
                onClick={() => void grabNow()}
                className="mt-3 w-full rounded-full bg-brand py-3 text-base font-medium text-white active:bg-brand-dark disabled:bg-gray-300"
              >
                {grab.kind === 'busy' ? '抢购中…' : grab.kind === 'order' ? '已抢到' : '立即抢购'}
              </button>
            )}
            {!pass && grab.kind === 'error' && (
              <button type="button" className="mt-3 text-sm text-brand underline" onClick={() => void askToken()} data-testid="room-retoken">重新获取抢购资格</button>
            )}
            <GrabLine grab={grab} />
          </div>
        )}
        {look && error && !ended && <p className="mt-2 text-xs text-amber-600" data-testid="room-stale">{error}，正在重试…</p>}
        {ended && look && <p className="mt-2 text-sm text-gray-500">{error}</p>}
      </div>
      <p className="mt-3 text-center text-xs text-gray-500">活动时间 {new Date(beginTime).toLocaleString('zh-CN', { hour12: false })} – {new Date(endTime).toLocaleString('zh-CN', { hour12: false })}</p>
    </section>
  );
}

function Progress({ served, position }: { served: number; position: number }) {
  const pct = position > 0 ? Math.min(100, Math.round((served / position) * 100)) : 0;
  return (
    <div className="mx-auto mt-3 h-2 w-full overflow-hidden rounded-full bg-gray-100" aria-hidden>
      <div className="h-full rounded-full bg-brand transition-all duration-700" style={{ width: `${pct}%` }} />
    </div>
  );
}

function GrabLine({ grab }: { grab: Grab }) {
  if (grab.kind === 'order') {
    return (
      <p role="status" className="mt-3 text-sm text-green-700" data-testid="room-result" data-state={grab.state}>
        {grab.state === 'created' ? '抢购成功！订单已生成' : grab.state === 'failed' ? '抢购成功，但下单失败，请联系客服' : '抢购成功，正在生成订单…'}
        {grab.state === 'created' && (
          <Link href={`/orders#order-${grab.orderId}`} className="ml-2 text-brand underline" data-testid="room-order-link">去支付</Link>
        )}
      </p>
    );
  }
  if (grab.kind === 'error') {
    return <p role="alert" className="mt-3 text-sm text-red-600" data-testid="room-result" data-state={grab.code}>{grab.text}</p>;
  }
  return null;
}

