'use client';

import { useState } from 'react';
import { api } from '@/lib/web/client-api';
import { useBusyCall } from '@/lib/web/use-busy-call';

/** The heart: toggles my like (the server decides the new state; clicks while one runs are ignored). */
export function LikeButton({ blogId, initialLiked, initialCount }: { blogId: string; initialLiked: boolean; initialCount: number }) {
  const [state, setState] = useState({ isLiked: initialLiked, liked: initialCount });
  const { busy, error, run } = useBusyCall();
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        data-testid="like-button"
        data-liked={state.isLiked}
        aria-pressed={state.isLiked}
        disabled={busy}
        className={`rounded-full border px-4 py-1.5 text-sm ${state.isLiked ? 'border-brand bg-brand text-white' : 'border-gray-300 text-gray-700'}`}
        onClick={() =>
          run(async () => {
            setState(await api<{ isLiked: boolean; liked: number }>(`/api/blogs/${blogId}/like`, { method: 'POST' }));
          })
        }
      >
        ♥ <span data-testid="like-count">{state.liked}</span>
      </button>
      {error && <span className="text-xs text-red-600">{error}</span>}
    </span>
  );
}
