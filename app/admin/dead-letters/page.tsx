import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { listDeadLetters, listDeadLettersQuery } from '@/lib/admin/dead-letters';
import { consoleUser, pathWithQuery } from '@/app/admin/_lib/gate';
import { DeadLetterTable } from '@/app/admin/_components/dead-letter-table';

export const metadata: Metadata = { title: '死信' };

const TABS = [
  ['dead', '待处理'],
  ['replayed', '已重放'],
  ['discarded', '已丢弃'],
  ['all', '全部'],
] as const;

export default async function DeadLettersPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const user = await consoleUser(pathWithQuery('/admin/dead-letters', sp));
  const parsed = listDeadLettersQuery.safeParse(Object.fromEntries(Object.entries(sp).filter(([, v]) => typeof v === 'string')));
  const q = parsed.success ? parsed.data : listDeadLettersQuery.parse({});
  const page = await listDeadLetters(db, user, q);
  return (
    <section className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">死信</h1>
        <p className="mt-1 text-sm text-gray-600">重试多次仍无法写入数据库、或无法解析的订单消息。先排查原因，再重放或丢弃。</p>
      </div>
      <div className="flex gap-2">
        {TABS.map(([s, label]) => (
          <Link key={s} href={`/admin/dead-letters?status=${s}`} className={`rounded px-3 py-1.5 text-sm ${q.status === s ? 'bg-gray-900 text-white' : 'bg-white text-gray-700'}`} data-testid={`dead-tab-${s}`}>
            {label}
          </Link>
        ))}
      </div>
      <DeadLetterTable items={page.items} waiting={page.waiting} />
      <div className="flex justify-between text-sm">
        {q.page > 1 ? <Link href={`/admin/dead-letters?status=${q.status}&page=${q.page - 1}`} className="text-brand">上一页</Link> : <span />}
        {page.hasMore && <Link href={`/admin/dead-letters?status=${q.status}&page=${q.page + 1}`} className="text-brand">下一页</Link>}
      </div>
    </section>
  );
}
