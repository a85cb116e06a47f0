import type { Metadata } from 'next';
import Link from 'next/link';
import { forbidden } from 'next/navigation';
import { db } from '@/lib/db/client';
import { fenToYuan, formatShanghai } from '@/lib/admin/format';
import { owedPayments, owedPaymentsQuery } from '@/lib/admin/payments';
import { consoleUser, pathWithQuery } from '@/app/admin/_lib/gate';

export const metadata: Metadata = { title: '待对账' };

const KIND = { charge: '扣款', refund: '退款' } as const;
const STATUS: Record<string, string> = { intent: '已发起，结果未知', pending: '等待渠道通知', charged: '已扣款，未入账' };

/** Admin only: money the books still owe; the worker's reconciler retries each row until the provider agrees. */
export default async function PaymentsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const user = await consoleUser(pathWithQuery('/admin/payments', sp));
  if (user.role !== 'admin') forbidden();
  const parsed = owedPaymentsQuery.safeParse(Object.fromEntries(Object.entries(sp).filter(([, v]) => typeof v === 'string')));
  const q = parsed.success ? parsed.data : owedPaymentsQuery.parse({});
  const { summary, items, hasMore } = await owedPayments(db, user, q);
  return (
    <section className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">待对账</h1>
        <p className="mt-1 text-sm text-gray-600">支付渠道尚未确认的退款、结果未入账的扣款。后台对账任务会自动重试，直到渠道确认；长时间停留的条目请人工排查。</p>
      </div>
      <div className="grid gap-3 sm:grid-cols-2">
        <div className="rounded-lg bg-white p-4 shadow-sm" data-testid="owed-refunds">
          <p className="text-sm text-gray-600">待退款</p>
          <p className="text-lg font-semibold">
            {summary.refunds.count} 笔 · ¥{fenToYuan(summary.refunds.amount)}
          </p>
        </div>
        <div className="rounded-lg bg-white p-4 shadow-sm" data-testid="owed-charges">
          <p className="text-sm text-gray-600">未入账扣款</p>
          <p className="text-lg font-semibold">
            {summary.charges.count} 笔 · ¥{fenToYuan(summary.charges.amount)}
          </p>
        </div>
      </div>
      {items.length === 0 ? (
        <p className="rounded-lg bg-white p-10 text-center text-gray-600 shadow-sm" data-testid="owed-empty">
          账已对平
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg bg-white shadow-sm">
          <table className="w-full min-w-[820px] text-left text-sm" data-testid="owed-table">
            <thead className="border-b bg-gray-50 text-gray-600">
              <tr>
                <th className="px-3 py-2">发起时间（北京时间）</th>
                <th className="px-3 py-2">类型</th>
                <th className="px-3 py-2">订单</th>
                <th className="px-3 py-2">金额</th>
                <th className="px-3 py-2">状态</th>
                <th className="px-3 py-2">失败次数 / 最近错误</th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.id} className="border-b align-top last:border-0" data-testid={`owed-row-${a.id}`}>
                  <td className="whitespace-nowrap px-3 py-2 text-xs">{formatShanghai(a.createTime)}</td>
                  <td className="px-3 py-2">{KIND[a.kind]}</td>
                  <td className="px-3 py-2 font-mono text-xs">
                    {a.orderId}
                    {a.txnId && <div className="text-gray-600">{a.txnId}</div>}
                  </td>
                  <td className="px-3 py-2">¥{fenToYuan(a.amount)}</td>
                  <td className="px-3 py-2">{STATUS[a.status] ?? a.status}</td>
                  <td className="px-3 py-2 text-xs">
                    {a.tries}
                    {a.lastError && <div className="break-all text-red-600">{a.lastError}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="flex justify-between text-sm">
        {q.page > 1 ? <Link href={`/admin/payments?page=${q.page - 1}`} className="text-brand">上一页</Link> : <span />}
        {hasMore && <Link href={`/admin/payments?page=${q.page + 1}`} className="text-brand">下一页</Link>}
      </div>
    </section>
  );
}
