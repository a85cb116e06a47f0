/** Server components and server actions read the caller here; a dead session goes to /login. */
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { redis } from '@/lib/redis/client';
import { isDependencyDown } from '@/lib/http/respond';
import { log } from '@/lib/log';
import { SESSION_COOKIE } from '@/lib/auth/cookie';
import { tokenFromCookie } from '@/lib/auth/resolve';
import { checkSession, type SessionUser } from '@/lib/auth/session';

export async function getPageUser(): Promise<SessionUser | null> {
  const jar = await cookies();
  const token = await tokenFromCookie(jar.get(SESSION_COOKIE)?.value);
  return token ? checkSession(redis, token) : null;
}

/**
 * For chrome around public pages (the header): when Redis is down the session cannot be read,
 * but the shop pages themselves still work from MySQL, so render them as for a visitor.
 */
export async function getPageUserIfAvailable(): Promise<SessionUser | null> {
  try {
    return await getPageUser();
  } catch (err) {
    if (!isDependencyDown(err)) throw err;
    log.error({ err: (err as Error).message }, 'session store unavailable; rendering the page without the user');
    return null;
  }
}

export async function requirePageUser(next: string): Promise<SessionUser> {
  const user = await getPageUser();
  if (!user) redirect(`/login?next=${encodeURIComponent(next)}`);
  return user;
}
