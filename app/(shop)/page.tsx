import Link from 'next/link';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { listShopTypes } from '@/lib/shop/shop.service';
import { TypeTabs } from '@/app/(shop)/types/_components/type-tabs';
import { BLOG_PAGE_SIZE, hotBlogs } from '@/lib/blog/blog.service';
import { getPageUserIfAvailable } from '@/lib/web/page-auth';
import { BlogGrid, Pager } from '@/app/(shop)/blogs/_components/blog-card';

export const dynamic = 'force-dynamic';

export default async function HomePage() {
  const types = await listShopTypes(db, redis);
  const viewer = await getPageUserIfAvailable();
  const blogs = await hotBlogs(db, redis, 1, viewer?.id ?? null);
  return (
    <>
      <section className="bg-gradient-to-b from-brand/10 to-white px-4 pb-2 pt-4">
        <h1 className="text-lg font-semibold">发现身边好店</h1>
        <p className="text-xs text-gray-600">美食、休闲、丽人，限时秒杀券天天有</p>
      </section>

      {types.length === 0 ? (
        <p className="py-16 text-center text-sm text-gray-600" data-testid="types-empty">
          还没有商户分类
        </p>
      ) : (
        <nav className="grid grid-cols-4 gap-y-4 px-2 py-4" aria-label="商户分类" data-testid="type-grid">
          {types.map((t) => (
            <Link key={t.id} href={`/types/${t.id}`} className="flex flex-col items-center gap-1 text-xs text-gray-700" data-testid="type-link" data-type-id={t.id}>
              {/* eslint-disable-next-line @next/next/no-img-element -- tiny local SVG icons */}
              <img src={t.icon || '/types/food.svg'} alt="" width={44} height={44} />
              <span className="max-w-full truncate">{t.name}</span>
            </Link>
          ))}
        </nav>
      )}

      <div className="h-2 bg-gray-50" />
      <h2 className="px-4 pt-3 text-base font-semibold">精选商户</h2>
      <TypeTabs types={types} />

      <div className="h-2 bg-gray-50" />
      <section data-testid="hot-blogs">
        <h2 className="flex items-center justify-between px-4 pt-3 text-base font-semibold">
          热门笔记
          <Link href="/blogs/new" className="text-sm font-normal text-brand">写笔记</Link>
        </h2>
        <BlogGrid blogs={blogs} empty="还没有笔记，来写第一篇吧" />
        <Pager base="/blogs" page={1} hasMore={blogs.length === BLOG_PAGE_SIZE} />
      </section>
    </>
  );
}
