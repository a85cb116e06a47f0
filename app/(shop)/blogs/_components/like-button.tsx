'use client';

import { useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';

/** The heart: toggles my like (the server decides the new state; clicks while one runs are ignored). */
export function LikeButton({ blogId, initialLiked, initialCount }: { blogId: string; initialLiked: boolean; initialCount: number }) {
  const [state, setState] = useState({ isLiked: initialLiked, liked: initialCount });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        data-testid="like-button"
        data-liked={state.isLiked}
        aria-pressed={state.isLiked}
        disabled={busy}
        className={`rounded-full border px-4 py-1.5 text-sm ${state.isLiked ? 'border-brand bg-brand text-white' : 'border-gray-300 text-gray-700'}`}
        onClick={async () => {
          setBusy(true);
          setError('');
          try {
            setState(await api<{ isLiked: boolean; liked: number }>(`/api/blogs/${blogId}/like`, { method: 'POST' }));
          } catch (e) {
            setError(e instanceof ApiError ? e.message : '操作失败');
          } finally {
            setBusy(false);
          }
        }}
      >
        ♥ <span data-testid="like-count">{state.liked}</span>
      </button>
      {error && <span className="text-xs text-red-500">{error}</span>}
    </span>
  );
}
