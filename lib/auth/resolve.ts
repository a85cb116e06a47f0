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
import { andThen, type MaybePromise } from '@/lib/maybe-promise';

export interface Caller {
  user: SessionUser;
  token: string;
  via: 'bearer' | 'cookie';
}

/**
 * Decoding the next-auth cookie (an HKDF key derivation and a JWE decryption) costs 46-66 µs of
 * CPU per request here, more than a whole refused grab on the hot server (docs/hot-server.md#session-cookie-memory). So each process remembers cookie → session token for COOKIE_MEMORY_MS, never past the
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

/** The session token inside a next-auth cookie: from memory without a promise, else decoded. */
export function tokenFromCookie(cookieValue: string | undefined): MaybePromise<string | undefined> {
  if (!cookieValue) return undefined;
  const known = decodedCookies.get(cookieValue);
  if (known !== null) return known;
  return decodeCookie(cookieValue);
}

async function decodeCookie(cookieValue: string): Promise<string | undefined> {
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

const BEARER = /^Bearer\s+(\S+)$/i;

/** The caller, without a promise when the cookie and the session are both in this process's memory. */
export function resolveCaller(headers: Headers): MaybePromise<Caller | null> {
  const auth = headers.get('authorization');
  if (auth) {
    const token = BEARER.exec(auth)?.[1];
    return token ? callerOf(token, 'bearer') : null;
  }
  return andThen(tokenFromCookie(readCookie(headers.get('cookie'), SESSION_COOKIE)), (token) => (token ? callerOf(token, 'cookie') : null));
}

function callerOf(token: string, via: Caller['via']): MaybePromise<Caller | null> {
  return andThen(checkSession(redis, token), (user) => (user ? { user, token, via } : null));
}
