import type { Metadata } from 'next';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { BLOG_PAGE_SIZE, hotBlogs } from '@/lib/blog/blog.service';
import { getPageUserIfAvailable } from '@/lib/web/page-auth';
import { BlogGrid, Pager } from './_components/blog-card';

export const metadata: Metadata = { title: '热门笔记' };
export const dynamic = 'force-dynamic';

type Props = { searchParams: Promise<{ page?: string }> };

/** Hot notes, most liked first, paged (the home page shows the first page). */
export default async function HotBlogsPage({ searchParams }: Props) {
  const page = Math.min(1000, Math.max(1, Number((await searchParams).page) || 1));
  const viewer = await getPageUserIfAvailable();
  const blogs = await hotBlogs(db, redis, page, viewer?.id ?? null);
  return (
    <>
      <h1 className="px-4 pt-4 text-lg font-semibold">热门笔记</h1>
      <BlogGrid blogs={blogs} empty="还没有笔记" />
      <Pager base="/blogs" page={page} hasMore={blogs.length === BLOG_PAGE_SIZE} />
    </>
  );
}
