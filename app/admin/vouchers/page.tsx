import { forbidden } from 'next/navigation';
import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { listManagedShops } from '@/lib/access/access';
import { fenToYuan, formatShanghai } from '@/lib/admin/format';
import { listVouchersQuery, voucherStates } from '@/lib/voucher/voucher.schema';
import { listVouchers } from '@/lib/voucher/voucher.service';
import { consoleUser, pathWithQuery } from '@/app/admin/_lib/gate';
import { load } from '@/app/admin/_lib/load';
import { StateBadge, STATE_LABEL } from '@/app/admin/_components/badges';
import { ShopFilter } from '@/app/admin/_components/shop-filter';

export const metadata: Metadata = { title: '优惠券' };

type Search = Record<string, string | string[] | undefined>;

export default async function VouchersPage({ searchParams }: { searchParams: Promise<Search> }) {
  const sp = await searchParams;
  const user = await consoleUser(pathWithQuery('/admin/vouchers', sp));
  const parsed = listVouchersQuery.safeParse(Object.fromEntries(Object.entries(sp).filter(([, v]) => typeof v === 'string')));
  const q = parsed.success ? parsed.data : listVouchersQuery.parse({});
  const res = await load(async () => ({ shops: await listManagedShops(db, user), page: await listVouchers(db, redis, user, q) }));
  if (res.forbidden) forbidden();
  const { shops, page } = res.value;

  const link = (over: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    const merged = { shopId: q.shopId, state: q.state, ...over };
    for (const [k, v] of Object.entries(merged)) if (v) params.set(k, v);
    return `/admin/vouchers${params.size ? `?${params}` : ''}`;
  };
  const tab = (active: boolean) => `rounded px-3 py-1.5 text-sm ${active ? 'bg-gray-900 text-white' : 'bg-white text-gray-700 hover:bg-gray-50'}`;

  return (
    <section>
      <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-xl font-semibold">优惠券</h1>
        <Link href={q.shopId ? `/admin/vouchers/new?shopId=${q.shopId}` : '/admin/vouchers/new'} className="rounded bg-brand px-4 py-2 text-sm text-white" data-testid="voucher-new">
          新建优惠券
        </Link>
      </div>
      <div className="mb-4 flex flex-wrap items-center gap-2">
        <ShopFilter shops={shops} shopId={q.shopId} state={q.state} />
        <Link href={link({ state: undefined, page: undefined })} className={tab(!q.state)} data-testid="filter-state-all">
          全部
        </Link>
        {voucherStates.map((s) => (
          <Link key={s} href={link({ state: s, page: undefined })} className={tab(q.state === s)} data-testid={`filter-state-${s}`}>
            {STATE_LABEL[s]}
          </Link>
        ))}
      </div>

      {page.items.length === 0 ? (
        <p className="rounded-lg bg-white p-10 text-center text-gray-600 shadow-sm" data-testid="voucher-empty">
          没有符合条件的优惠券
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg bg-white shadow-sm">
          <table className="w-full min-w-[760px] text-left text-sm" data-testid="voucher-table">
            <thead className="border-b bg-gray-50 text-gray-600">
              <tr>
                <th className="px-3 py-2">标题</th>
                <th className="px-3 py-2">店铺</th>
                <th className="px-3 py-2">售价 / 面值</th>
                <th className="px-3 py-2">库存</th>
                <th className="px-3 py-2">活动时间（北京时间）</th>
                <th className="px-3 py-2">状态</th>
                <th className="px-3 py-2">操作</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((v) => (
                <tr key={v.id} className="border-b last:border-0" data-testid={`voucher-row-${v.id}`}>
                  <td className="max-w-56 px-3 py-2">
                    <Link href={`/admin/vouchers/${v.id}`} className="font-medium text-gray-900 hover:text-brand" data-testid={`voucher-link-${v.id}`}>
                      {v.title}
                    </Link>
                    <div className="text-xs text-gray-600">{v.type === 1 ? '秒杀券' : '普通券'}</div>
                  </td>
                  <td className="px-3 py-2 text-gray-600">{v.shopName}</td>
                  <td className="px-3 py-2">
                    ¥{fenToYuan(v.payValue)} / ¥{fenToYuan(v.actualValue)}
                  </td>
                  <td className="px-3 py-2">
                    {v.seckill ? (
                      <>
                        <span>
                          库存 {v.seckill.stock} / {v.seckill.initialStock}
                        </span>
                        {v.state === 'live' && (
                          <div className="text-xs text-green-700" data-testid={`voucher-remaining-${v.id}`}>
                            实时剩余 {v.remaining ?? '未预热'}
                          </div>
                        )}
                      </>
                    ) : (
                      <span className="text-gray-600">不限</span>
                    )}
                  </td>
                  <td className="px-3 py-2 text-xs text-gray-600">
                    {v.seckill ? (
                      <>
                        {formatShanghai(v.seckill.beginTime, false)}
                        <br />至 {formatShanghai(v.seckill.endTime, false)}
                      </>
                    ) : (
                      '长期有效'
                    )}
                  </td>
                  <td className="px-3 py-2">
                    <StateBadge state={v.state} testId={`voucher-state-${v.id}`} />
                  </td>
                  <td className="space-x-3 whitespace-nowrap px-3 py-2">
                    <Link href={`/admin/vouchers/${v.id}`} className="text-brand" data-testid={`voucher-detail-${v.id}`}>
                      详情
                    </Link>
                    {v.seckill && (
                      <Link href={`/admin/vouchers/${v.id}/live`} className="text-brand" data-testid={`voucher-live-${v.id}`}>
                        实时库存
                      </Link>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="mt-4 flex justify-between text-sm">
        {q.page > 1 ? (
          <Link href={link({ page: String(q.page - 1) })} className="text-brand" data-testid="page-prev">
            上一页
          </Link>
        ) : (
          <span />
        )}
        {page.hasMore && (
          <Link href={link({ page: String(q.page + 1) })} className="text-brand" data-testid="page-next">
            下一页
          </Link>
        )}
      </div>
    </section>
  );
}
