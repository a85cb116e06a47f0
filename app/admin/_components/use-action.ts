'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import type { ApiError } from '@/lib/web/client-api';

/** A console action: run it, show its outcome in words, refresh the server-rendered page. */
export function useAction() {
  const router = useRouter();
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const act = (fn: () => Promise<string>) => async () => {
    setResult(null);
    try {
      setResult({ ok: true, text: await fn() });
      router.refresh();
    } catch (e) {
      setResult({ ok: false, text: (e as ApiError).message });
    }
  };
  return { result, act };
}
