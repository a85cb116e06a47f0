import Link from 'next/link';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { shopBlogs } from '@/lib/blog/blog.service';
import { getPageUserIfAvailable } from '@/lib/web/page-auth';
import { BlogGrid } from '@/app/(shop)/blogs/_components/blog-card';

/** The shop's notes, newest first, and a way to write one about it. */
export async function ShopBlogs({ shopId }: { shopId: string }) {
  const viewer = await getPageUserIfAvailable();
  const blogs = await shopBlogs(db, redis, shopId, 1, viewer?.id ?? null);
  return (
    <section data-testid="shop-blogs">
      <div className="h-2 bg-gray-50" />
      <h2 className="flex items-center justify-between px-4 pb-1 pt-4 text-base font-semibold">
        探店笔记
        <Link href={`/blogs/new?shopId=${shopId}`} className="text-sm font-normal text-brand" data-testid="shop-write-blog">写笔记</Link>
      </h2>
      <BlogGrid blogs={blogs} empty="还没有人写过这家店" />
    </section>
  );
}
