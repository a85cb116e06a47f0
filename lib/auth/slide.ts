/**
 * Public routes (shop pages, their live-stock polls) need no login, but a visitor who is logged in
 * and keeps reading them is active: their session must not expire under them (the original 黑马点评's
 * second interceptor, which refreshes the token on every request). One fire-and-forget EXPIRE … XX on
 * the session key — a single key, so Cluster-safe — never a read, and never awaited: a public read
 * pays nothing for it. A request without a session token costs nothing at all.
 */
import { redis } from '@/lib/redis/client';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { log } from '@/lib/log';
import { isWellFormedToken } from '@/lib/auth/session';
import { readCookie, SESSION_COOKIE } from '@/lib/auth/cookie';
import { tokenFromCookie } from '@/lib/auth/resolve';

export function slideSessionOf(headers: Headers): void {
  void sessionTokenOf(headers)
    .then((token) => (token ? redis.expire(keys.session(token), env.SESSION_TTL_SECONDS, 'XX') : 0))
    .catch((err: unknown) => log.debug({ err: err instanceof Error ? err.message : String(err) }, 'session slide skipped'));
}

async function sessionTokenOf(headers: Headers): Promise<string | undefined> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.get('authorization') ?? '')?.[1];
  if (bearer) return isWellFormedToken(bearer) ? bearer : undefined;
  const cookie = readCookie(headers.get('cookie'), SESSION_COOKIE);
  if (!cookie) return undefined;
  const token = await tokenFromCookie(cookie);
  return token && isWellFormedToken(token) ? token : undefined;
}
