/**
 * Guards password login against guessing without handing strangers a way to lock the owner out:
 *   - per (phone, client): 10 tries / 15 min, counted before the check, so one client guessing
 *     one account is slowed while the owner on another network still logs in;
 *   - per client: 100 tries / 15 min across phones (credential stuffing from one address);
 *   - per phone, from everywhere: a slow ceiling of wrong passwords (200 / h) that only a crowd of
 *     clients reaches; it counts failures only, and a right password from a fresh client is not
 *     consumed by it;
 *   - a device this phone logged in on with the password before (a verified login-device token of
 *     kind password) skips the ceiling and both per-client limits and has its own: 10 tries /
 *     15 min per (phone, device), right or wrong (a right one does not reset it: each try is a
 *     password hash, ~50 ms of the thread pool, and a device that reset its count on every right
 *     password could make the server hash without end).
 *     The ceiling alone would let a crowd lock the owner out for an hour; the owner's device is
 *     then still let in, while every stranger stays slowed.
 * Every wrong password for an existing account is audited (action auth.password-failed).
 */
import type { Executor } from '@/lib/db/client';
import type { User } from '@/lib/db/schema';
import { AppError } from '@/lib/errors';
import { consume, ensureNotBlocked, resetLimit } from '@/lib/rate-limit';
import { recordAudit } from '@/lib/audit/audit';
import { log } from '@/lib/log';

/** Audit rows for events nobody logged in performed (a stranger's wrong password). */
export const ANONYMOUS_ACTOR_ID = '0';

const phoneClient = (phone: string, ip: string) => `${phone}|${ip}`;
const phoneDevice = (phone: string, deviceId: string) => `${phone}|${deviceId}`;

/** `deviceId`: a verified login device of this phone (lib/auth/login-device.ts), or null. */
export async function beforePasswordCheck(phone: string, ip: string, deviceId: string | null = null): Promise<void> {
  if (deviceId) {
    // Not the per-client limit either: a stranger stuffing credentials from the owner's network
    // (an office, a carrier NAT) would otherwise lock the owner out all the same.
    await consume('passwordLoginDevice', phoneDevice(phone, deviceId));
    return;
  }
  await ensureNotBlocked('passwordLoginPhone', phone);
  await consume('passwordLoginClient', ip);
  await consume('passwordLoginPhoneClient', phoneClient(phone, ip));
}

export async function afterPasswordSuccess(phone: string, ip: string, deviceId: string | null = null): Promise<void> {
  if (!deviceId) await resetLimit('passwordLoginPhoneClient', phoneClient(phone, ip));
}

export async function afterPasswordFailure(db: Executor, phone: string, ip: string, user: User | undefined): Promise<never> {
  await consume('passwordLoginPhone', phone).catch(() => {}); // the ceiling is enforced on the next try
  if (user) {
    await recordAudit(db, {
      actorId: ANONYMOUS_ACTOR_ID,
      action: 'auth.password-failed',
      targetType: 'user',
      targetId: String(user.id),
      before: null,
      after: { ip, role: user.role },
    }).catch((e) => log.error({ err: e instanceof Error ? e.message : String(e) }, 'audit of a failed login could not be written'));
  }
  throw new AppError('UNAUTHORIZED', '手机号或密码错误');
}
