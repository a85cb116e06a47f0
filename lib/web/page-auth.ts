/** Server components and server actions read the caller here; a dead session goes to /login. */
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { redis } from '@/lib/redis/client';
import { SESSION_COOKIE } from '@/lib/auth/cookie';
import { tokenFromCookie } from '@/lib/auth/resolve';
import { touchSession, type SessionUser } from '@/lib/auth/session';

export async function getPageUser(): Promise<SessionUser | null> {
  const jar = await cookies();
  const token = await tokenFromCookie(jar.get(SESSION_COOKIE)?.value);
  return token ? touchSession(redis, token) : null;
}

export async function requirePageUser(next: string): Promise<SessionUser> {
  const user = await getPageUser();
  if (!user) redirect(`/login?next=${encodeURIComponent(next)}`);
  return user;
}
