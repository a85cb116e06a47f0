/**
 * The per-process memory of decoded session cookies (lib/auth/resolve.ts): a cookie that decoded
 * is not decoded again while remembered, never past its JWT's expiry, and a cookie that did not
 * decode is never remembered. Real next-auth JWTs, encoded with the app's secret.
 */
import { encode } from 'next-auth/jwt';
import { describe, expect, it } from 'vitest';
import { authSecret } from '@/lib/auth/cookie';
import { cookieDecodeCount, tokenFromCookie } from '@/lib/auth/resolve';

describe('session cookie decode memory', () => {
  it('decodes a good cookie once, then answers it from memory', async () => {
    const cookie = await encode({ token: { sessionToken: 'tok-remembered' }, secret: authSecret, maxAge: 3600 });
    const before = cookieDecodeCount();
    expect(await tokenFromCookie(cookie)).toBe('tok-remembered');
    expect(await tokenFromCookie(cookie)).toBe('tok-remembered');
    expect(await tokenFromCookie(cookie)).toBe('tok-remembered');
    expect(cookieDecodeCount() - before).toBe(1);
  });

  it('never answers from memory past the JWT expiry', async () => {
    const cookie = await encode({ token: { sessionToken: 'tok-short' }, secret: authSecret, maxAge: 1 });
    const before = cookieDecodeCount();
    expect(await tokenFromCookie(cookie)).toBe('tok-short');
    expect(cookieDecodeCount() - before).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    await tokenFromCookie(cookie); // next-auth itself still accepts it for its clock tolerance; what matters is that it was decoded again
    expect(cookieDecodeCount() - before).toBe(2);
  });

  it('never remembers a cookie that did not decode', async () => {
    const good = await encode({ token: { sessionToken: 'tok-x' }, secret: authSecret, maxAge: 3600 });
    const forged = good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const before = cookieDecodeCount();
    expect(await tokenFromCookie(forged)).toBeUndefined();
    expect(await tokenFromCookie(forged)).toBeUndefined();
    expect(await tokenFromCookie('not-a-jwt')).toBeUndefined();
    expect(cookieDecodeCount() - before).toBe(3);
  });
});
