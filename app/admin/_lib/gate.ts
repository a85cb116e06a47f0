/**
 * The server-side role check every console page starts with: no session → /login?next=…, a
 * consumer → a real 403 (forbidden(), rendered by app/forbidden.tsx), a merchant or admin → the user.
 */
import { cache } from 'react';
import { forbidden, redirect } from 'next/navigation';
import type { SessionUser } from '@/lib/auth/session';
import { getPageUser } from '@/lib/web/page-auth';

const currentUser = cache(getPageUser);

export async function consoleUser(next: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/login?next=${encodeURIComponent(next)}`);
  if (user.role !== 'merchant' && user.role !== 'admin') forbidden();
  return user;
}

/** For the layout: who is looking, without redirecting (each page decides). */
export const layoutUser = currentUser;

/** The path plus query of the current page, for ?next= after login. */
export function pathWithQuery(path: string, query: Record<string, string | string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (typeof v === 'string') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
