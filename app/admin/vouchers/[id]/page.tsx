import { forbidden } from 'next/navigation';
import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { fenToYuan, formatShanghai } from '@/lib/admin/format';
import { parseId } from '@/lib/http/parse';
import { getVoucher } from '@/lib/voucher/voucher.service';
import { consoleUser } from '@/app/admin/_lib/gate';
import { load } from '@/app/admin/_lib/load';
import { StateBadge } from '@/app/admin/_components/badges';
import { VoucherForm } from '@/app/admin/_components/voucher-form';
import { VoucherActions } from '@/app/admin/_components/voucher-actions';
import { ReservationPanel } from '@/app/admin/_components/reservation-panel';
import { reservationConsoleView } from '@/lib/seckill/reservation/console';

export const metadata: Metadata = { title: '优惠券详情' };

export default async function VoucherPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | undefined>> }) {
  const { id } = await params;
  const user = await consoleUser(`/admin/vouchers/${id}`);
  const res = await load(async () => getVoucher(db, redis, user, parseId(id)));
  if (res.forbidden) forbidden();
  const v = res.value;
  const preheatFailed = (await searchParams).preheat === 'failed';
  // getVoucher has checked this viewer's access to the voucher.
  const reservation = v.seckill ? await reservationConsoleView(db, v.id) : null;

  return (
    <section className="space-y-4">
      <Link href={`/admin/vouchers?shopId=${v.shopId}`} className="text-sm text-gray-600" data-testid="back-to-list">
        ← 返回列表
      </Link>
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold" data-testid="voucher-detail-title">
            {v.title}
          </h1>
          <p className="mt-1 text-sm text-gray-600">
            {v.shopName} · {v.type === 1 ? '秒杀券' : '普通券'} · ¥{fenToYuan(v.payValue)} / 面值 ¥{fenToYuan(v.actualValue)} · <StateBadge state={v.state} testId="voucher-detail-state" />
          </p>
        </div>
        <Link href={`/admin/vouchers/${v.id}/orders`} className="rounded border border-gray-300 bg-white px-4 py-2 text-sm" data-testid="open-orders">
          订单
        </Link>
        {v.seckill && (
          <Link href={`/admin/vouchers/${v.id}/live`} className="rounded bg-gray-900 px-4 py-2 text-sm text-white" data-testid="open-live">
            实时库存
          </Link>
        )}
      </div>
      {preheatFailed && (
        <p role="alert" className="rounded bg-amber-50 px-3 py-2 text-sm text-amber-800" data-testid="preheat-failed">
          优惠券已创建，但 Redis 预热失败：开抢前请点击“预热 / 修复”。
        </p>
      )}
      {v.seckill && (
        <dl className="grid grid-cols-2 gap-3 rounded-lg bg-white p-5 text-sm shadow-sm md:grid-cols-4" data-testid="voucher-stock-summary">
          <div>
            <dt className="text-gray-600">总库存</dt>
            <dd className="text-lg font-medium">{v.seckill.initialStock}</dd>
          </div>
          <div>
            <dt className="text-gray-600">数据库剩余</dt>
            <dd className="text-lg font-medium">{v.seckill.stock}</dd>
          </div>
          <div>
            <dt className="text-gray-600">Redis 剩余</dt>
            <dd className="text-lg font-medium" data-testid="voucher-detail-remaining">{v.remaining ?? '未预热'}</dd>
          </div>
          <div>
            <dt className="text-gray-600">活动时间（北京时间）</dt>
            <dd>
              {formatShanghai(v.seckill.beginTime, false)} 至 {formatShanghai(v.seckill.endTime, false)}
            </dd>
          </div>
        </dl>
      )}
      {reservation && <ReservationPanel view={reservation} />}
      <VoucherActions voucher={v} />
      <h2 className="pt-2 font-medium">编辑</h2>
      {v.state === 'taken_down' && <p className="text-sm text-gray-600">已下架的券不能再修改。</p>}
      <VoucherForm voucher={v} />
    </section>
  );
}
