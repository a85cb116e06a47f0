import Link from 'next/link';
import type { BlogView } from '@/lib/blog/blog.view';

/** A note in a two-column grid: first image, title, author and likes. Text is rendered as text. */
export function BlogCard({ blog }: { blog: BlogView }) {
  return (
    <Link href={`/blogs/${blog.id}`} className="block overflow-hidden rounded-lg bg-white shadow-sm ring-1 ring-gray-100" data-testid="blog-card" data-blog-id={blog.id}>
      {/* eslint-disable-next-line @next/next/no-img-element -- our own re-encoded WebP, long-cached */}
      <img src={blog.images[0]} alt="" className="aspect-[4/5] w-full object-cover" loading="lazy" />
      <div className="space-y-1 p-2">
        <h3 className="line-clamp-2 text-sm font-medium" data-testid="blog-card-title">{blog.title}</h3>
        <p className="flex items-center justify-between text-xs text-gray-600">
          <span className="truncate">{blog.author.nickName}</span>
          <span className={blog.isLiked ? 'text-brand' : ''} data-testid="blog-card-liked">
            ♥ {blog.liked}
          </span>
        </p>
      </div>
    </Link>
  );
}

export function BlogGrid({ blogs, empty }: { blogs: BlogView[]; empty: string }) {
  if (blogs.length === 0) return <p className="py-10 text-center text-sm text-gray-600" data-testid="blogs-empty">{empty}</p>;
  return (
    <div className="grid grid-cols-2 gap-2 px-3 py-2" data-testid="blog-grid">
      {blogs.map((b) => (
        <BlogCard key={b.id} blog={b} />
      ))}
    </div>
  );
}

/** Previous / next links for offset-paged lists (?page=n). */
export function Pager({ base, page, hasMore }: { base: string; page: number; hasMore: boolean }) {
  if (page <= 1 && !hasMore) return null;
  return (
    <nav className="flex justify-center gap-6 py-3 text-sm text-brand">
      {page > 1 && <Link href={`${base}?page=${page - 1}`}>上一页</Link>}
      {hasMore && <Link href={`${base}?page=${page + 1}`} data-testid="pager-next">下一页</Link>}
    </nav>
  );
}
