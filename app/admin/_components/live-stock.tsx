'use client';

/**
 * The live stock view: numbers, the consistency badge and the chart, refreshed by server-sent
 * events about once a second without reloading. EventSource reconnects on its own; the page says
 * so while it does, and a 401/403 on reconnect (session gone) stops it with a message.
 */
import { useEffect, useRef, useState } from 'react';
import type { LiveStock } from '@/lib/admin/live-stock';
import type { SaleSeries } from '@/lib/admin/sale-series';
import { formatShanghai } from '@/lib/admin/format';
import { StockChart } from '@/app/admin/_components/stock-chart';

const BADGE = {
  consistent: { label: '一致', cls: 'bg-green-700' },
  draining: { label: '处理中', cls: 'bg-amber-500' },
  inconsistent: { label: '不一致', cls: 'bg-red-600' },
} as const;

type Conn = 'connecting' | 'open' | 'retrying' | 'closed';

export function LiveStockView({ voucherId, initial }: { voucherId: string; initial: LiveStock }) {
  const [stock, setStock] = useState<LiveStock>(initial);
  const [series, setSeries] = useState<SaleSeries | null>(null);
  const [conn, setConn] = useState<Conn>('connecting');
  const [tickError, setTickError] = useState<string | null>(null);
  // Admitted per second, from the serving counter of two ticks in a row (null until there are two).
  const lastAdmitted = useRef<{ admitted: number; at: number } | null>(null);
  const [admitRate, setAdmitRate] = useState<number | null>(null);

  useEffect(() => {
    const es = new EventSource(`/api/admin/vouchers/${voucherId}/stock/stream`);
    es.onopen = () => setConn('open');
    es.addEventListener('stock', (e) => {
      const data = JSON.parse((e as MessageEvent<string>).data) as { stock: LiveStock; series: SaleSeries };
      setStock(data.stock);
      setSeries(data.series);
      const room = data.stock.sale?.room;
      const at = Date.parse(data.stock.at);
      const prev = lastAdmitted.current;
      if (room && prev && at > prev.at) setAdmitRate(Math.max(0, Math.round(((room.admitted - prev.admitted) * 1000) / (at - prev.at))));
      else setAdmitRate(null); // no room this tick, or the first tick since: no rate until the next
      lastAdmitted.current = room ? { admitted: room.admitted, at } : null;
      setTickError(null);
    });
    es.addEventListener('tick-error', (e) => setTickError((JSON.parse((e as MessageEvent<string>).data) as { message: string }).message));
    es.onerror = () => setConn(es.readyState === EventSource.CLOSED ? 'closed' : 'retrying');
    return () => es.close();
  }, [voucherId]);

  const n = stock.numbers;
  const badge = BADGE[stock.consistency.status];
  const cells: [string, string, number | null, string?][] = [
    ['initial', '初始库存（Redis）', n.initial],
    ['redis-remaining', 'Redis 剩余', n.redisRemaining],
    ['buyers', '买家数', n.buyers],
    ['pending', '待落库', n.pending, '已抢到、订单尚未写入 MySQL'],
    ['db-remaining', '数据库剩余', n.dbRemaining],
    ['db-orders', '数据库订单（有效）', n.dbOrders, '待支付、已支付、已使用、退款中'],
    ['paid', '已支付', n.paid, '含已使用'],
    ['cancelled', '已取消', n.cancelled, '买家取消或超时未支付'],
    ['returned', '已退回库存', n.returned, '取消、退款后放回销售的库存'],
    ['queue', '队列积压', n.queueDepth, '订单队列中等待处理的消息（全部券）'],
    ['dead-letters', '死信', n.deadLetters],
    ['sale-memory', '本券 Redis 内存（KB）', n.saleMemoryBytes === null ? null : Math.ceil(n.saleMemoryBytes / 1024), '活动结束且订单全部落库后，这些数据会在保留期后自动清理'],
    ['redis-memory', 'Redis 总内存（MB）', n.redisUsedBytes === null ? null : Math.round(n.redisUsedBytes / 1024 / 102.4) / 10],
  ];
  const s = stock.sale;
  // Per-sale numbers (docs/fair-sale.md#per-sale-numbers); older stream payloads may lack them.
  const saleCells: [string, string, number | null, string?][] = s
    ? [
        ['grabs-accepted', '抢购成功', s.grabsAccepted, '各 Web 进程累计（进程重启后从 0 开始）'],
        ['grabs-refused', '抢购被拒', s.grabsRefused, '已售罄、已抢过、限流、未预约等，含进程内记忆直接拒绝的'],
        ['reserved', '预约人数', s.reserved, '仅预约抢购的活动'],
        ['waiting', '候补人数', s.waiting, '售罄后加入候补、尚未轮到的用户'],
        ['offers-open', '候补名额（待购买）', s.offersOpen, '退回的库存已留给候补用户，尚未购买或过期'],
        ['offers-claimed', '候补已购买', s.claimed],
        ['offers-expired', '候补已过期', s.expired, '过期后名额转给下一位或放回库存'],
      ]
    : [];
  const r = s?.room;
  const roomCells: [string, string, number | null, string?][] = r
    ? [
        ['room-waiting', '排队中', r.tickets - r.admitted, '已领排队号、尚未轮到的人数'],
        ['room-admitted', '已放行', r.admitted, '已轮到、可以抢购的排队号'],
        ['room-rate', '放行速率（人/秒）', admitRate, '按相邻两次刷新计算；随抢购链路的实测能力自动调整'],
        ['room-tickets', '排队号总数', r.tickets],
        ['gate-passed', '通过人机验证（人）', r.passed, '排队或候补时完成工作量证明的用户'],
        ['gate-solved', '验证成功（次）', r.solved, '排队时提交的验证，各 Web 进程累计（进程重启后从 0 开始）'],
        ['gate-failed', '验证失败（次）', r.failed, '答案错误、重复使用或未提交；脚本刷单多在这里'],
      ]
    : [];

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-3 rounded-lg bg-white p-5 shadow-sm">
        <span className={`rounded-full px-4 py-1.5 text-base font-semibold text-white ${badge.cls}`} data-testid="live-badge" data-status={stock.consistency.status}>
          {badge.label}
        </span>
        <ul className="flex-1 space-y-0.5 text-sm text-gray-600" data-testid="live-differences">
          {stock.consistency.differences.length === 0 ? (
            <li>实时库存与数据库一致（库存、买家、订单三项核对全部通过）</li>
          ) : (
            stock.consistency.differences.map((d, i) => (
              <li key={i} data-rule={d.rule}>
                {d.message}
              </li>
            ))
          )}
        </ul>
        <span className="text-xs text-gray-600" data-testid="live-conn" data-conn={conn}>
          {conn === 'open' ? '实时' : conn === 'connecting' ? '连接中…' : conn === 'retrying' ? '连接中断，重连中…' : '已断开，请刷新页面'} · 更新于 {formatShanghai(stock.at)}
        </span>
      </div>
      {tickError && (
        <p role="alert" className="rounded bg-amber-50 px-3 py-2 text-sm text-amber-800" data-testid="live-tick-error">
          {tickError}
        </p>
      )}
      <NumberCells cells={cells} />
      {saleCells.length > 0 && (
        <>
          <h2 className="pt-2 font-medium">抢购、预约与候补</h2>
          <NumberCells cells={saleCells} />
        </>
      )}
      {roomCells.length > 0 && (
        <>
          <h2 className="pt-2 font-medium">排队与人机验证</h2>
          <NumberCells cells={roomCells} />
        </>
      )}
      {n.buckets && (
        <div className="rounded-lg bg-white p-5 shadow-sm" data-testid="live-buckets">
          <h2 className="mb-2 font-medium">
            库存分桶（{n.buckets.length} 桶{n.inFlight ? `，调拨中 ${n.inFlight}` : ''}）
          </h2>
          <table className="w-full text-sm tabular-nums">
            <thead className="text-left text-xs text-gray-600">
              <tr>
                <th>桶</th>
                <th>份额</th>
                <th>剩余</th>
                <th>买家</th>
                <th>待落库</th>
              </tr>
            </thead>
            <tbody>
              {n.buckets.map((b, i) => (
                <tr key={i} data-testid={`live-bucket-${i}`}>
                  <td>{i}</td>
                  <td>{b.initial}</td>
                  <td>{b.remaining}</td>
                  <td>{b.buyers}</td>
                  <td>{b.pending}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="text-xs text-gray-600">
        不变量：Redis 剩余 + 买家 + 候补名额 = 初始库存；数据库剩余 + 数据库订单 = 初始库存（数据库 {n.dbInitial}）；买家 = 数据库订单 + 待落库。
      </p>
      <div className="rounded-lg bg-white p-5 shadow-sm">
        <h2 className="mb-2 font-medium">每秒抢购与落库</h2>
        <StockChart series={series} />
      </div>
    </div>
  );
}

/** A grid of labelled numbers (id → data-testid `live-<id>`; the hint is the cell's title). */
function NumberCells({ cells }: { cells: [string, string, number | null, string?][] }) {
  return (
    <dl className="grid grid-cols-2 gap-3 md:grid-cols-4">
      {cells.map(([id, label, value, hint]) => (
        <div key={id} className="rounded-lg bg-white p-4 shadow-sm" title={hint}>
          <dt className="text-xs text-gray-600">{label}</dt>
          <dd className="mt-1 text-2xl font-semibold tabular-nums" data-testid={`live-${id}`}>
            {value ?? '—'}
          </dd>
        </div>
      ))}
    </dl>
  );
}
