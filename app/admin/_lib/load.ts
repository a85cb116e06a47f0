/**
 * Runs a service for a page: FORBIDDEN becomes the 403 view (returned as `forbidden`); a missing
 * or malformed id, or a page that does not apply (live stock of a normal voucher), the 404 page;
 * anything else goes to the console's error boundary.
 */
import { notFound } from 'next/navigation';
import { AppError } from '@/lib/errors';

export async function load<T>(fn: () => Promise<T>): Promise<{ forbidden: true } | { forbidden: false; value: T }> {
  try {
    return { forbidden: false, value: await fn() };
  } catch (e) {
    if (e instanceof AppError && e.code === 'FORBIDDEN') return { forbidden: true };
    if (e instanceof AppError && (e.code === 'NOT_FOUND' || e.code === 'BAD_REQUEST' || e.code === 'CONFLICT')) notFound();
    throw e;
  }
}
