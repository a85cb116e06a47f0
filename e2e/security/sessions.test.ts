/**
 * Sessions (proof suite): a logged-in visitor reading public routes stays logged in (the TTL
 * slides on any request that carries a valid session), the per-user token index drops expired
 * tokens, and a role change revokes every live session of that user.
 */
import { encode } from 'next-auth/jwt';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { SESSION_COOKIE } from '@/lib/auth/cookie';
import { createSession } from '@/lib/auth/session';
import { login } from '@/lib/auth/login';
import { hashPassword } from '@/lib/auth/password';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { waitFor } from '@/e2e/support/fixtures/seckill';
import { resetLimit } from '@/lib/rate-limit';
import { createConsoleFixture } from '@/e2e/support/fixtures/admin';
import { GET as shopTypesRoute } from '@/app/api/shop-types/route';
import { GET as meRoute } from '@/app/api/user/me/route';
import { PATCH as roleRoute } from '@/app/api/admin/users/[id]/route';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

const ttl = (token: string) => redis.ttl(keys.session(token));

describe('sliding sessions on public routes', () => {
  it('a Bearer or cookie visitor reading a public route gets a fresh TTL; nobody else creates anything', async () => {
    const { token } = await loginNewUser();
    await redis.expire(keys.session(token), 5);
    expect((await callRoute(shopTypesRoute, { token })).status).toBe(200);
    await waitFor('slid (bearer)', async () => (await ttl(token)) > 60);

    await redis.expire(keys.session(token), 5);
    const cookie = `${SESSION_COOKIE}=${await encode({ token: { sessionToken: token }, secret: env.AUTH_SECRET })}`;
    expect((await callRoute(shopTypesRoute, { headers: { cookie } })).status).toBe(200);
    await waitFor('slid (cookie)', async () => (await ttl(token)) > env.SESSION_TTL_SECONDS - 60);

    // an unknown token slides nothing into existence (EXPIRE … XX on a missing key)
    const ghost = 'G'.repeat(43);
    await callRoute(shopTypesRoute, { token: ghost });
    await new Promise((r) => setTimeout(r, 100));
    expect(await redis.exists(keys.session(ghost))).toBe(0);
  });
});

describe('session index', () => {
  it('drops expired tokens at the next login', async () => {
    const first = await loginNewUser();
    const again = async () => {
      await resetLimit('smsPhoneCooldown', first.phone); // one code a minute per phone otherwise
      return loginNewUser(first.phone);
    };
    const second = await again();
    expect(await redis.scard(keys.userSessions(first.userId))).toBe(2);
    await redis.del(keys.session(first.token)); // expired
    await again();
    const members = await redis.smembers(keys.userSessions(first.userId));
    expect(members).toHaveLength(2);
    expect(members).toContain(second.token);
    expect(members).not.toContain(first.token);
  });
});

describe('role change', () => {
  it('revokes every live session of the user, is admin-only and audited', async () => {
    const f = await createConsoleFixture(db, redis);
    const other = await createSession(redis, { id: f.merchantA.id, nickName: 'm', icon: '', role: 'merchant' });
    const patch = (token: string, role: string) => callRoute(roleRoute, { method: 'PATCH', token, params: { id: f.merchantA.id }, body: { role } });

    expect((await patch(f.merchantB.token, 'user')).status).toBe(403);
    expect((await callRoute(meRoute, { token: other })).status).toBe(200);

    const r = await patch(f.admin.token, 'user');
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ role: 'user', changed: true, revokedSessions: 2 });
    for (const t of [f.merchantA.token, other]) expect((await callRoute(meRoute, { token: t })).status).toBe(401);
    const row = await db.selectFrom('tb_audit_log').select(['action', 'before_json', 'after_json']).where('target_type', '=', 'user').where('target_id', '=', f.merchantA.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ action: 'user.role-change', before_json: '{"role":"merchant"}', after_json: '{"role":"user"}' });
  });
  it('reaches the password logins in flight when it commits: none of them leaves a session with the old role', async () => {
    const f = await createConsoleFixture(db, redis);
    const phone = (await db.selectFrom('tb_user').select('phone').where('id', '=', f.merchantA.id).executeTakeFirstOrThrow()).phone;
    await db.updateTable('tb_user').set({ password: await hashPassword('merchant-pw-123') }).where('id', '=', f.merchantA.id).execute();
    // Eight logins (each from its own address: its own limit) are checking the password (~50 ms of
    // scrypt) when an admin demotes the merchant.
    const logins = Array.from({ length: 8 }, (_, i) => login(db, redis, { phone, password: 'merchant-pw-123' }, `198.51.100.${100 + i}`).catch((e: { code?: string }) => e.code ?? 'error'));
    await new Promise((r) => setTimeout(r, 25));
    expect((await callRoute(roleRoute, { method: 'PATCH', token: f.admin.token, params: { id: f.merchantA.id }, body: { role: 'user' } })).status).toBe(200);
    const outcomes = await Promise.all(logins);
    const roles = await Promise.all(outcomes.map(async (o) => (typeof o === 'string' ? o : ((await callRoute(meRoute, { token: o.token })).json?.data?.role ?? 'revoked'))));
    // A login either lands as the role is now, or is told to log in again (409) with its session revoked.
    expect(roles.filter((r) => r !== 'user' && r !== 'CONFLICT' && r !== 'revoked'), roles.join(',')).toEqual([]);
  });
});
