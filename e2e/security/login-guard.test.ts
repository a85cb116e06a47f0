/**
 * Account login guards (proof suite): an SMS code never opens a merchant or admin account, and a
 * stranger guessing a merchant's password cannot lock the owner out, while the guessing itself is
 * slowed and audited. Requests carry the peer header as the project's server writes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { hashPassword } from '@/lib/auth/password';
import { sendLoginCode } from '@/lib/auth/login';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { callRoute, randomPhone } from '@/e2e/support/helpers';
import { resetLimit } from '@/lib/rate-limit';
import { POST as loginRoute } from '@/app/api/user/login/route';
import { LOGIN_DEVICE_COOKIE, LOGIN_DEVICE_HEADER } from '@/lib/auth/login-device';
import { authOptions } from '@/lib/web/auth-options';

type Authorize = (credentials: Record<string, string>, req: { headers: Record<string, string> }) => Promise<{ id: string } | null>;
const webAuthorize = (authOptions.providers[0] as unknown as { options: { authorize: Authorize } }).options.authorize;

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

async function privileged(role: 'merchant' | 'admin', password: string) {
  const phone = randomPhone();
  await db.insertInto('tb_user').values({ phone, nick_name: `guard-${role}`, role, password: await hashPassword(password) }).execute();
  const row = await db.selectFrom('tb_user').select('id').where('phone', '=', phone).executeTakeFirstOrThrow();
  return { phone, id: String(row.id) };
}

const from = (ip: string) => ({ [PEER_HEADER]: ip });

describe('SMS login of a privileged phone', () => {
  it.each(['merchant', 'admin'] as const)('a valid code for a %s creates no session and points to the password form', async (role) => {
    const { phone, id } = await privileged(role, 'right-pw-1');
    await sendLoginCode(redis, phone, '198.51.100.20');
    const code = await redis.get(keys.devSms(phone));
    const r = await callRoute(loginRoute, { body: { phone, code }, headers: from('198.51.100.20') });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('PASSWORD_REQUIRED');
    expect(r.json.data).toBeUndefined();
    expect(await redis.scard(keys.userSessions(id))).toBe(0);
    // the password still works
    const ok = await callRoute(loginRoute, { body: { phone, password: 'right-pw-1' }, headers: from('198.51.100.20') });
    expect(ok.status).toBe(200);
    expect(ok.json.data.user.role).toBe(role);
  });
});

describe('password guessing', () => {
  // The per-client windows last 15 minutes: a second run within them must start from zero too.
  beforeAll(() => Promise.all(['203.0.113.66', '203.0.113.67', '198.51.100.30'].map((ip) => resetLimit('passwordLoginClient', ip))));

  it("a stranger's wrong passwords do not lock the owner out; the stranger is slowed and audited", async () => {
    expect(env.RATE_LIMITS, 'this proof needs the limits on').toBe(true);
    const { phone, id } = await privileged('merchant', 'owner-pw-1');
    const attacker = from('203.0.113.66');
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) statuses.push((await callRoute(loginRoute, { body: { phone, password: `guess-${i}` }, headers: attacker })).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429, 429, 429]);
    // even the right password from the attacker's address waits now…
    expect((await callRoute(loginRoute, { body: { phone, password: 'owner-pw-1' }, headers: attacker })).status).toBe(429);
    // …but the owner, from their own network, logs in.
    const owner = await callRoute(loginRoute, { body: { phone, password: 'owner-pw-1' }, headers: from('198.51.100.30') });
    expect(owner.status).toBe(200);
    const audited = await db.selectFrom('tb_audit_log').select(['action', 'after_json']).where('target_type', '=', 'user').where('target_id', '=', id).execute();
    expect(audited).toHaveLength(10);
    expect(audited.every((a) => a.action === 'auth.password-failed' && a.after_json?.includes('203.0.113.66'))).toBe(true);
  });

  it('one client walking many phones meets the per-client cap', async () => {
    const ip = '203.0.113.67';
    let limited = 0;
    for (let i = 0; i < 105; i++) {
      const r = await callRoute(loginRoute, { body: { phone: randomPhone(), password: 'whatever-1' }, headers: from(ip) });
      if (r.status === 429) limited++;
    }
    expect(limited).toBe(5);
  });
});

describe("the owner's login device", () => {
  const login = (phone: string, password: string, ip: string, extra: Record<string, string> = {}) =>
    callRoute(loginRoute, { body: { phone, password }, headers: { ...from(ip), ...extra } });

  /** 20 addresses × 10 wrong passwords at once: the phone's global ceiling (200 / h) is used up. */
  async function exhaustCeiling(phone: string, net: string) {
    const ips = Array.from({ length: 20 }, (_, i) => `${net}.${i + 1}`);
    await Promise.all(ips.map((ip) => resetLimit('passwordLoginClient', ip)));
    const statuses = (await Promise.all(ips.map(async (ip) => {
      const out: number[] = [];
      for (let i = 0; i < 10; i++) out.push((await login(phone, `wrong-${i}`, ip)).status);
      return out;
    }))).flat();
    expect(statuses.filter((s) => s === 401)).toHaveLength(200);
    // the ceiling holds for every client without the owner's device, even with the right password
    const fresh = await login(phone, 'owner-pw-2', '192.0.2.200');
    expect(fresh.status).toBe(429);
    expect(Number(fresh.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  it('a crowd using up the per-phone ceiling does not lock out the device the owner logged in on; forged or foreign devices are not exempt', async () => {
    expect(env.RATE_LIMITS, 'this proof needs the limits on').toBe(true);
    const owner = await privileged('merchant', 'owner-pw-2');
    const other = await privileged('merchant', 'other-pw-2');
    await Promise.all(['192.0.2.10', '192.0.2.11', '192.0.2.12', '192.0.2.200', '192.0.2.201'].map((ip) => resetLimit('passwordLoginClient', ip)));

    // The owner logged in once before: a signed, httpOnly device cookie, and the same token for API clients.
    const first = await login(owner.phone, 'owner-pw-2', '192.0.2.10');
    expect(first.status).toBe(200);
    const device = first.json.data.deviceToken as string;
    expect(device).toMatch(/^[\w-]{22}\.\d+\.p\.[\w-]{43}$/);
    const setCookie = first.headers.get('set-cookie') ?? '';
    expect(setCookie).toContain(`${LOGIN_DEVICE_COOKIE}=${device}`);
    expect(setCookie).toMatch(/HttpOnly/i);
    const foreign = (await login(other.phone, 'other-pw-2', '192.0.2.10')).json.data.deviceToken as string;

    await exhaustCeiling(owner.phone, '203.0.113');

    // From a new address, by cookie and by header: the owner is in.
    const byCookie = await login(owner.phone, 'owner-pw-2', '192.0.2.11', { cookie: `${LOGIN_DEVICE_COOKIE}=${device}` });
    expect(byCookie.status).toBe(200);
    expect(byCookie.json.data.user.id).toBe(owner.id);
    expect(byCookie.json.data.deviceToken).toBe(device);
    expect((await login(owner.phone, 'owner-pw-2', '192.0.2.12', { [LOGIN_DEVICE_HEADER]: device })).status).toBe(200);
    // The browser's sign-in (next-auth's credentials provider) reads the same cookie.
    const browser = (cookie: string) => webAuthorize({ phone: owner.phone, password: 'owner-pw-2' }, { headers: { [PEER_HEADER]: '192.0.2.13', cookie } });
    await expect(browser(`${LOGIN_DEVICE_COOKIE}=${device}`)).resolves.toMatchObject({ id: owner.id });
    await expect(browser(`${LOGIN_DEVICE_COOKIE}=${foreign}`)).rejects.toThrow(/密码错误次数过多/);

    // Nor does a stranger stuffing credentials from the owner's own network lock the device out.
    await resetLimit('passwordLoginClient', '192.0.2.14');
    for (let i = 0; i < 100; i++) await login(randomPhone(), 'whatever-1', '192.0.2.14');
    expect((await login(randomPhone(), 'whatever-1', '192.0.2.14')).status).toBe(429);
    expect((await login(owner.phone, 'owner-pw-2', '192.0.2.14', { [LOGIN_DEVICE_HEADER]: device })).status).toBe(200);

    // A forged signature, another phone's device, a tampered id: the ceiling applies.
    const [id, at, kind, sig] = device.split('.') as [string, string, string, string];
    expect(kind).toBe('p');
    const forged = [
      `${id}.${at}.p.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`,
      foreign,
      `${'A'.repeat(22)}.${at}.p.${sig}`,
      `${id}.${Number(at) + 1}.p.${sig}`,
      `${id}.${at}.s.${sig}`, // the kind is signed too
      `${id}.${at}.${sig}`, // the format before devices had a kind
    ];
    for (const token of forged) {
      expect((await login(owner.phone, 'owner-pw-2', '192.0.2.201', { cookie: `${LOGIN_DEVICE_COOKIE}=${token}` })).status, token).toBe(429);
      expect((await login(owner.phone, 'owner-pw-2', '192.0.2.201', { [LOGIN_DEVICE_HEADER]: token })).status, token).toBe(429);
    }
  });

  it('a device hashes at most 10 passwords in 15 minutes, right ones too', async () => {
    // A right password used to reset the device's count: with its device and its password a
    // merchant's client could make the server hash (scrypt, ~50 ms of the thread pool) without end.
    const owner = await privileged('merchant', 'owner-pw-4');
    await Promise.all(['192.0.2.30', '192.0.2.31'].map((ip) => resetLimit('passwordLoginClient', ip)));
    const device = (await login(owner.phone, 'owner-pw-4', '192.0.2.30')).json.data.deviceToken as string;
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await login(owner.phone, 'owner-pw-4', '192.0.2.31', { [LOGIN_DEVICE_HEADER]: device })).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
  });

  it('a device earned by an SMS code skips no password limit', async () => {
    // Anyone can log in by SMS to a phone of their own and mint devices (~30 an hour per address):
    // when those skipped the per-address cap, each one bought 10 more hashed password tries.
    const phone = randomPhone();
    await resetLimit('smsIpHourly', '192.0.2.40');
    await resetLimit('passwordLoginClient', '192.0.2.40');
    await sendLoginCode(redis, phone, '192.0.2.40');
    const sms = await callRoute(loginRoute, { body: { phone, code: await redis.get(keys.devSms(phone)) }, headers: from('192.0.2.40') });
    expect(sms.status).toBe(200);
    const device = sms.json.data.deviceToken as string;
    expect(device.split('.')[2]).toBe('s');
    // The address uses up its 100 password tries across phones; the SMS device does not get it past.
    for (let i = 0; i < 100; i++) await login(randomPhone(), 'whatever-1', '192.0.2.40');
    expect((await login(phone, 'whatever-1', '192.0.2.40', { [LOGIN_DEVICE_HEADER]: device })).status).toBe(429);
  });

  it("the device keeps a limit of its own: a thief of the cookie gets 10 tries, not the ceiling's 200", async () => {
    const owner = await privileged('merchant', 'owner-pw-3');
    await Promise.all(['192.0.2.20', '192.0.2.21'].map((ip) => resetLimit('passwordLoginClient', ip)));
    const device = (await login(owner.phone, 'owner-pw-3', '192.0.2.20')).json.data.deviceToken as string;
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await login(owner.phone, `guess-${i}`, '192.0.2.21', { [LOGIN_DEVICE_HEADER]: device })).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
  });
});
