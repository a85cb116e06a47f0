'use client';

import { useState } from 'react';
import type { ShopTypeView } from '@/lib/shop/shop.types';
import { ShopList } from './shop-list';

/** Home: one chip per type; the list below shows the chosen type (a fresh list per type). */
export function TypeTabs({ types }: { types: ShopTypeView[] }) {
  const [typeId, setTypeId] = useState(types[0]?.id);
  if (!typeId) return null;
  return (
    <div>
      <div className="flex gap-2 overflow-x-auto px-4 py-2" role="tablist">
        {types.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={t.id === typeId}
            onClick={() => setTypeId(t.id)}
            className={`flex-none rounded-full px-3 py-1 text-sm ${t.id === typeId ? 'bg-brand text-white' : 'bg-gray-100 text-gray-600'}`}
            data-testid="type-tab"
          >
            {t.name}
          </button>
        ))}
      </div>
      <ShopList key={typeId} typeId={typeId} />
    </div>
  );
}
