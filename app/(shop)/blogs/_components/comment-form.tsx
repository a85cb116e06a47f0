'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';

export function CommentForm({ blogId }: { blogId: string }) {
  const router = useRouter();
  const [content, setContent] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  return (
    <form
      className="flex gap-2 px-4 py-3"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError('');
        try {
          await api(`/api/blogs/${blogId}/comments`, { body: { content } });
          setContent('');
          router.refresh();
        } catch (err) {
          setError(err instanceof ApiError ? err.message : '评论失败');
        } finally {
          setBusy(false);
        }
      }}
    >
      <input
        value={content}
        onChange={(e) => setContent(e.target.value)}
        maxLength={500}
        placeholder="说点什么…"
        className="min-w-0 flex-1 rounded-full border border-gray-200 px-3 py-1.5 text-sm"
        data-testid="comment-input"
      />
      <button type="submit" disabled={busy || !content.trim()} className="rounded-full bg-brand px-4 text-sm text-white disabled:opacity-50" data-testid="comment-submit">
        发送
      </button>
      {error && <p className="text-xs text-red-600">{error}</p>}
    </form>
  );
}
