'use client';

import { useEffect, useState } from 'react';

/**
 * The clock for countdowns, ticking every second: null until the component is mounted, because
 * the server's render must not depend on the clock (it would not match the browser's). Used by
 * the shop page's grab box and the waiting room's page.
 */
export function useNow(): number | null {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    const tick = () => setNow(Date.now());
    const first = setTimeout(tick, 0);
    const t = setInterval(tick, 1000);
    return () => {
      clearTimeout(first);
      clearInterval(t);
    };
  }, []);
  return now;
}
