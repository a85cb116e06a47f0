/**
 * Grabs and persisted orders per second over the sale, as plain SVG: bars for grabs accepted by
 * Redis, a line for the orders of those grabs already in MySQL (it catches up as the queue drains).
 */
import { formatShanghai } from '@/lib/admin/format';
import type { SaleSeries } from '@/lib/admin/sale-series';

const W = 600;
const H = 160;
const PAD = { l: 36, r: 8, t: 8, b: 22 };

export function StockChart({ series }: { series: SaleSeries | null }) {
  if (!series || series.points.length === 0) {
    return (
      <p className="py-10 text-center text-sm text-gray-600" data-testid="chart-empty">
        还没有抢购数据
      </p>
    );
  }
  const pts = series.points;
  const max = Math.max(1, ...pts.map((p) => p.grabs));
  const innerW = W - PAD.l - PAD.r;
  const innerH = H - PAD.t - PAD.b;
  const step = innerW / pts.length;
  const y = (v: number) => PAD.t + innerH - (v / max) * innerH;
  const line = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${(PAD.l + step * (i + 0.5)).toFixed(1)},${y(p.persisted).toFixed(1)}`).join(' ');
  const totalGrabs = Math.round(pts.reduce((s, p) => s + p.grabs, 0) * series.bucketSeconds);
  const totalPersisted = Math.round(pts.reduce((s, p) => s + p.persisted, 0) * series.bucketSeconds);

  return (
    <figure data-testid="stock-chart" data-grabs={totalGrabs} data-persisted={totalPersisted}>
      <svg viewBox={`0 0 ${W} ${H}`} className="h-44 w-full" role="img" aria-label={`每秒抢购与落库订单，共抢购 ${totalGrabs}，已落库 ${totalPersisted}`}>
        <line x1={PAD.l} x2={W - PAD.r} y1={PAD.t + innerH} y2={PAD.t + innerH} stroke="#d1d5db" />
        <text x={PAD.l - 4} y={PAD.t + 8} textAnchor="end" fontSize="10" fill="#6b7280">
          {max}
        </text>
        <text x={PAD.l - 4} y={PAD.t + innerH} textAnchor="end" fontSize="10" fill="#6b7280">
          0
        </text>
        {pts.map((p, i) => (
          <rect key={p.t} x={PAD.l + step * i + step * 0.1} width={Math.max(step * 0.8, 0.5)} y={y(p.grabs)} height={PAD.t + innerH - y(p.grabs)} fill="#ff6633" opacity="0.75">
            <title>{`${formatShanghai(p.t)} 抢购 ${p.grabs}/秒，已落库 ${p.persisted}/秒`}</title>
          </rect>
        ))}
        <path d={line} fill="none" stroke="#059669" strokeWidth="2" />
        {/* Dots too, so a short sale (one or two buckets) still shows its persisted line. */}
        {pts.length <= 60 && pts.map((p, i) => <circle key={p.t} cx={PAD.l + step * (i + 0.5)} cy={y(p.persisted)} r="3" fill="#059669" />)}
        <text x={PAD.l} y={H - 6} fontSize="10" fill="#6b7280">
          {formatShanghai(pts[0]!.t)}
        </text>
        <text x={W - PAD.r} y={H - 6} textAnchor="end" fontSize="10" fill="#6b7280">
          {formatShanghai(pts[pts.length - 1]!.t)}
        </text>
      </svg>
      <figcaption className="mt-1 flex gap-4 text-xs text-gray-600">
        <span>
          <span className="mr-1 inline-block h-2 w-3 bg-brand" />
          每秒抢购（Redis 受理）
        </span>
        <span>
          <span className="mr-1 inline-block h-0.5 w-3 bg-emerald-600 align-middle" />
          其中已落库（MySQL）
        </span>
        <span>{series.bucketSeconds > 1 ? `每格 ${series.bucketSeconds} 秒，取平均` : '每格 1 秒'}</span>
      </figcaption>
    </figure>
  );
}
