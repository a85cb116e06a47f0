import type { Metadata } from 'next';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { trafficOfMyShops } from '@/lib/uv/console';
import { consoleUser } from '@/app/admin/_lib/gate';
import { TrafficChart } from '@/app/admin/_components/traffic-chart';

export const metadata: Metadata = { title: '访客' };
export const dynamic = 'force-dynamic';

export default async function TrafficPage() {
  const user = await consoleUser('/admin/traffic');
  const shops = await trafficOfMyShops(db, redis, user);
  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">店铺访客（近 30 天，北京时间）</h1>
      {shops.length === 0 && <p className="text-sm text-gray-600">没有可管理的店铺</p>}
      <div className="grid gap-4 lg:grid-cols-2">
        {shops.map((s) => {
          const today = s.days[s.days.length - 1];
          return (
            <section key={s.shopId} className="rounded-lg bg-white p-4 shadow-sm" data-testid="traffic-shop" data-shop-id={s.shopId}>
              <h2 className="flex items-baseline justify-between font-medium">
                {s.name}
                <span className="text-xs font-normal text-gray-600">今日 UV {today?.uv ?? 0} · PV {today?.pv ?? 0}</span>
              </h2>
              <TrafficChart name={s.name} days={s.days} />
            </section>
          );
        })}
      </div>
    </div>
  );
}
