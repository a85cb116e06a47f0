/**
 * The per-process session cache (lib/auth/session-cache.ts) on real Redis: a cached session is
 * answered without a Redis command, a logout or a revocation made by another client is refused
 * within the pub/sub latency, a deletion nobody announced is refused once the bound has passed,
 * and nothing is cached while the subscriber is down. Commands are counted by wrapping the command
 * client's sendCommand (one node and Cluster alike).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// The suites run with the cache off (e2e/support/setup-env.ts); these tests turn it on, at its product default.
const savedCacheMs = vi.hoisted(() => {
  const s = process.env.SESSION_CACHE_MS;
  process.env.SESSION_CACHE_MS = '1000';
  return s;
});
import Redis from 'ioredis';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis, createRedis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { resolveCaller } from '@/lib/auth/resolve';
import { revokeSession, revokeUserSessions } from '@/lib/auth/session';
import { openSessionCache, SessionCache, type SessionCacheHandle } from '@/lib/auth/session-cache';
import { createTestUsers, waitFor } from '@/e2e/support/fixtures/seckill';

let other: RedisClient;
let handle: SessionCacheHandle;
const sent: string[][] = [];

beforeAll(async () => {
  other = createRedis();
  handle = openSessionCache(redis);
  await waitFor('the session cache subscribed', async () => handle.cache.isTrusted);
  const original = redis.sendCommand.bind(redis) as (...a: unknown[]) => unknown;
  (redis as unknown as { sendCommand: (...a: unknown[]) => unknown }).sendCommand = (cmd: unknown, ...rest: unknown[]) => {
    const c = cmd as { name: string; args: unknown[] };
    sent.push([c.name, ...c.args.map(String)]);
    return original(cmd, ...rest);
  };
});

afterAll(async () => {
  await other.quit();
  await Promise.all([closeDb(), closeRedis()]);
  if (savedCacheMs === undefined) delete process.env.SESSION_CACHE_MS;
  else process.env.SESSION_CACHE_MS = savedCacheMs;
});

const bearer = (token: string) => new Headers({ authorization: `Bearer ${token}` });

async function sessionCommands(token: string, fn: () => Promise<unknown>): Promise<number> {
  const from = sent.length;
  await fn();
  return sent.slice(from).filter((c) => c.some((a) => a === keys.session(token))).length;
}

/** Polls resolveCaller until it refuses the token; returns how long that took. */
async function refusedWithin(token: string, ms: number): Promise<number> {
  const t0 = Date.now();
  await waitFor('the token refused', async () => (await resolveCaller(bearer(token))) === null, ms, 2);
  return Date.now() - t0;
}

describe('session cache', () => {
  it('a session read once is answered without Redis until its bound, then read (and slid) again', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    expect(await sessionCommands(u!.token, async () => resolveCaller(bearer(u!.token)))).toBe(1);
    let callers: unknown[] = [];
    expect(
      await sessionCommands(u!.token, async () => {
        callers = await Promise.all(Array.from({ length: 20 }, () => resolveCaller(bearer(u!.token))));
      }),
    ).toBe(0);
    for (const c of callers) expect(c).toMatchObject({ user: { id: u!.userId, role: 'user' }, via: 'bearer' });
    await new Promise((r) => setTimeout(r, env.SESSION_CACHE_MS + 20));
    expect(await sessionCommands(u!.token, async () => resolveCaller(bearer(u!.token)))).toBe(1);
  });

  it('logout by another client: refused within the pub/sub latency', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    expect(await resolveCaller(bearer(u!.token))).not.toBeNull();
    expect(handle.cache.get(u!.token)).not.toBeNull();
    await revokeSession(other, u!.token);
    expect(await refusedWithin(u!.token, 200)).toBeLessThan(200);
  });

  it('revokeUserSessions (role change, log out everywhere) by another client: every token refused', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    const { createSession } = await import('@/lib/auth/session');
    const second = await createSession(redis, { id: u!.userId, nickName: '', icon: '', role: 'user' });
    for (const t of [u!.token, second]) expect(await resolveCaller(bearer(t))).not.toBeNull();
    await revokeUserSessions(other, u!.userId);
    for (const t of [u!.token, second]) expect(await refusedWithin(t, 200)).toBeLessThan(200);
  });

  it('a session deleted without any notice is refused once the bound has passed, never later', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    expect(await resolveCaller(bearer(u!.token))).not.toBeNull();
    const cachedAt = Date.now();
    await other.del(keys.session(u!.token)); // no publish: only the bound protects
    expect(await resolveCaller(bearer(u!.token))).not.toBeNull(); // still cached: the documented bound
    await refusedWithin(u!.token, env.SESSION_CACHE_MS + 500);
    expect(Date.now() - cachedAt).toBeLessThanOrEqual(env.SESSION_CACHE_MS + 100);
  });

  it('capped in size; an answer that left Redis before a revocation arrived is not cached', () => {
    let now = 0;
    const c = new SessionCache(1000, 2, () => now);
    c.setTrusted(true);
    const user = { id: '1', nickName: '', icon: '', role: 'user' as const };
    c.set('a', user, c.mark());
    c.set('b', user, c.mark());
    c.set('c', user, c.mark());
    expect(c.size).toBeLessThanOrEqual(2);
    expect(c.get('c')).toEqual(user);
    const mark = c.mark();
    c.forgetMessage('t:d');
    c.set('d', user, mark);
    expect(c.get('d')).toBeNull();
    now += 1000;
    expect(c.get('c')).toBeNull();
  });

  it.skipIf(env.REDIS_CLUSTER_NODES.length > 0)('while the subscriber is down nothing is served from the cache', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    expect(await resolveCaller(bearer(u!.token))).not.toBeNull();
    (handle.subscription.subscriber as Redis).stream.destroy();
    await waitFor('distrust', async () => !handle.cache.isTrusted, 1000, 2);
    expect(await sessionCommands(u!.token, async () => resolveCaller(bearer(u!.token)))).toBe(1);
    await waitFor('resubscribed', async () => handle.cache.isTrusted, 5000, 10);
    await revokeSession(other, u!.token);
    expect(await refusedWithin(u!.token, 200)).toBeLessThan(200);
  });
});
