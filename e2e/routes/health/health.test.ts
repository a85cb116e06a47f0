import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, createDb, db } from '@/lib/db/client';
import { closeRedis, createRedis, redis } from '@/lib/redis/client';
import { closeMq, connectMq, getConnection } from '@/lib/mq/connection';
import { checkHealth, publicHealth } from '@/lib/health';
import { GET } from '@/app/api/health/route';
import { createConsoleFixture } from '@/e2e/support/fixtures/admin';

afterAll(async () => {
  await closeMq();
  await closeDb();
  await closeRedis();
});

// A port nothing listens on: a real refused connection, not a mock.
const DEAD = '127.0.0.1:1';

describe('GET /api/health', () => {
  it('reports each dependency when all are up', async () => {
    const res = await GET();
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data.ok).toBe(true);
    expect(Object.keys(body.data.checks).sort()).toEqual(['mysql', 'rabbitmq', 'redis']);
  });

  it('answers 503 naming exactly the dependency that is down', async () => {
    const deadRedis = createRedis(`redis://${DEAD}`, { maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    const deadDb = createDb(`mysql://root@${DEAD}/x`, 1);
    try {
      const r1 = await checkHealth({ db, redis: deadRedis, mq: getConnection });
      expect(r1.ok).toBe(false);
      expect(r1.down).toEqual(['redis']);
      const r2 = await checkHealth({ db: deadDb, redis, mq: () => connectMq(`amqp://guest:guest@${DEAD}`) });
      expect(r2.down).toEqual(['mysql', 'rabbitmq']);
      expect(JSON.stringify(r2)).not.toContain('guest:guest');
    } finally {
      deadRedis.disconnect();
      await deadDb.destroy();
    }
  });
});

describe('what a stranger sees', () => {
  const get = (headers: Record<string, string> = {}) => GET(new Request('http://127.0.0.1/api/health', { headers })).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('up or down and timings only: no persistence report, warnings or errors; an admin gets the whole report', async () => {
    const { admin, consumer } = await createConsoleFixture(db, redis);
    const callers: Record<string, string>[] = [{}, { authorization: `Bearer ${consumer.token}` }, { authorization: 'Bearer not-a-session' }];
    for (const headers of callers) {
      const { status, body } = await get(headers);
      expect(status).toBe(200);
      expect(Object.keys(body.data).sort()).toEqual(['checks', 'down', 'ok']);
      for (const name of ['mysql', 'redis', 'rabbitmq']) expect(Object.keys(body.data.checks[name]).sort()).toEqual(['ms', 'ok']);
      expect(body.data.ok).toBe(true);
    }
    const { body } = await get({ authorization: `Bearer ${admin.token}` });
    expect(body.data.ok).toBe(true);
    expect(body.data.redisPersistence.nodes.length).toBeGreaterThan(0);
    expect(typeof body.data.redisPersistence.nodes[0].aof).toBe('boolean');
  });

  it('a 503 still names the dependency that is down, without its error', () => {
    const full = { ok: false, down: ['redis'], checks: { mysql: { ok: true, ms: 1 }, redis: { ok: false, ms: 2000, error: 'connect ECONNREFUSED 10.0.0.7:6379' }, rabbitmq: { ok: true, ms: 3, warning: 'x' } } };
    expect(publicHealth(full)).toEqual({ ok: false, down: ['redis'], checks: { mysql: { ok: true, ms: 1 }, redis: { ok: false, ms: 2000 }, rabbitmq: { ok: true, ms: 3 } } });
  });
});

describe('a flood of health checks', () => {
  it('200 at once run one check between them (the route is public; each check costs MySQL, Redis and RabbitMQ)', async () => {
    const calls = async () => Number(/cmdstat_config\|get:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
    await new Promise((r) => setTimeout(r, 1100)); // past any result an earlier test left to reuse
    const before = await calls();
    const res = await Promise.all(Array.from({ length: 200 }, () => GET(new Request('http://127.0.0.1/api/health'))));
    expect(res.every((r) => r.status === 200)).toBe(true);
    const flood = (await calls()) - before;
    // What one check sends, measured alone after the reuse window.
    await new Promise((r) => setTimeout(r, 1100));
    const one = await calls();
    await GET(new Request('http://127.0.0.1/api/health'));
    const single = (await calls()) - one;
    expect(single).toBeGreaterThan(0);
    expect(flood).toBe(single);
  });
});

describe("the worker's /metrics", () => {
  it('listens on HOST only, as the web server does', async () => {
    const { Registry } = await import('prom-client');
    const { serveMetrics } = await import('@/lib/order/metrics');
    const { env } = await import('@/lib/env');
    const server = serveMetrics(new Registry(), 0, env.HOST, () => {});
    await new Promise((r) => (server.listening ? r(null) : server.once('listening', r)));
    expect((server.address() as { address: string }).address).toBe(env.HOST);
    await new Promise((r) => server.close(r));
  });
});
