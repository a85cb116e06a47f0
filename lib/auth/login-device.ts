/**
 * Login devices: a client that logged in with the right password gets a signed token naming a
 * random device id, bound to that phone (an httpOnly cookie for browsers, the same value in
 * LOGIN_DEVICE_HEADER for API clients). A later password login of the same phone presenting it is
 * counted per device instead of against the phone's global ceiling of wrong passwords, so a crowd
 * of strangers guessing a merchant's password slows the strangers, never the owner's own device.
 *
 * The token is `<deviceId>.<issuedAt s>.<kind>.<HMAC-SHA256(AUTH_SECRET, kind|phone|deviceId|issuedAt)>`:
 * no phone in it, a token of another phone does not verify, and it stops working after
 * LOGIN_DEVICE_MAX_AGE_SECONDS. Nothing is stored: a stranger cannot fill Redis with devices.
 *
 * `kind` says how the device earned it: `p` a right password, `s` an SMS code. Only a `p` device
 * skips the password limits (lib/auth/password-guard.ts); either kind counts its code requests on
 * their own. Anyone can log in by SMS to a phone of their own and mint `s` devices, about 30 an hour
 * per address: when those skipped the password limits too, each one bought 10 more hashed password
 * tries past the per-address cap (`e2e/security/login-guard.test.ts`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { env, isProduction } from '@/lib/env';
import { readCookie } from '@/lib/auth/cookie';

export const LOGIN_DEVICE_COOKIE = isProduction ? '__Host-hmdp.device' : 'hmdp.device';
export const LOGIN_DEVICE_HEADER = 'x-login-device';
export const LOGIN_DEVICE_MAX_AGE_SECONDS = 180 * 24 * 3600;

const TOKEN = /^([A-Za-z0-9_-]{22})\.(\d{1,12})\.([ps])\.([A-Za-z0-9_-]{43})$/;

/** How a device earned its token: a right password, or an SMS code. */
export type LoginDeviceKind = 'password' | 'sms';
const KIND_CODE: Record<LoginDeviceKind, string> = { password: 'p', sms: 's' };

function mac(kind: string, phone: string, deviceId: string, issuedAt: string): Buffer {
  return createHmac('sha256', env.AUTH_SECRET).update(`login-device|${kind}|${phone}|${deviceId}|${issuedAt}`).digest();
}

export function issueLoginDevice(phone: string, kind: LoginDeviceKind, now = Date.now()): string {
  const deviceId = randomBytes(16).toString('base64url');
  const issuedAt = String(Math.floor(now / 1000));
  const k = KIND_CODE[kind];
  return `${deviceId}.${issuedAt}.${k}.${mac(k, phone, deviceId, issuedAt).toString('base64url')}`;
}

/** The device id and how it was earned when `token` was issued for this phone and has not expired, else null. */
export function verifyLoginDevice(token: string | undefined, phone: string, now = Date.now()): { id: string; kind: LoginDeviceKind } | null {
  if (!token) return null;
  const m = TOKEN.exec(token);
  if (!m) return null;
  const [, deviceId, issuedAt, k, sig] = m as unknown as [string, string, string, string, string];
  const age = now / 1000 - Number(issuedAt);
  if (age < -60 || age > LOGIN_DEVICE_MAX_AGE_SECONDS) return null;
  const given = Buffer.from(sig, 'base64url');
  const want = mac(k, phone, deviceId, issuedAt);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
  return { id: deviceId, kind: k === 'p' ? 'password' : 'sms' };
}

/** The device id when `token` is a device of this phone that earned it with the password, else null. */
export function verifyPasswordDevice(token: string | undefined, phone: string, now = Date.now()): string | null {
  const d = verifyLoginDevice(token, phone, now);
  return d?.kind === 'password' ? d.id : null;
}

/** What a request presents: the API header first, else the browser's cookie. */
export function presentedLoginDevice(headers: Headers): string | undefined {
  return headers.get(LOGIN_DEVICE_HEADER)?.trim() || readCookie(headers.get('cookie'), LOGIN_DEVICE_COOKIE);
}

export function loginDeviceCookie(token: string): string {
  return `${LOGIN_DEVICE_COOKIE}=${token}; Path=/; Max-Age=${LOGIN_DEVICE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax${isProduction ? '; Secure' : ''}`;
}
