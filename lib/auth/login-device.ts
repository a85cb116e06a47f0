/**
 * Login devices: a client that logged in with the right password gets a signed token naming a
 * random device id, bound to that phone (an httpOnly cookie for browsers, the same value in
 * LOGIN_DEVICE_HEADER for API clients). A later password login of the same phone presenting it is
 * counted per device instead of against the phone's global ceiling of wrong passwords, so a crowd
 * of strangers guessing a merchant's password slows the strangers, never the owner's own device.
 *
 * The token is `<deviceId>.<issuedAt s>.<HMAC-SHA256(AUTH_SECRET, phone|deviceId|issuedAt)>`: no
 * phone in it, a token of another phone does not verify, and it stops working after
 * LOGIN_DEVICE_MAX_AGE_SECONDS. Nothing is stored: a stranger cannot fill Redis with devices.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { env, isProduction } from '@/lib/env';
import { readCookie } from '@/lib/auth/cookie';

export const LOGIN_DEVICE_COOKIE = isProduction ? '__Host-hmdp.device' : 'hmdp.device';
export const LOGIN_DEVICE_HEADER = 'x-login-device';
export const LOGIN_DEVICE_MAX_AGE_SECONDS = 180 * 24 * 3600;

const TOKEN = /^([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

function mac(phone: string, deviceId: string, issuedAt: string): Buffer {
  return createHmac('sha256', env.AUTH_SECRET).update(`login-device|${phone}|${deviceId}|${issuedAt}`).digest();
}

export function issueLoginDevice(phone: string, now = Date.now()): string {
  const deviceId = randomBytes(16).toString('base64url');
  const issuedAt = String(Math.floor(now / 1000));
  return `${deviceId}.${issuedAt}.${mac(phone, deviceId, issuedAt).toString('base64url')}`;
}

/** The device id when `token` was issued for this phone and has not expired, else null. */
export function verifyLoginDevice(token: string | undefined, phone: string, now = Date.now()): string | null {
  if (!token) return null;
  const m = TOKEN.exec(token);
  if (!m) return null;
  const [, deviceId, issuedAt, sig] = m as unknown as [string, string, string, string];
  const age = now / 1000 - Number(issuedAt);
  if (age < -60 || age > LOGIN_DEVICE_MAX_AGE_SECONDS) return null;
  const given = Buffer.from(sig, 'base64url');
  const want = mac(phone, deviceId, issuedAt);
  return given.length === want.length && timingSafeEqual(given, want) ? deviceId : null;
}

/** What a request presents: the API header first, else the browser's cookie. */
export function presentedLoginDevice(headers: Headers): string | undefined {
  return headers.get(LOGIN_DEVICE_HEADER)?.trim() || readCookie(headers.get('cookie'), LOGIN_DEVICE_COOKIE);
}

export function loginDeviceCookie(token: string): string {
  return `${LOGIN_DEVICE_COOKIE}=${token}; Path=/; Max-Age=${LOGIN_DEVICE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax${isProduction ? '; Secure' : ''}`;
}
