'use client';

/**
 * Grab requests per second by outcome (all vouchers, every web process), polled every 2 s from
 * /api/admin/hot/grab-rate, which reads the web server's metrics port. Horizontal bars, one per
 * outcome, plus how many refusals were answered from the per-process memory without Redis, and the
 * hot server's admission limit now (adaptive or fixed, docs/hot-server.md#adaptive-admission). Without
 * a metrics port the panel says so instead of showing zeros.
 */
import { useEffect, useState } from 'react';
import type { GrabRate } from '@/lib/hot/grab-rate';

const OUTCOMES: [string, string, string][] = [
  ['accepted', '抢到', 'bg-green-700'],
  ['sold_out', '已售罄', 'bg-brand'],
  ['already_bought', '已抢过', 'bg-amber-500'],
  ['not_started', '未开始', 'bg-sky-500'],
  ['ended', '已结束', 'bg-slate-500'],
  ['limited', '限流', 'bg-purple-500'],
  ['shed', '过载拒绝（503）', 'bg-red-400'],
  ['error', '错误（5xx）', 'bg-red-700'],
  ['unauthenticated', '未登录（401）', 'bg-gray-400'],
  ['refused', '其他拒绝（4xx）', 'bg-gray-300'],
];

export function GrabRatePanel() {
  const [rate, setRate] = useState<GrabRate | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    const tick = async () => {
      try {
        const res = await fetch('/api/admin/hot/grab-rate', { cache: 'no-store' });
        const body = (await res.json()) as { data?: GrabRate; error?: { message: string } };
        if (stopped) return;
        if (body.data) {
          setRate(body.data);
          setFailed(null);
        } else setFailed(body.error?.message ?? `HTTP ${res.status}`);
      } catch {
        if (!stopped) setFailed('网络错误，稍后自动重试');
      }
    };
    void tick();
    const t = setInterval(() => void tick(), 2000);
    return () => {
      stopped = true;
      clearInterval(t);
    };
  }, []);

  return (
    <div className="rounded-lg bg-white p-5 shadow-sm" data-testid="grab-rate">
      <h2 className="mb-1 font-medium">抢购请求速率（按结果，全部秒杀券）</h2>
      {failed && (
        <p role="alert" className="text-sm text-amber-700" data-testid="grab-rate-error">
          {failed}
        </p>
      )}
      {!rate ? (
        <p className="text-sm text-gray-600">读取中…</p>
      ) : !rate.enabled ? (
        <p className="text-sm text-gray-600" data-testid="grab-rate-off">
          {rate.reason}
        </p>
      ) : 'unavailable' in rate ? (
        <p className="text-sm text-amber-700" data-testid="grab-rate-unavailable">
          {rate.unavailable}
        </p>
      ) : (
        <Bars rate={rate} />
      )}
    </div>
  );
}

function Bars({ rate }: { rate: Extract<GrabRate, { perSecond: Record<string, number> }> }) {
  const total = OUTCOMES.reduce((s, [k]) => s + (rate.perSecond[k] ?? 0), 0);
  const max = Math.max(1, ...OUTCOMES.map(([k]) => rate.perSecond[k] ?? 0));
  const refusals = total - (rate.perSecond.accepted ?? 0);
  return (
    <>
      <p className="mb-3 text-sm text-gray-600">
        最近 {rate.windowSeconds} 秒：共 <span className="font-semibold tabular-nums text-gray-800" data-testid="grab-rate-total">{fmt(total)}</span> 次/秒；
        其中 <span className="font-semibold tabular-nums text-gray-800" data-testid="grab-rate-memory">{fmt(rate.fromMemoryPerSecond)}</span> 次/秒的拒绝由进程内记忆直接回答、未访问 Redis
        {refusals > 0 ? `（占拒绝的 ${Math.round((rate.fromMemoryPerSecond / refusals) * 100)}%）` : ''}。
      </p>
      {rate.admission && rate.admission.processes > 0 && (
        <p className="mb-3 text-sm text-gray-600" data-testid="grab-rate-admission" data-limit={rate.admission.limit} data-mode={rate.admission.mode}>
          准入上限（同时处理的抢购请求，{MODES[rate.admission.mode] ?? rate.admission.mode}，{rate.admission.processes} 个进程合计）：
          <span className="font-semibold tabular-nums text-gray-800">{rate.admission.limit}</span>，在途 <span className="tabular-nums">{rate.admission.inFlight}</span>
          {rate.admission.ratePerSecond > 0 ? `；按当前上限约可接纳 ${fmt(rate.admission.ratePerSecond)} 次/秒` : ''}；超出即 503。
        </p>
      )}
      <ul className="space-y-1.5">
        {OUTCOMES.map(([k, label, cls]) => {
          const v = rate.perSecond[k] ?? 0;
          return (
            <li key={k} className="flex items-center gap-3 text-sm" data-outcome={k} data-rate={v}>
              <span className="w-32 shrink-0 text-gray-600">{label}</span>
              <span className="h-3 flex-1 rounded bg-gray-100">
                <span className={`block h-3 rounded ${cls}`} style={{ width: `${(v / max) * 100}%` }} />
              </span>
              <span className="w-24 shrink-0 text-right tabular-nums">{fmt(v)} /s</span>
              <span className="w-24 shrink-0 text-right text-xs tabular-nums text-gray-600" title="Web 服务器启动以来的累计">
                累计 {rate.totals[k] ?? 0}
              </span>
            </li>
          );
        })}
      </ul>
    </>
  );
}

const MODES: Record<string, string> = { adaptive: '自适应', fixed: '固定', mixed: '各进程模式不一' };

function fmt(v: number): string {
  return v >= 100 ? String(Math.round(v)) : v.toFixed(1);
}
