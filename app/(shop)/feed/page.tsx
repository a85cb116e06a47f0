import type { Metadata } from 'next';
import Link from 'next/link';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { readFeed } from '@/lib/feed/feed.service';
import { requirePageUser } from '@/lib/web/page-auth';
import { FeedList } from './feed-list';

export const metadata: Metadata = { title: '关注' };
export const dynamic = 'force-dynamic';

export default async function FeedPage() {
  const user = await requirePageUser('/feed');
  const first = await readFeed(db, redis, user.id, null);
  return (
    <>
      <section className="flex items-center justify-between px-4 pb-1 pt-4">
        <h1 className="text-lg font-semibold">关注动态</h1>
        <Link href="/blogs/new" className="rounded-full bg-brand px-3 py-1 text-sm text-white" data-testid="write-blog">写笔记</Link>
      </section>
      <FeedList initial={first.items} initialNext={first.next} />
    </>
  );
}
