/**
 * Finds who is calling: `Authorization: Bearer <token>` (API clients) or the next-auth cookie
 * (browsers, its decode remembered per process, below), then the Redis session behind the token
 * (sliding its TTL), through the per-process session cache (lib/auth/session-cache.ts).
 */
import { decode } from 'next-auth/jwt';
import { BoundedMemory } from '@/lib/bounded-memory';
import { redis } from '@/lib/redis/client';
import { authSecret, readCookie, SESSION_COOKIE } from '@/lib/auth/cookie';
import { checkSession, type SessionUser } from '@/lib/auth/session';

export interface Caller {
  user: SessionUser;
  token: string;
  via: 'bearer' | 'cookie';
}

/**
 * Decoding the next-auth cookie (an HKDF key derivation and a JWE decryption) costs 46-66 µs of
 * CPU per request here, more than a whole refused grab on the hot server (README: The hot
 * server). So each process remembers cookie → session token for COOKIE_MEMORY_MS, never past the
 * JWT's own expiry, for at most COOKIE_MEMORY_MAX cookies (expired ones go first, then all). Only
 * cookies that decoded are remembered (junk cannot fill it), and the session behind the token is
 * still checked on every request: a logout or revocation ends the session, not the cookie.
 */
const COOKIE_MEMORY_MS = 60_000;
const COOKIE_MEMORY_MAX = 10_000;
const decodedCookies = new BoundedMemory<string>(COOKIE_MEMORY_MS, COOKIE_MEMORY_MAX);
let cookieDecodes = 0;

/** For tests: how many cookies were really decoded (not answered from memory). */
export const cookieDecodeCount = () => cookieDecodes;

export async function tokenFromCookie(cookieValue: string | undefined): Promise<string | undefined> {
  if (!cookieValue) return undefined;
  const known = decodedCookies.get(cookieValue);
  if (known !== null) return known;
  cookieDecodes++;
  try {
    const jwt = await decode({ token: cookieValue, secret: authSecret });
    if (typeof jwt?.sessionToken !== 'string') return undefined;
    // A JWT without an expiry is never remembered (notAfter 0 is already past).
    decodedCookies.set(cookieValue, jwt.sessionToken, typeof jwt.exp === 'number' ? jwt.exp * 1000 : 0);
    return jwt.sessionToken;
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
