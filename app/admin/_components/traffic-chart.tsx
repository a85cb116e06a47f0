/**
 * One shop's daily visitors over 30 days, as plain SVG in the stock chart's style: bars for UV
 * (HyperLogLog estimate of distinct visitors), a line for PV (every page view).
 */
import type { DailyTraffic } from '@/lib/uv/uv';

const W = 600;
const H = 140;
const PAD = { l: 36, r: 8, t: 8, b: 22 };

export function TrafficChart({ name, days }: { name: string; days: DailyTraffic[] }) {
  const max = Math.max(1, ...days.map((d) => Math.max(d.uv, d.pv)));
  const innerW = W - PAD.l - PAD.r;
  const innerH = H - PAD.t - PAD.b;
  const step = innerW / Math.max(days.length, 1);
  const y = (v: number) => PAD.t + innerH - (v / max) * innerH;
  const line = days.map((d, i) => `${i === 0 ? 'M' : 'L'}${(PAD.l + step * (i + 0.5)).toFixed(1)},${y(d.pv).toFixed(1)}`).join(' ');
  const totalUv = days.reduce((s, d) => s + d.uv, 0);
  const totalPv = days.reduce((s, d) => s + d.pv, 0);
  return (
    <figure data-testid="traffic-chart" data-uv={totalUv} data-pv={totalPv}>
      <svg viewBox={`0 0 ${W} ${H}`} className="h-36 w-full" role="img" aria-label={`${name} 近 30 天访客，UV 合计 ${totalUv}，PV 合计 ${totalPv}`}>
        <line x1={PAD.l} x2={W - PAD.r} y1={PAD.t + innerH} y2={PAD.t + innerH} stroke="#d1d5db" />
        <text x={PAD.l - 4} y={PAD.t + 8} textAnchor="end" fontSize="10" fill="#6b7280">{max}</text>
        <text x={PAD.l - 4} y={PAD.t + innerH} textAnchor="end" fontSize="10" fill="#6b7280">0</text>
        {days.map((d, i) => (
          <rect key={d.date} x={PAD.l + step * i + step * 0.15} width={Math.max(step * 0.7, 0.5)} y={y(d.uv)} height={PAD.t + innerH - y(d.uv)} fill="#ff6633" opacity="0.75">
            <title>{`${d.date} UV ${d.uv}，PV ${d.pv}`}</title>
          </rect>
        ))}
        <path d={line} fill="none" stroke="#2563eb" strokeWidth="1.5" />
        {days.map((d, i) => <circle key={d.date} cx={PAD.l + step * (i + 0.5)} cy={y(d.pv)} r="2" fill="#2563eb" />)}
        <text x={PAD.l} y={H - 6} fontSize="10" fill="#6b7280">{days[0]?.date.slice(5)}</text>
        <text x={W - PAD.r} y={H - 6} textAnchor="end" fontSize="10" fill="#6b7280">{days[days.length - 1]?.date.slice(5)}</text>
      </svg>
      <figcaption className="mt-1 flex gap-4 text-xs text-gray-600">
        <span><span className="mr-1 inline-block h-2 w-3 bg-brand" />每日 UV（去重访客，HyperLogLog 估算，误差约 0.81%）</span>
        <span><span className="mr-1 inline-block h-0.5 w-3 bg-blue-600 align-middle" />每日 PV（浏览次数）</span>
      </figcaption>
    </figure>
  );
}
