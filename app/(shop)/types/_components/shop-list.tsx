'use client';

/**
 * A type's shops, page by page ("加载更多"). Nearest first once the browser shares its position:
 * asked for automatically only when permission was already granted, else on a tap.
 */
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';
import type { ShopListItem, ShopPage } from '@/lib/shop/shop.types';
import { ShopCard } from './shop-card';

type Position = { x: number; y: number };
type Locate = 'idle' | 'asking' | 'on' | 'denied' | 'unsupported';

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

function pageUrl(typeId: string, page: number, pos: Position | null): string {
  const q = new URLSearchParams({ typeId, page: String(page) });
  if (pos) {
    q.set('x', String(pos.x));
    q.set('y', String(pos.y));
  }
  return `/api/shops?${q}`;
}

export function ShopList({ typeId }: { typeId: string }) {
  const [pos, setPos] = useState<Position | null>(null);
  const [locate, setLocate] = useState<Locate>('idle');
  const [items, setItems] = useState<ShopListItem[]>([]);
  const [page, setPage] = useState(0);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);

  const askPosition = useCallback(() => {
    if (!('geolocation' in navigator)) return setLocate('unsupported');
    setLocate('asking');
    navigator.geolocation.getCurrentPosition(
      (p) => {
        setPos({ x: round6(p.coords.longitude), y: round6(p.coords.latitude) });
        setLocate('on');
      },
      () => setLocate('denied'),
      { timeout: 8000, maximumAge: 10 * 60_000 },
    );
  }, []);

  // Use the position without a prompt when the user already allowed it.
  useEffect(() => {
    navigator.permissions
      ?.query({ name: 'geolocation' })
      .then((s) => s.state === 'granted' && askPosition())
      .catch(() => {});
  }, [askPosition]);

  // First page whenever the type, the position or a retry changes.
  useEffect(() => {
    let cancelled = false;
    api<ShopPage>(pageUrl(typeId, 1, pos))
      .then((p) => {
        if (cancelled) return;
        setItems(p.items);
        setPage(1);
        setHasMore(p.hasMore);
        setError(null);
      })
      .catch((e: ApiError) => !cancelled && setError(e.message))
      .finally(() => !cancelled && setLoading(false));
    return () => {
      cancelled = true;
    };
  }, [typeId, pos, reload]);

  async function loadMore() {
    setLoading(true);
    try {
      const p = await api<ShopPage>(pageUrl(typeId, page + 1, pos));
      setItems((prev) => [...prev, ...p.items.filter((s) => !prev.some((x) => x.id === s.id))]);
      setPage(page + 1);
      setHasMore(p.hasMore);
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setLoading(false);
    }
  }

  return (
    <section data-testid="shop-list" data-sorted={pos ? 'distance' : 'default'}>
      <div className="flex items-center justify-between px-4 py-2 text-xs text-gray-600">
        <span>{pos ? '按距离由近到远' : '按销量排序'}</span>
        {locate !== 'on' && (
          <button type="button" className="text-brand disabled:opacity-60" onClick={askPosition} disabled={locate === 'asking'} data-testid="use-location">
            {locate === 'asking' ? '定位中…' : locate === 'denied' ? '定位失败，点此重试' : locate === 'unsupported' ? '浏览器不支持定位' : '📍 看看离我最近的'}
          </button>
        )}
      </div>

      {error && (
        <div className="mx-4 my-3 rounded-md bg-red-50 p-3 text-sm text-red-600" role="alert" data-testid="shop-list-error">
          {error}
          <button
            type="button"
            className="ml-2 underline"
            onClick={() => {
              setLoading(true);
              setReload((n) => n + 1);
            }}
          >
            重试
          </button>
        </div>
      )}

      <ul className="divide-y divide-gray-100">
        {items.map((s) => (
          <li key={s.id}>
            <ShopCard shop={s} />
          </li>
        ))}
      </ul>

      {loading && <ListSkeleton />}
      {!loading && !error && items.length === 0 && (
        <p className="py-12 text-center text-sm text-gray-600" data-testid="shop-list-empty">
          这个分类还没有商户
        </p>
      )}
      {!loading && hasMore && (
        <button type="button" onClick={loadMore} className="block w-full py-4 text-center text-sm text-brand" data-testid="load-more">
          加载更多
        </button>
      )}
      {!loading && !hasMore && items.length > 0 && <p className="py-4 text-center text-xs text-gray-600">没有更多了</p>}
    </section>
  );
}

function ListSkeleton() {
  return (
    <div className="animate-pulse" role="status" aria-label="加载中" data-testid="shop-list-loading">
      {[0, 1, 2].map((i) => (
        <div key={i} className="flex gap-3 px-4 py-3">
          <div className="h-20 w-24 rounded-md bg-gray-200" />
          <div className="flex-1 space-y-2 py-1">
            <div className="h-4 w-3/4 rounded bg-gray-200" />
            <div className="h-3 w-1/2 rounded bg-gray-200" />
            <div className="h-3 w-1/3 rounded bg-gray-200" />
          </div>
        </div>
      ))}
    </div>
  );
}
