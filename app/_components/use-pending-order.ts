'use client';

import { useEffect, useRef } from 'react';
import { api } from '@/lib/web/client-api';

/**
 * Polls GET /api/orders/{id} with a gentle backoff (400 ms, ×1.5, at most 3 s) while `orderId` is
 * set, and hands the order to `onSettled` once it leaves `pending` (the worker wrote it, or it
 * failed). A blip, or the order not visible for a moment, just means polling on. Used by the shop
 * page's grab box and the waiting room's page.
 */
export function usePendingOrder<T extends { state: string }>(orderId: string | null, onSettled: (order: T) => void): void {
  // The caller re-renders (a countdown every second); the poll loop must not restart with it.
  const settled = useRef(onSettled);
  useEffect(() => {
    settled.current = onSettled;
  });
  useEffect(() => {
    if (!orderId) return;
    let stopped = false;
    let delay = 400;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const o = await api<T>(`/api/orders/${orderId}`);
        if (stopped) return;
        if (o.state !== 'pending') return settled.current(o);
      } catch {
        // keep polling
      }
      delay = Math.min(delay * 1.5, 3000);
      if (!stopped) timer = setTimeout(poll, delay);
    };
    timer = setTimeout(poll, delay);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [orderId]);
}
