'use client';

import { useState } from 'react';
import { api } from '@/lib/web/client-api';
import { useBusyCall } from '@/lib/web/use-busy-call';

export function FollowButton({ userId, initial }: { userId: string; initial: boolean }) {
  const [following, setFollowing] = useState(initial);
  const { busy, error, run } = useBusyCall();
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        data-testid="follow-button"
        data-following={following}
        disabled={busy}
        className={`rounded-full px-4 py-1 text-sm ${following ? 'bg-gray-100 text-gray-600' : 'bg-brand text-white'}`}
        onClick={() =>
          run(async () => {
            const r = await api<{ following: boolean }>(`/api/users/${userId}/follow`, { method: following ? 'DELETE' : 'POST' });
            setFollowing(r.following);
          })
        }
      >
        {following ? '已关注' : '+ 关注'}
      </button>
      {error && <span className="text-xs text-red-600">{error}</span>}
    </span>
  );
}
