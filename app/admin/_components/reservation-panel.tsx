/**
 * A reservation-only sale on its console page (docs/fair-sale.md#the-console): reservations per
 * minute as bars, and for a draw the committed seed hash, then the seed, the numbers, whether the
 * published draw re-runs to the recorded winners, and the first winners.
 */
import { formatShanghai } from '@/lib/admin/format';
import type { ReservationConsoleView } from '@/lib/seckill/reservation/console';

export function ReservationPanel({ view }: { view: ReservationConsoleView }) {
  const max = Math.max(1, ...view.perMinute.map((m) => m.n));
  const d = view.draw;
  return (
    <section className="space-y-3 rounded-lg bg-white p-5 text-sm shadow-sm" data-testid="reservation-panel">
      <h2 className="font-medium">
        预约（{view.mode === 'draw' ? '抽签' : '预约用户先到先得'}） · <span data-testid="reservation-total">{view.reserved}</span> 人已预约
      </h2>
      <p className="text-gray-600">预约开始：{formatShanghai(view.reserveBegin, false)}，开抢时截止。</p>
      <div>
        <h3 className="mb-1 text-gray-600">每分钟预约数（北京时间）</h3>
        {view.perMinute.length === 0 ? (
          <p className="text-gray-600">还没有人预约</p>
        ) : (
          <ol className="max-h-64 space-y-0.5 overflow-y-auto" data-testid="reservation-per-minute">
            {view.perMinute.map((m) => (
              <li key={m.minute} className="flex items-center gap-2">
                <span className="w-36 shrink-0 font-mono text-xs text-gray-600">{formatShanghai(m.minute, false)}</span>
                <span className="h-3 rounded bg-amber-400" style={{ width: `${Math.max(2, (m.n / max) * 100)}%` }} />
                <span className="text-xs tabular-nums">{m.n}</span>
              </li>
            ))}
          </ol>
        )}
      </div>
      {d && (
        <div className="space-y-1" data-testid="draw-result">
          <h3 className="text-gray-600">抽签</h3>
          <p className="break-all font-mono text-xs">种子哈希（SHA-256，开放预约时公布）：{d.seedHash}</p>
          {d.drawnAt ? (
            <>
              <p className="break-all font-mono text-xs" data-testid="draw-seed">
                种子（抽签后公布）：{d.seed}
              </p>
              <p>
                {formatShanghai(d.drawnAt, false)} 抽签：{d.reserved} 人预约，<span data-testid="draw-winners">{d.winners}</span> 人中签 ·{' '}
                {d.verified ? <span className="text-green-700">按公布的种子重算结果一致</span> : <span className="text-red-600">重算结果不一致</span>}
              </p>
              <details>
                <summary className="cursor-pointer text-brand">中签用户（前 {d.winnerList.length} 位）</summary>
                <ul className="mt-1 grid grid-cols-2 gap-x-4 font-mono text-xs md:grid-cols-4" data-testid="draw-winner-list">
                  {d.winnerList.map((w) => (
                    <li key={w.userId}>
                      {w.userId} {w.nickName}
                    </li>
                  ))}
                </ul>
              </details>
            </>
          ) : (
            <p className="text-gray-600">开抢时自动抽签，中签人数 = min(库存, 预约人数)。</p>
          )}
        </div>
      )}
    </section>
  );
}
