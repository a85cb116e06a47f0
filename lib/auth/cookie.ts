import { env, isProduction } from '@/lib/env';

/** The next-auth JWT cookie. It carries only the Redis session token (docs/security.md#sessions). */
export const SESSION_COOKIE = isProduction ? '__Secure-hmdp.session' : 'hmdp.session';
export const SESSION_COOKIE_SECURE = isProduction;
/** The JWT outlives the Redis session on purpose: Redis decides, the cookie only carries the token. */
export const SESSION_COOKIE_MAX_AGE = 7 * 24 * 3600;
export const authSecret = env.AUTH_SECRET;

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeCookieValue(part.slice(i + 1).trim());
  }
  return undefined;
}

/** A cookie value as the client sent it: a broken percent-escape (`%E0%A4%A`) is no cookie, not a 500. */
function decodeCookieValue(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
