'use client';

/** Dead letters with replay / discard per row and replay-all, each behind a confirmation. */
import { api } from '@/lib/web/client-api';
import { useAction } from '@/app/admin/_components/use-action';
import { formatShanghai } from '@/lib/admin/format';
import { explainDeadLetterReason } from '@/lib/admin/dead-letter-reason';
import type { DeadLetterView } from '@/lib/admin/dead-letters';
import { ConfirmButton } from '@/app/admin/_components/confirm-button';

const STATUS = { dead: '待处理', replayed: '已重放', discarded: '已丢弃' } as const;

export function DeadLetterTable({ items, waiting }: { items: DeadLetterView[]; waiting: number }) {
  const { result, act } = useAction();


  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-3">
        <span className="text-sm text-gray-600" data-testid="dead-waiting">
          待处理 {waiting} 条
        </span>
        <ConfirmButton
          label="全部重放"
          title="重放全部死信？"
          message={`将把 ${waiting} 条待处理的订单消息重新投递到订单队列。重放是幂等的：已落库的订单不会重复创建。`}
          disabled={waiting === 0}
          testId="dead-replay-all"
          onConfirm={act(async () => {
            const r = await api<{ replayed: number; skipped: number; remaining: number }>('/api/admin/dead-letters/replay-all', { method: 'POST' });
            return `已重放 ${r.replayed} 条${r.skipped ? `，${r.skipped} 条无法解析（请丢弃）` : ''}${r.remaining ? `，仍有 ${r.remaining} 条待处理` : ''}`;
          })}
        />
      </div>
      {result && (
        <p role="status" className={`text-sm ${result.ok ? 'text-green-700' : 'text-red-600'}`} data-testid="dead-result">
          {result.text}
        </p>
      )}
      {items.length === 0 ? (
        <p className="rounded-lg bg-white p-10 text-center text-gray-600 shadow-sm" data-testid="dead-empty">
          没有死信
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg bg-white shadow-sm">
          <table className="w-full min-w-[820px] text-left text-sm" data-testid="dead-table">
            <thead className="border-b bg-gray-50 text-gray-600">
              <tr>
                <th className="px-3 py-2">时间（北京时间）</th>
                <th className="px-3 py-2">订单 / 券</th>
                <th className="px-3 py-2">原因</th>
                <th className="px-3 py-2">尝试次数</th>
                <th className="px-3 py-2">状态</th>
                <th className="px-3 py-2">操作</th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id} className="border-b align-top last:border-0" data-testid={`dead-row-${d.id}`}>
                  <td className="whitespace-nowrap px-3 py-2 text-xs">{formatShanghai(d.createTime)}</td>
                  <td className="px-3 py-2 text-xs">
                    <div>订单 {d.orderId ?? '（无法解析）'}</div>
                    <div className="text-gray-600">{d.voucherTitle ?? (d.voucherId ? `券 ${d.voucherId}` : '—')}</div>
                  </td>
                  <td className="max-w-72 break-words px-3 py-2 text-xs text-red-700" data-testid={`dead-reason-${d.id}`}>
                    <div>{explainDeadLetterReason(d.reason)}</div>
                    <div className="mt-1 text-gray-600">{d.reason}</div>
                  </td>
                  <td className="px-3 py-2" data-testid={`dead-attempts-${d.id}`}>
                    {d.attempts}
                  </td>
                  <td className="px-3 py-2" data-testid={`dead-status-${d.id}`}>
                    {STATUS[d.status]}
                  </td>
                  <td className="space-x-2 whitespace-nowrap px-3 py-2">
                    {d.status === 'dead' && (
                      <>
                        <ConfirmButton
                          label="重放"
                          title="重放这条订单消息？"
                          message={`订单 ${d.orderId ?? ''} 将重新投递到订单队列，由 worker 写入数据库。`}
                          disabled={!d.orderId}
                          testId={`dead-replay-${d.id}`}
                          onConfirm={act(async () => {
                            const r = await api<{ changed: boolean }>(`/api/admin/dead-letters/${d.id}/replay`, { method: 'POST' });
                            return r.changed ? '已重放' : '该死信已被处理过';
                          })}
                        />
                        <ConfirmButton
                          label="丢弃"
                          title="丢弃这条订单消息？"
                          message="丢弃后该订单不会写入数据库，顾客占用的库存会退回 Redis 继续售卖。此操作不可撤销。"
                          confirmLabel="丢弃"
                          danger
                          testId={`dead-discard-${d.id}`}
                          onConfirm={act(async () => {
                            const r = await api<{ changed: boolean }>(`/api/admin/dead-letters/${d.id}/discard`, { method: 'POST' });
                            return r.changed ? '已丢弃' : '该死信已被处理过';
                          })}
                        />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
