import type { Metadata } from 'next';
import { db } from '@/lib/db/client';
import { requirePageUser } from '@/lib/web/page-auth';
import { listShopNames } from '@/lib/blog/blog.repository';
import { BlogForm } from './blog-form';

export const metadata: Metadata = { title: '写笔记' };
export const dynamic = 'force-dynamic';

type Props = { searchParams: Promise<{ shopId?: string }> };

export default async function NewBlogPage({ searchParams }: Props) {
  await requirePageUser('/blogs/new');
  const shops = await listShopNames(db, 500);
  const wanted = (await searchParams).shopId ?? '';
  const initialShopId = shops.some((s) => s.id === wanted) ? wanted : '';
  return (
    <>
      <h1 className="px-4 pt-4 text-lg font-semibold">写探店笔记</h1>
      <BlogForm shops={shops} initialShopId={initialShopId} />
    </>
  );
}
