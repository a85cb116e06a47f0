'use client';

import { useState } from 'react';
import { ApiError } from '@/lib/web/client-api';

/**
 * One API call at a time behind a button: `busy` while it runs (the button disables itself, so a
 * double click sends one request), `error` in words when it fails, cleared on the next try.
 */
export function useBusyCall(fallbackMessage = '操作失败') {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError('');
    try {
      await fn();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : fallbackMessage);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
