import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { listAuditLog, listAuditQuery } from '@/lib/audit/audit';
import { formatShanghai } from '@/lib/admin/format';
import { consoleUser, pathWithQuery } from '@/app/admin/_lib/gate';

export const metadata: Metadata = { title: '操作日志' };

const ACTION: Record<string, string> = {
  'voucher.create': '创建优惠券',
  'voucher.update': '修改优惠券',
  'voucher.take-down': '下架优惠券',
  'voucher.preheat': '预热 / 修复',
  'voucher.add-stock': '追加库存',
  'shop.update': '修改店铺',
  'dead-letter.replay': '重放死信',
  'dead-letter.discard': '丢弃死信',
  'user.role-change': '修改用户角色',
  'auth.password-failed': '密码登录失败',
};

/** Only the keys whose value changed, so a long snapshot reads as "title: a → b". */
function changes(before: unknown, after: unknown): [string, string, string][] {
  const b = (before && typeof before === 'object' ? before : {}) as Record<string, unknown>;
  const a = (after && typeof after === 'object' ? after : {}) as Record<string, unknown>;
  const show = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));
  return [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k])).map((k) => [k, show(b[k]), show(a[k])]);
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const user = await consoleUser(pathWithQuery('/admin/audit', sp));
  const parsed = listAuditQuery.safeParse(Object.fromEntries(Object.entries(sp).filter(([, v]) => typeof v === 'string')));
  const q = parsed.success ? parsed.data : listAuditQuery.parse({});
  const { items, nextBefore } = await listAuditLog(db, user, q);
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">操作日志</h1>
      {items.length === 0 ? (
        <p className="rounded-lg bg-white p-10 text-center text-gray-600 shadow-sm" data-testid="audit-empty">
          暂无操作记录
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg bg-white shadow-sm">
          <table className="w-full min-w-[760px] text-left text-sm" data-testid="audit-table">
            <thead className="border-b bg-gray-50 text-gray-600">
              <tr>
                <th className="px-3 py-2">时间（北京时间）</th>
                <th className="px-3 py-2">操作人</th>
                <th className="px-3 py-2">操作</th>
                <th className="px-3 py-2">对象</th>
                <th className="px-3 py-2">变更（之前 → 之后）</th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.id} className="border-b align-top last:border-0" data-testid={`audit-row-${a.id}`}>
                  <td className="whitespace-nowrap px-3 py-2 text-xs">{formatShanghai(a.at)}</td>
                  <td className="px-3 py-2">{a.actorName ?? `用户 ${a.actorId}`}</td>
                  <td className="px-3 py-2" data-testid={`audit-action-${a.id}`}>
                    {ACTION[a.action] ?? a.action}
                  </td>
                  <td className="px-3 py-2 text-xs">
                    {a.targetType === 'voucher' ? (
                      <Link href={`/admin/vouchers/${a.targetId}`} className="text-brand">
                        优惠券 {a.targetId}
                      </Link>
                    ) : (
                      `${a.targetType} ${a.targetId}`
                    )}
                  </td>
                  <td className="px-3 py-2 text-xs">
                    <ul className="space-y-0.5">
                      {changes(a.before, a.after).map(([k, b, af]) => (
                        <li key={k} className="break-all">
                          <span className="text-gray-600">{k}</span>：<span className="text-red-700 line-through decoration-red-300">{b}</span> → <span className="text-green-700">{af}</span>
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {nextBefore && (
        <Link href={`/admin/audit?before=${nextBefore}`} className="text-sm text-brand" data-testid="audit-more">
          更早的记录
        </Link>
      )}
    </section>
  );
}
