/**
 * The per-client limit of public reads (shopReadIp, the API's shop routes count on it too) for
 * server-rendered pages that look a row up by an id from the URL: a page for an unknown id costs
 * a MySQL read and a short-lived marker in Redis, so one client cannot mint them without end.
 */
import { cache } from 'react';
import { headers } from 'next/headers';
import { clientIp } from '@/lib/http/client-ip';
import { AppError } from '@/lib/errors';
import { consumeUnlessRedisDown } from '@/lib/rate-limit';

/** One count per request (the page and its metadata share it); false when the client is over the limit. */
export const publicReadAllowed = cache(async (): Promise<boolean> => {
  try {
    await consumeUnlessRedisDown('shopReadIp', clientIp(await headers()));
    return true;
  } catch (e) {
    if (e instanceof AppError && e.code === 'RATE_LIMITED') return false;
    throw e;
  }
});
