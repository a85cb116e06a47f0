import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { idSchema } from '@/lib/http/parse';
import { AppError } from '@/lib/errors';
import { getBlogDetail } from '@/lib/blog/blog.service';
import { isFollowing } from '@/lib/follow/follow.service';
import { yuan } from '@/lib/shop/format';
import { getPageUserIfAvailable } from '@/lib/web/page-auth';
import { LikeButton } from '../_components/like-button';
import { FollowButton } from '../_components/follow-button';
import { CommentForm } from '../_components/comment-form';

type Props = { params: Promise<{ id: string }> };
export const dynamic = 'force-dynamic';

async function load(raw: string, viewerId: string | null) {
  if (!idSchema.safeParse(raw).success) return null;
  try {
    return await getBlogDetail(db, redis, raw, viewerId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const blog = await load((await params).id, null);
  return { title: blog?.title ?? '笔记不存在' };
}

export default async function BlogPage({ params }: Props) {
  const viewer = await getPageUserIfAvailable();
  const blog = await load((await params).id, viewer?.id ?? null);
  if (!blog) notFound();
  const mine = viewer?.id === blog.author.id;
  const following = viewer && !mine ? await isFollowing(db, redis, viewer.id, blog.author.id) : false;
  return (
    <article data-testid="blog-detail" data-blog-id={blog.id}>
      <div className="flex snap-x snap-mandatory overflow-x-auto bg-black" tabIndex={0} role="region" aria-label="笔记图片，可左右滑动" data-testid="blog-images">
        {blog.images.map((src, i) => (
          // eslint-disable-next-line @next/next/no-img-element -- our own re-encoded WebP, long-cached
          <img key={src} src={src} alt={`图片 ${i + 1}/${blog.images.length}`} className="aspect-square w-full flex-none snap-center object-contain" />
        ))}
      </div>

      <header className="flex items-center gap-3 px-4 pt-4">
        <Link href={`/users/${blog.author.id}`} className="flex min-w-0 flex-1 items-center gap-2" data-testid="blog-author">
          <span className="flex h-9 w-9 flex-none items-center justify-center rounded-full bg-brand/10 text-brand">{blog.author.nickName.slice(0, 1)}</span>
          <span className="truncate text-sm font-medium">{blog.author.nickName}</span>
        </Link>
        {viewer && !mine && <FollowButton userId={blog.author.id} initial={following} />}
      </header>

      <section className="space-y-2 px-4 py-3">
        <h1 className="text-lg font-semibold" data-testid="blog-title">{blog.title}</h1>
        <p className="whitespace-pre-wrap break-words text-sm leading-6 text-gray-800" data-testid="blog-content">{blog.content}</p>
        <p className="text-xs text-gray-600">{new Date(blog.createTime).toLocaleString('zh-CN', { timeZone: 'Asia/Shanghai' })}</p>
      </section>

      {blog.shop && (
        <Link href={`/shops/${blog.shop.id}`} className="mx-4 flex items-center gap-3 rounded-lg bg-gray-50 p-2" data-testid="blog-shop">
          {/* eslint-disable-next-line @next/next/no-img-element -- local SVG illustrations */}
          <img src={blog.shop.image || '/shops/1.svg'} alt="" className="h-12 w-14 flex-none rounded object-cover" />
          <span className="min-w-0 flex-1">
            <span className="block truncate text-sm font-medium">{blog.shop.name}</span>
            <span className="text-xs text-gray-600">
              {blog.shop.area} · ¥{yuan(blog.shop.avgPrice)}/人
            </span>
          </span>
          <span className="text-xs text-brand">去看看 ›</span>
        </Link>
      )}

      <section className="flex items-center gap-3 px-4 py-4">
        {viewer ? (
          <LikeButton blogId={blog.id} initialLiked={blog.isLiked} initialCount={blog.liked} />
        ) : (
          <Link href={`/login?next=/blogs/${blog.id}`} className="rounded-full border border-gray-300 px-4 py-1.5 text-sm text-gray-700">
            ♥ {blog.liked}
          </Link>
        )}
        <ul className="flex -space-x-2" data-testid="blog-likers" aria-label="最早点赞的人">
          {blog.likers.map((u) => (
            <li key={u.id} title={u.nickName} data-testid="blog-liker" className="flex h-7 w-7 items-center justify-center rounded-full bg-amber-100 text-xs text-amber-700 ring-2 ring-white">
              {u.nickName.slice(0, 1)}
            </li>
          ))}
        </ul>
      </section>

      <div className="h-2 bg-gray-50" />
      <h2 className="px-4 pt-3 text-base font-semibold">评论 {blog.comments}</h2>
      <ul className="divide-y divide-gray-50 px-4" data-testid="blog-comments">
        {blog.commentList.map((c) => (
          <li key={c.id} className="py-2 text-sm">
            <Link href={`/users/${c.user.id}`} className="text-gray-600">{c.user.nickName}</Link>
            <p className="whitespace-pre-wrap break-words">{c.content}</p>
          </li>
        ))}
      </ul>
      {viewer ? <CommentForm blogId={blog.id} /> : <p className="px-4 py-3 text-sm text-gray-600"><Link href={`/login?next=/blogs/${blog.id}`} className="text-brand underline">登录</Link>后评论</p>}
      <div className="h-8" />
    </article>
  );
}
