import { afterAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { callRoute, loginNewUser, randomPhone } from '@/e2e/support/helpers';
import { POST as sendCode } from '@/app/api/user/code/route';
import { POST as loginRoute } from '@/app/api/user/login/route';
import { POST as logoutRoute } from '@/app/api/user/logout/route';
import { GET as meRoute } from '@/app/api/user/me/route';
import { resetLimit } from '@/lib/rate-limit';
import { allKeys } from '@/lib/redis/keyspace';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

const userCount = async (phone: string) =>
  Number((await db.selectFrom('tb_user').select((eb) => eb.fn.countAll().as('n')).where('phone', '=', phone).executeTakeFirstOrThrow()).n);

async function freshCode(phone: string, ip = '10.1.1.1'): Promise<string> {
  await resetLimit('smsPhoneCooldown', phone);
  const r = await callRoute(sendCode, { body: { phone }, headers: { [PEER_HEADER]: ip } });
  expect(r.status).toBe(200);
  const code = await redis.get(keys.devSms(phone));
  expect(code).toMatch(/^\d{6}$/);
  return code!;
}

describe('SMS login', () => {
  it('sends a code, registers an unknown phone and answers /me with the Bearer token', async () => {
    const phone = randomPhone();
    const code = await freshCode(phone);
    expect(await redis.ttl(keys.loginCode(phone))).toBeGreaterThan(290);
    const r = await callRoute(loginRoute, { body: { phone, code } });
    expect(r.status).toBe(200);
    expect(r.json.data.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.json.data.user.nickName).toMatch(/^user_/);
    expect(r.json.data.user.role).toBe('user');
    expect(await userCount(phone)).toBe(1);

    const me = await callRoute(meRoute, { token: r.json.data.token });
    expect(me.status).toBe(200);
    expect(me.json.data.id).toBe(r.json.data.user.id);
  });

  it('a used code fails the second time', async () => {
    const phone = randomPhone();
    const code = await freshCode(phone);
    expect((await callRoute(loginRoute, { body: { phone, code } })).status).toBe(200);
    const again = await callRoute(loginRoute, { body: { phone, code } });
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('CODE_EXPIRED');
  });

  it('five wrong codes burn the code, even the right one fails afterwards', async () => {
    const phone = randomPhone();
    const code = await freshCode(phone);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) {
      const r = await callRoute(loginRoute, { body: { phone, code: wrong } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('CODE_INVALID');
    }
    const fifth = await callRoute(loginRoute, { body: { phone, code: wrong } });
    expect(fifth.json.error.message).toContain('次数过多');
    expect(await redis.exists(keys.loginCode(phone))).toBe(0);
    const right = await callRoute(loginRoute, { body: { phone, code } });
    expect(right.status).toBe(400);
    expect(await userCount(phone)).toBe(0);
  });

  it('concurrent logins with one code: exactly one wins', async () => {
    const phone = randomPhone();
    const code = await freshCode(phone);
    const results = await Promise.all(Array.from({ length: 20 }, () => callRoute(loginRoute, { body: { phone, code } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await userCount(phone)).toBe(1);
  });

  it.each([
    ['malformed phone', { phone: '12345678901' }],
    ['phone with letters', { phone: '1381234567a' }],
    ['phone as number', { phone: 13812345678 }],
    ['extra field', { phone: '13812345678', admin: true }],
    ['missing phone', {}],
  ])('send code: %s → 400, nothing written', async (_name, body) => {
    // Compare key sets, not counts: other files' short-lived keys may expire meanwhile.
    const before = new Set(await allKeys(redis));
    const r = await callRoute(sendCode, { body });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION');
    expect((await allKeys(redis)).filter((k) => !before.has(k))).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"phone": "13812345678"', 'BAD_REQUEST'],
    ['code too short', JSON.stringify({ phone: '19912345678', code: '123' }), 'VALIDATION'],
    ['code not digits', JSON.stringify({ phone: '19912345678', code: 'abcdef' }), 'VALIDATION'],
    ['both code and password', JSON.stringify({ phone: '19912345678', code: '123456', password: 'x' }), 'VALIDATION'],
    ['array body', '[]', 'VALIDATION'],
  ])('login: %s → 400, nothing written', async (_name, rawBody, code) => {
    const users = await db.selectFrom('tb_user').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const r = await callRoute(loginRoute, { rawBody, method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe(code);
    const after = await db.selectFrom('tb_user').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(users.n);
  });

  it('non-JSON content type → 415', async () => {
    const r = await callRoute(sendCode, { rawBody: 'phone=13812345678', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).toBe(415);
  });
});

describe('rate limits', () => {
  it('a second code within the cooldown → 429 with Retry-After', async () => {
    const phone = randomPhone();
    await freshCode(phone);
    const r = await callRoute(sendCode, { body: { phone }, headers: { [PEER_HEADER]: '10.2.2.2' } });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(r.json.error.code).toBe('RATE_LIMITED');
  });

  it('codes a day per phone: 10 for one client, 30 for every client without a device of the phone; a stranger never uses up the owner\'s day', async () => {
    const phone = randomPhone();
    const send = async (ip: string, device?: string) => {
      await resetLimit('smsPhoneCooldown', phone); // a minute passing
      return callRoute(sendCode, { body: { phone }, headers: { [PEER_HEADER]: ip, ...(device ? { 'x-login-device': device } : {}) } });
    };
    // The owner logs in once by code: their client is a device of this phone from now on.
    const login = await callRoute(loginRoute, { body: { phone, code: await freshCode(phone, '10.3.9.9') }, headers: { [PEER_HEADER]: '10.3.9.9' } });
    expect(login.status).toBe(200);
    const device = login.json.data.deviceToken as string;
    expect(device).toMatch(/^[\w-]{22}\.\d+\.s\.[\w-]{43}$/);
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly/);
    // A stranger's address: 10 codes a day for this phone, then 429 for that address only.
    for (let i = 0; i < 10; i++) expect((await send('10.3.0.1')).status).toBe(200);
    const tenth = await send('10.3.0.1');
    expect(tenth.status).toBe(429);
    expect(tenth.json.error.message).toContain('上限');
    // The owner from another network is not held back by that stranger.
    expect((await send('10.3.5.5')).status).toBe(200);
    // Strangers from many addresses reach the phone's ceiling (30 from clients without a device)…
    for (let i = 0; i < 18; i++) expect((await send(`10.3.1.${i}`)).status).toBe(200);
    expect((await send('10.3.2.1')).json.error.message).toContain('该手机号');
    // …which the owner's own device is not counted against.
    expect((await send('10.3.2.2', device)).status).toBe(200);
  });

  // The address as the project's server writes it from the socket (lib/http/client-ip.ts).
  it('one IP asking for many phones hits the per-IP cap', async () => {
    const ip = `10.4.${Date.now() % 250}.9`;
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      statuses.push((await callRoute(sendCode, { body: { phone: randomPhone() }, headers: { [PEER_HEADER]: ip } })).status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe('sessions', () => {
  it('logout revokes the token everywhere → 401', async () => {
    const { token } = await loginNewUser();
    expect((await callRoute(meRoute, { token })).status).toBe(200);
    expect((await callRoute(logoutRoute, { token, method: 'POST' })).status).toBe(200);
    const me = await callRoute(meRoute, { token });
    expect(me.status).toBe(401);
    expect(me.json.error.code).toBe('UNAUTHORIZED');
  });

  it('forged and malformed tokens → 401', async () => {
    for (const token of ['x'.repeat(43), 'not-a-token', "' OR 1=1 --"]) {
      expect((await callRoute(meRoute, { token })).status).toBe(401);
    }
    expect((await callRoute(meRoute, { headers: { authorization: 'Basic abc' } })).status).toBe(401);
  });

  it('every authenticated request slides the 30-minute TTL', async () => {
    const { token } = await loginNewUser();
    await redis.expire(keys.session(token), 60);
    expect(await redis.ttl(keys.session(token))).toBeLessThanOrEqual(60);
    expect((await callRoute(meRoute, { token })).status).toBe(200);
    expect(await redis.ttl(keys.session(token))).toBeGreaterThan(1790);
  });

  it('an expired session → 401', async () => {
    const { token } = await loginNewUser();
    await redis.del(keys.session(token));
    expect((await callRoute(meRoute, { token })).status).toBe(401);
  });
});

describe('password login', () => {
  it('a merchant logs in with phone + password; a wrong password → 401', async () => {
    const { hashPassword } = await import('@/lib/auth/password');
    const phone = randomPhone();
    await db.insertInto('tb_user').values({ phone, nick_name: 'm', role: 'merchant', password: await hashPassword('s3cret-pw') }).execute();
    const ok = await callRoute(loginRoute, { body: { phone, password: 's3cret-pw' } });
    expect(ok.status).toBe(200);
    expect(ok.json.data.user.role).toBe('merchant');
    const bad = await callRoute(loginRoute, { body: { phone, password: 'wrong-pw' } });
    expect(bad.status).toBe(401);
    const none = await callRoute(loginRoute, { body: { phone: randomPhone(), password: 'whatever' } });
    expect(none.status).toBe(401);
  });
});
