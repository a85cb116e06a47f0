'use client';

import { useState } from 'react';
import type { BlogView } from '@/lib/blog/blog.view';
import { api } from '@/lib/web/client-api';
import { useBusyCall } from '@/lib/web/use-busy-call';
import { BlogCard } from '../blogs/_components/blog-card';

type Cursor = { max: number; offset: number } | null;

/**
 * The follow feed, newest first; "更多" asks for the page after the cursor the last page returned.
 * A page may come back empty with a cursor (the notes it read past were deleted): the feed is
 * empty only when there is no cursor left, otherwise the button stays and reads on.
 */
export function FeedList({ initial, initialNext }: { initial: BlogView[]; initialNext: Cursor }) {
  const [items, setItems] = useState(initial);
  const [next, setNext] = useState<Cursor>(initialNext);
  const { busy, error, run } = useBusyCall('加载失败');
  if (items.length === 0 && !next) return <p className="py-16 text-center text-sm text-gray-600" data-testid="feed-empty">关注的人发布笔记后会出现在这里</p>;
  return (
    <>
      {items.length > 0 ? (
        <div className="grid grid-cols-2 gap-2 px-3 py-2" data-testid="feed-list">
          {items.map((b) => (
            <BlogCard key={b.id} blog={b} />
          ))}
        </div>
      ) : (
        <p className="px-4 pt-10 text-center text-sm text-gray-600" data-testid="feed-skipped">较新的笔记已被作者删除，继续加载更早的笔记</p>
      )}
      {next ? (
        <p className="py-3 text-center">
          <button
            type="button"
            disabled={busy}
            className="text-sm text-brand"
            data-testid="feed-more"
            onClick={() =>
              run(async () => {
                const r = await api<{ items: BlogView[]; next: Cursor }>(`/api/feed?max=${next.max}&offset=${next.offset}`);
                setItems((cur) => [...cur, ...r.items.filter((b) => !cur.some((c) => c.id === b.id))]);
                setNext(r.next);
              })
            }
          >
            {busy ? '加载中…' : '加载更多'}
          </button>
          {error && <span className="ml-2 text-xs text-red-600">{error}</span>}
        </p>
      ) : (
        <p className="py-3 text-center text-xs text-gray-600">没有更多了</p>
      )}
    </>
  );
}
