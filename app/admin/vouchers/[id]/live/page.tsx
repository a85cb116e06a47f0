import { forbidden } from 'next/navigation';
import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { formatShanghai } from '@/lib/admin/format';
import { getLiveStock } from '@/lib/admin/live-stock';
import { parseId } from '@/lib/http/parse';
import { consoleUser } from '@/app/admin/_lib/gate';
import { load } from '@/app/admin/_lib/load';
import { StateBadge } from '@/app/admin/_components/badges';
import { LiveStockView } from '@/app/admin/_components/live-stock';
import { GrabRatePanel } from '@/app/admin/_components/grab-rate';

export const metadata: Metadata = { title: '实时库存' };
export const dynamic = 'force-dynamic';

export default async function LivePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await consoleUser(`/admin/vouchers/${id}/live`);
  const res = await load(async () => getLiveStock(db, redis, user, parseId(id)));
  if (res.forbidden) forbidden();
  const s = res.value;
  return (
    <section className="space-y-4">
      <Link href={`/admin/vouchers/${s.voucherId}`} className="text-sm text-gray-600" data-testid="back-to-voucher">
        ← 返回详情
      </Link>
      <div>
        <h1 className="text-xl font-semibold" data-testid="live-title">
          实时库存 · {s.title}
        </h1>
        <p className="mt-1 text-sm text-gray-600">
          <StateBadge state={s.state} /> {formatShanghai(s.beginTime, false)} 至 {formatShanghai(s.endTime, false)}（北京时间）
        </p>
      </div>
      <LiveStockView voucherId={s.voucherId} initial={s} />
      {/* Every shop's grab traffic: admins only (the API refuses others too). */}
      {user.role === 'admin' && <GrabRatePanel />}
    </section>
  );
}
