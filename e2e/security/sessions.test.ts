/**
 * Sessions (proof suite): a logged-in visitor reading public routes stays logged in (the TTL
 * slides on any request that carries a valid session), the per-user token index drops expired
 * tokens, and a role change revokes every live session of that user.
 */
import { encode } from 'next-auth/jwt';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, createRedis, redis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { SESSION_COOKIE } from '@/lib/auth/cookie';
import { createSession, newSessionToken, pruneSessionIndex } from '@/lib/auth/session';
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
    // An expired session of two minutes ago, and one another login is still writing (index first,
    // then the session): the first goes, the second stays (dropping it left a live session that
    // no revocation could find).
    const expired = newSessionToken(Date.now() - 120_000);
    const beingWritten = newSessionToken();
    await redis.sadd(keys.userSessions(first.userId), expired, beingWritten);
    await redis.del(keys.session(first.token)); // expired too, but made this minute
    const third = await again();
    const members = await redis.smembers(keys.userSessions(first.userId));
    expect(members).not.toContain(expired);
    expect(members).toEqual(expect.arrayContaining([second.token, third.token, beingWritten]));
    // A minute later the young ones without a session go as well.
    await pruneSessionIndex(redis, first.userId, Date.now() + 61_000);
    expect((await redis.smembers(keys.userSessions(first.userId))).sort()).toEqual([second.token, third.token].sort());
  });

  it('concurrent logins of one user from two processes never leave a live session out of the index', async () => {
    const f = await createConsoleFixture(db, redis);
    const user = { id: f.merchantA.id, nickName: 'race', icon: '', role: 'merchant' as const };
    // Two web processes (each its own Redis connection), each logging the same merchant in 100
    // times in a row: on the old pruning 3-6 of 200 live sessions fell out of the index, and after
    // a demotion one of them still opened the console. Past SESSION_MAX_PER_USER the oldest are
    // revoked (e2e/security/session-cap.test.ts): the newest stay live, every one in the index.
    const other = createRedis(env.REDIS_URL);
    const series = async (client: RedisClient) => {
      const out: string[] = [];
      for (let i = 0; i < 100; i++) out.push(await createSession(client, user));
      return out;
    };
    const tokens = (await Promise.all([series(redis), series(other)])).flat();
    other.disconnect();
    const indexed = new Set(await redis.smembers(keys.userSessions(user.id)));
    const live = (await Promise.all(tokens.map(async (t) => ((await redis.exists(keys.session(t))) === 1 ? t : null)))).filter((t) => t !== null);
    expect(live).toHaveLength(env.SESSION_MAX_PER_USER);
    expect(live.filter((t) => !indexed.has(t))).toEqual([]);
    const demote = await callRoute(roleRoute, { method: 'PATCH', token: f.admin.token, params: { id: user.id }, body: { role: 'user' } });
    expect(demote.status).toBe(200);
    const alive = await Promise.all(tokens.map((t) => redis.exists(keys.session(t))));
    expect(alive.filter((a) => a === 1)).toHaveLength(0);
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
