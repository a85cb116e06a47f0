/**
 * Sessions per user are capped (SESSION_MAX_PER_USER, 3 in this file): a login beyond it revokes the
 * user's oldest sessions (by the time their token carries), so the newest stay; concurrent logins
 * under the cap all stay valid, and concurrent logins past it from two processes end with exactly the
 * newest sessions live, every one of them in the user's index (revocable). Before, every login
 * added a session for good: a client could hold as many Redis keys as it logged in times.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';

const saved = vi.hoisted(() => {
  const s = process.env.SESSION_MAX_PER_USER;
  process.env.SESSION_MAX_PER_USER = '3';
  return s;
});
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, createRedis, redis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { createSession, newestFirst, newSessionToken } from '@/lib/auth/session';
import { resetLimit } from '@/lib/rate-limit';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { GET as meRoute } from '@/app/api/user/me/route';

const CAP = 3;

afterAll(async () => {
  await closeDb();
  await closeRedis();
  if (saved === undefined) delete process.env.SESSION_MAX_PER_USER;
  else process.env.SESSION_MAX_PER_USER = saved;
});

const authenticates = async (token: string) => (await callRoute(meRoute, { token })).status === 200;
const statuses = (tokens: string[]) => Promise.all(tokens.map(authenticates));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sessions per user', () => {
  it('reads the cap from SESSION_MAX_PER_USER', () => {
    expect(env.SESSION_MAX_PER_USER).toBe(CAP);
  });

  it('logins past the cap (through the real SMS login): the oldest sessions stop authenticating, the newest stay', async () => {
    const first = await loginNewUser();
    const tokens = [first.token];
    for (let i = 1; i < CAP + 2; i++) {
      await resetLimit('smsPhoneCooldown', first.phone); // one code a minute per phone otherwise
      await pause(2); // each token its own millisecond: "oldest" is unambiguous
      tokens.push((await loginNewUser(first.phone)).token);
    }
    expect(await statuses(tokens)).toEqual([false, false, true, true, true]);
    expect((await redis.smembers(keys.userSessions(first.userId))).sort()).toEqual(tokens.slice(-CAP).sort());
    for (const t of tokens.slice(0, 2)) expect(await redis.exists(keys.session(t))).toBe(0);
  });

  it('concurrent logins under the cap from two processes all stay valid', async () => {
    const users = await createTestUsers(db, redis, 10); // each holds one session already
    const other = createRedis(env.REDIS_URL);
    try {
      for (const u of users) {
        const user = { id: u.userId, nickName: 'cap', icon: '', role: 'user' as const };
        const made = await Promise.all([createSession(redis, user), createSession(other, user)]);
        const all = [u.token, ...made];
        expect(await statuses(all)).toEqual([true, true, true]);
        expect((await redis.smembers(keys.userSessions(u.userId))).sort()).toEqual(all.sort());
      }
    } finally {
      other.disconnect();
    }
  });

  it('a storm of logins from two processes ends with exactly the newest sessions live, all indexed; the older ones revoked', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    const user = { id: u!.userId, nickName: 'storm', icon: '', role: 'user' as const };
    const other = createRedis(env.REDIS_URL);
    const series = async (client: RedisClient) => {
      const out: string[] = [];
      for (let i = 0; i < 30; i++) out.push(await createSession(client, user));
      return out;
    };
    const tokens = [u!.token, ...(await Promise.all([series(redis), series(other), series(redis), series(other)])).flat()];
    other.disconnect();
    const newest = [...tokens].sort(newestFirst()).slice(0, CAP);
    const alive = await Promise.all(tokens.map(async (t) => (await redis.exists(keys.session(t))) === 1));
    expect(tokens.filter((_, i) => alive[i]).sort()).toEqual(newest.sort());
    expect(await statuses(newest)).toEqual([true, true, true]);
    const indexed = new Set(await redis.smembers(keys.userSessions(user.id)));
    expect(newest.filter((t) => !indexed.has(t))).toEqual([]);
  });

  it('an old-ranked session still being written (index, then session) is not dropped from the index: the next login revokes it', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    const user = { id: u!.userId, nickName: 'writing', icon: '', role: 'user' as const };
    // Another login's token, made 5 s ago and indexed, whose session write has not landed yet: the
    // oldest but one. Dropping it from the index now would leave its session, once written, live
    // and out of reach of every revocation (and of the cap).
    const beingWritten = newSessionToken(Date.now() - 5000);
    await redis.sadd(keys.userSessions(user.id), beingWritten);
    const made: string[] = [];
    for (let i = 0; i < CAP; i++) {
      await pause(2);
      made.push(await createSession(redis, user));
    }
    expect(await authenticates(u!.token)).toBe(false); // the oldest, live: revoked
    expect(await redis.sismember(keys.userSessions(user.id), beingWritten)).toBe(1);
    await redis.hset(keys.session(beingWritten), { ...user });
    await redis.expire(keys.session(beingWritten), 600);
    expect(await authenticates(beingWritten)).toBe(true);
    await pause(2);
    made.push(await createSession(redis, user));
    expect(await statuses([beingWritten, ...made])).toEqual([false, false, true, true, true]);
    expect((await redis.smembers(keys.userSessions(user.id))).sort()).toEqual(made.slice(-CAP).sort());
  });

  it('a token from before tokens carried a time (it reads as later than now) counts as the oldest', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    const user = { id: u!.userId, nickName: 'legacy', icon: '', role: 'user' as const };
    const legacy = newSessionToken(Date.now() + 10 * 365 * 86_400_000);
    await redis.sadd(keys.userSessions(user.id), legacy);
    await redis.hset(keys.session(legacy), { ...user });
    await redis.expire(keys.session(legacy), 600);
    await pause(2);
    const made = [await createSession(redis, user)];
    await pause(2);
    made.push(await createSession(redis, user));
    expect(await statuses([legacy, u!.token, ...made])).toEqual([false, true, true, true]);
  });
});
