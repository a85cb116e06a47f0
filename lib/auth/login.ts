/**
 * Login by SMS code (consumers, auto-register) or by password (merchants, admins). Both end in
 * a Redis session whose token the caller hands to the client.
 */
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import type { User } from '@/lib/db/schema';
import { AppError } from '@/lib/errors';
import { consume, refund } from '@/lib/rate-limit';
import { afterPasswordFailure, afterPasswordSuccess, beforePasswordCheck } from '@/lib/auth/password-guard';
import { PASSWORD_REQUIRED_MESSAGE } from '@/lib/auth/messages';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { smsProvider } from '@/lib/sms/provider';
import { createSession, revokeSession, type SessionUser } from '@/lib/auth/session';
import { verifyPassword } from '@/lib/auth/password';
import { findUserByPhone, findUserRole, insertUserIfAbsent } from '@/lib/auth/user.repository';
import { issueLoginDevice, verifyLoginDevice, verifyPasswordDevice } from '@/lib/auth/login-device';

export const CODE_TTL_SECONDS = 5 * 60;
export const MAX_CODE_TRIES = 5;

export const phoneSchema = z.string().trim().regex(/^1[3-9]\d{9}$/, '请输入正确的手机号');
export const codeSchema = z.string().trim().regex(/^\d{6}$/, '验证码为 6 位数字');
export const passwordSchema = z.string().min(6, '密码至少 6 位').max(128, '密码过长');

export const sendCodeInput = z.object({ phone: phoneSchema }).strict();
export const loginInput = z.union([
  z.object({ phone: phoneSchema, code: codeSchema }).strict(),
  z.object({ phone: phoneSchema, password: passwordSchema }).strict(),
]);
export type LoginInput = z.infer<typeof loginInput>;

/**
 * Sends a login code. Counted per client address (hourly), per phone (one a minute: the code just
 * sent is on the phone anyway), and per phone and day twice: per asking client (its address, or a
 * login device of this phone it presents) and, for clients without such a device, against the
 * phone's ceiling. So a stranger asking for a consumer's phone uses up their own allowance, not the
 * owner's day, and the owner's own device is never held back by the ceiling strangers reach.
 */
export async function sendLoginCode(redis: RedisClient, phone: string, ip: string, device?: string): Promise<void> {
  const deviceId = verifyLoginDevice(device, phone)?.id ?? null;
  const client = `${phone}:${deviceId ? `d:${deviceId}` : ip}`;
  await consume('smsIpHourly', ip);
  await consume('smsPhoneCooldown', phone);
  await consume('smsPhoneClientDaily', client);
  if (!deviceId) await consume('smsPhoneDaily', phone);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  try {
    await redis.multi().set(keys.loginCode(phone), code, 'EX', CODE_TTL_SECONDS).del(keys.loginCodeTries(phone)).exec();
    await smsProvider(redis).sendLoginCode(phone, code, CODE_TTL_SECONDS);
  } catch (e) {
    // Nothing sent: the counts go back.
    const counted = [refund('smsPhoneCooldown', phone), refund('smsPhoneClientDaily', client), refund('smsIpHourly', ip)];
    if (!deviceId) counted.push(refund('smsPhoneDaily', phone));
    await Promise.all(counted);
    throw e;
  }
}

export interface LoginResult {
  token: string;
  user: SessionUser;
  /**
   * This client's login-device token (the one it presented, if still valid, else a new one).
   * Presented again (cookie or header), it spares the client the phone's global ceilings: of wrong
   * passwords (lib/auth/password-guard.ts) and of code requests (sendLoginCode).
   */
  deviceToken?: string;
}

/**
 * `ip` is the client address (lib/http/client-ip.ts): password tries are limited per client.
 * `device` is the login-device token the client presented, if any (verified here, for this phone).
 */
export async function login(db: Executor, redis: RedisClient, input: LoginInput, ip: string, device?: string): Promise<LoginResult> {
  if ('code' in input) {
    const dto = toSessionUser(await checkCode(db, redis, input.phone, input.code));
    // A device of this phone from now on: its code requests are counted on their own (sendLoginCode).
    // An SMS device only: a code proves the phone, not the password, so it skips no password limit.
    return { token: await sessionAsRoleStands(db, redis, dto), user: dto, deviceToken: verifyLoginDevice(device, input.phone) ? device! : issueLoginDevice(input.phone, 'sms') };
  }
  // Only a device that logged in with the password before is spared the password limits.
  const deviceId = verifyPasswordDevice(device, input.phone);
  const dto = toSessionUser(await checkPassword(db, input.phone, input.password, ip, deviceId));
  return { token: await sessionAsRoleStands(db, redis, dto), user: dto, deviceToken: deviceId ? device! : issueLoginDevice(input.phone, 'password') };
}

/**
 * The session, then the role read again: a role change (lib/admin/user-role.ts) that committed
 * while this login was checking the password or the code revoked the sessions it found, and this
 * one was not among them yet, so it would keep the role read before — a demoted merchant keeping
 * the console as long as they use it. Read after the token is in the user's index: a change
 * committed later revokes it; one committed earlier is seen here, and the session is revoked and
 * the login refused (log in again: as the role is now).
 */
async function sessionAsRoleStands(db: Executor, redis: RedisClient, dto: SessionUser): Promise<string> {
  const token = await createSession(redis, dto);
  if ((await findUserRole(db, dto.id)) === dto.role) return token;
  await revokeSession(redis, token);
  throw new AppError('CONFLICT', '账号权限刚刚变更，请重新登录');
}

async function checkCode(db: Executor, redis: RedisClient, phone: string, code: string): Promise<User> {
  const r = await runScript<number>(redis, 'login-check-code', [keys.loginCode(phone), keys.loginCodeTries(phone)], [code, MAX_CODE_TRIES]);
  if (r === -1) throw new AppError('CODE_EXPIRED', '验证码已失效，请重新获取');
  if (r === -2) throw new AppError('CODE_INVALID', '验证码错误次数过多，请重新获取');
  if (r !== 1) throw new AppError('CODE_INVALID', '验证码错误');
  const user = await insertUserIfAbsent(db, { phone, nick_name: randomNickName(), password: null });
  // A text message is not enough to open a merchant's or the admin's account: password only.
  if (user.role !== 'user') throw new AppError('PASSWORD_REQUIRED', PASSWORD_REQUIRED_MESSAGE);
  return user;
}

async function checkPassword(db: Executor, phone: string, password: string, ip: string, deviceId: string | null): Promise<User> {
  await beforePasswordCheck(phone, ip, deviceId);
  const user = await findUserByPhone(db, phone);
  const ok = await verifyPassword(password, user?.password ?? null);
  if (!user || !ok) return afterPasswordFailure(db, phone, ip, user);
  await afterPasswordSuccess(phone, ip, deviceId);
  return user;
}

export function toSessionUser(u: User): SessionUser {
  return { id: String(u.id), nickName: u.nick_name, icon: u.icon, role: u.role };
}

const NICK_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
export function randomNickName(): string {
  let s = 'user_';
  for (let i = 0; i < 10; i++) s += NICK_ALPHABET[randomInt(0, NICK_ALPHABET.length)];
  return s;
}
