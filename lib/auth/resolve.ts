/**
 * Finds who is calling: `Authorization: Bearer <token>` (API clients) or the next-auth cookie
 * (browsers), then the Redis session behind the token (sliding its TTL), through the per-process
 * session cache (lib/auth/session-cache.ts).
 */
import { decode } from 'next-auth/jwt';
import { redis } from '@/lib/redis/client';
import { authSecret, readCookie, SESSION_COOKIE } from '@/lib/auth/cookie';
import { checkSession, type SessionUser } from '@/lib/auth/session';

export interface Caller {
  user: SessionUser;
  token: string;
  via: 'bearer' | 'cookie';
}

export async function tokenFromCookie(cookieValue: string | undefined): Promise<string | undefined> {
  if (!cookieValue) return undefined;
  try {
    const jwt = await decode({ token: cookieValue, secret: authSecret });
    return typeof jwt?.sessionToken === 'string' ? jwt.sessionToken : undefined;
  } catch {
    return undefined; // forged, tampered or signed with an old secret
  }
}

export async function resolveCaller(headers: Headers): Promise<Caller | null> {
  const auth = headers.get('authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m) return null;
    const user = await checkSession(redis, m[1]!);
    return user ? { user, token: m[1]!, via: 'bearer' } : null;
  }
  const token = await tokenFromCookie(readCookie(headers.get('cookie'), SESSION_COOKIE));
  if (!token) return null;
  const user = await checkSession(redis, token);
  return user ? { user, token, via: 'cookie' } : null;
}
