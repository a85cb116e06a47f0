'use client';

import { useEffect } from 'react';

/** Counts this page view once it is shown (UV/PV); failures are ignored, the page does not depend on it. */
export function ViewBeacon({ shopId }: { shopId: string }) {
  useEffect(() => {
    fetch(`/api/shops/${shopId}/view`, { method: 'POST', credentials: 'same-origin' }).catch(() => {});
  }, [shopId]);
  return null;
}
