'use client';

import { useState } from 'react';
import { api } from '@/lib/web/client-api';

export function LogoutButton() {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      data-testid="logout"
      disabled={busy}
      className="rounded bg-black/20 px-2 py-1 text-xs disabled:opacity-60"
      onClick={async () => {
        setBusy(true);
        await api('/api/user/logout', { method: 'POST', redirectOn401: false }).catch(() => {});
        window.location.assign('/login');
      }}
    >
      {busy ? '退出中…' : '退出'}
    </button>
  );
}
