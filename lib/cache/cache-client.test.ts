/**
 * The cache client against the real Redis (and a real redis-server we kill), with real
 * concurrency. "Instances" are separate clients on separate connections with single flight off,
 * so only the distributed mutex stands between 1000 readers and the loader.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { RedisClient } from '@/lib/redis/types';
import { createRedis, redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeLocks } from '@/lib/lock';
import { log } from '@/lib/log';
import { CacheClient, type CacheSpec } from '@/lib/cache/cache-client';
import { Semaphore } from '@/lib/cache/semaphore';
import { startRedisServer } from '@/e2e/support/redis-server';
import { deleteKeys } from '@/lib/redis/keyspace';

const created: string[] = [];
const conns: RedisClient[] = [];

afterAll(async () => {
  if (created.length) await deleteKeys(redis, [...created, ...created.map((k) => keys.fenceRecord(k))]);
  // disconnect, not quit: QUIT to a killed server can wait forever in the offline queue.
  for (const c of conns) c.disconnect();
  await closeLocks();
  await closeRedis();
});

function testKey(): string {
  const k = `cache:test:{${randomUUID()}}`;
  created.push(k);
  return k;
}

/**
 * N independent "web instances": own connection, own client, no in-process coalescing. Connected
 * before use, as a serving instance is (a cluster client's first command also loads the slot map).
 */
async function instances(n: number, opts: ConstructorParameters<typeof CacheClient>[1] = {}): Promise<CacheClient[]> {
  const fresh = Array.from({ length: n }, () => createRedis());
  conns.push(...fresh);
  await Promise.all(fresh.map((c) => c.ping()));
  return fresh.map((conn) => new CacheClient(conn, { singleFlight: false, ...opts }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A source of truth whose loads we count; `slowMs` widens the race window. */
function source<T>(value: T | null, slowMs = 0) {
  const s = {
    value,
    loads: 0,
    load: async () => {
      s.loads++;
      const v = s.value;
      if (slowMs) await sleep(slowMs);
      return v;
    },
  };
  return s;
}

describe('cache client', () => {
  it('1000 concurrent cold reads across 10 instances → exactly one load', async () => {
    const key = testKey();
    const src = source({ name: '103茶餐厅' }, 150);
    const clients = await instances(10);
    const spec: CacheSpec<{ name: string }> = { key, load: src.load, ttlSeconds: 60 };
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => clients[i % 10]!.get(spec)));
    expect(src.loads).toBe(1);
    expect(results.every((r) => r?.name === '103茶餐厅')).toBe(true);
    expect(await redis.get(key)).toContain('103茶餐厅');
  });

  it('1000 reads of a missing row → one load, then the "" marker with a short TTL', async () => {
    const key = testKey();
    const src = source<string>(null, 50);
    const clients = await instances(4);
    const spec: CacheSpec<string> = { key, load: src.load, ttlSeconds: 600, nullTtlSeconds: 30 };
    const first = await Promise.all(Array.from({ length: 1000 }, (_, i) => clients[i % 4]!.get(spec)));
    expect(first.every((r) => r === null)).toBe(true);
    expect(src.loads).toBe(1);
    expect(await redis.get(key)).toBe('');
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(36_000); // 30 s + at most 20 % jitter
    await Promise.all(Array.from({ length: 200 }, () => clients[0]!.get(spec)));
    expect(src.loads).toBe(1);
  });

  it('logical expiry: stale answers at once while exactly one rebuild runs, then fresh', async () => {
    const key = testKey();
    const src = source({ v: 1 });
    const clients = await instances(5);
    const spec: CacheSpec<{ v: number }> = { key, load: src.load, ttlSeconds: 60, logical: true, logicalSeconds: 0.3 };
    await clients[0]!.get(spec);
    expect(src.loads).toBe(1);
    expect(await redis.pttl(key)).toBeGreaterThan(24 * 3600_000); // hot entries are kept far past their logical expiry

    await sleep(450); // logically expired now (0.3 s + ≤ 20 % jitter)
    src.value = { v: 2 };
    let rebuilding = true;
    const slowLoad = src.load;
    spec.load = async () => {
      const v = await slowLoad();
      await sleep(2000);
      rebuilding = false;
      return v;
    };
    const started = Date.now();
    const stale = await Promise.all(Array.from({ length: 1000 }, (_, i) => clients[i % 5]!.get(spec)));
    // Nobody waited for the rebuild: every stale answer came back while it was still running.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(rebuilding).toBe(true);
    expect(stale.every((r) => r?.v === 1)).toBe(true);

    await Promise.all(clients.map((c) => c.idle()));
    expect(src.loads).toBe(2); // the initial fill + exactly one rebuild
    const fresh = await Promise.all(Array.from({ length: 100 }, (_, i) => clients[i % 5]!.get(spec)));
    expect(fresh.every((r) => r?.v === 2)).toBe(true);
    expect(src.loads).toBe(2);
  });

  it('an invalidation is seen by the next read', async () => {
    const key = testKey();
    const src = source({ v: 1 });
    const [c] = await instances(1);
    const spec: CacheSpec<{ v: number }> = { key, load: src.load, ttlSeconds: 600 };
    expect(await c!.get(spec)).toEqual({ v: 1 });
    src.value = { v: 2 };
    expect(await c!.get(spec)).toEqual({ v: 1 }); // cached
    await c!.invalidate(key);
    expect(await c!.get(spec)).toEqual({ v: 2 });
  });

  it('a rebuild that loaded before an invalidation does not store its stale value', async () => {
    const key = testKey();
    const src = source({ v: 1 }, 300);
    const [reader, writer] = await instances(2);
    const spec: CacheSpec<{ v: number }> = { key, load: src.load, ttlSeconds: 600 };
    const slowRead = reader!.get(spec); // loads v1, slowly
    await sleep(100);
    src.value = { v: 2 }; // the "DB write" commits…
    await writer!.invalidate(key); // …then the cache is invalidated, while the rebuild is still loading
    // Its store refused (the fence), the read answers a load made after the write: whoever joined
    // it in that process (single flight) may have come after the write answered.
    expect(await slowRead).toEqual({ v: 2 });
    expect(await redis.get(key)).toBeNull(); // and nothing of it was cached (its fence is behind)
    expect(await reader!.get(spec)).toEqual({ v: 2 });
  });

  it('fencing: a reader arriving during the slow stale rebuild ends with the new data cached', async () => {
    const key = testKey();
    let value = { v: 1 };
    let loads = 0;
    const load = async () => {
      const v = value;
      if (++loads === 1) await sleep(300); // the first rebuild reads v1, then stalls
      return v;
    };
    const [a, b, writer] = await instances(3);
    const spec: CacheSpec<{ v: number }> = { key, load, ttlSeconds: 600 };
    const slow = a!.get(spec);
    await sleep(50);
    value = { v: 2 };
    await writer!.invalidate(key); // its fence is newer than the slow rebuild's grant
    const fresh = await b!.get(spec); // waits for the lock, finds nothing stored, rebuilds
    expect(await slow).toEqual({ v: 2 }); // refused to store v1, it loaded again
    expect(fresh).toEqual({ v: 2 });
    expect(await redis.get(key)).toContain('"v":2');
    expect(loads).toBe(3); // the stale load, its fresh one (not stored), b's stored rebuild
  });

  it('keys written together get different TTLs (jitter)', async () => {
    const [c] = await instances(1);
    const batch = Array.from({ length: 30 }, () => testKey());
    await Promise.all(batch.map((key) => c!.get({ key, load: async () => ({ ok: true }), ttlSeconds: 600 })));
    const ttls = await Promise.all(batch.map((k) => redis.pttl(k)));
    expect(new Set(ttls).size).toBeGreaterThanOrEqual(28);
    expect(Math.max(...ttls) - Math.min(...ttls)).toBeGreaterThan(10_000); // 600 s × up to 20 % spread
    expect(Math.min(...ttls)).toBeGreaterThan(590_000);
  });

  it('a rebuild that takes too long: waiters give up after the bounded wait and load themselves', async () => {
    const key = testKey();
    let loads = 0;
    const load = async () => {
      if (++loads === 1) await sleep(4000); // the lock holder is stuck
      return { v: 1 };
    };
    const clients = await instances(3, { lockWaitMs: 300 });
    const spec: CacheSpec<{ v: number }> = { key, load, ttlSeconds: 60 };
    const holder = clients[0]!.get(spec);
    await sleep(50);
    const started = Date.now();
    const waiters = await Promise.all([clients[1]!.get(spec), clients[2]!.get(spec)]);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(200);
    // Bounded: they gave up long before the stuck holder finished (generous for a loaded CI box).
    expect(waited).toBeLessThan(3500);
    expect(waiters).toEqual([{ v: 1 }, { v: 1 }]);
    expect(loads).toBe(3);
    await holder;
  });
});

describe('Redis down (a real redis-server, killed)', () => {
  it('reads fall back to the loader, capped, with a loud log line', async () => {
    const server = await startRedisServer();
    const conn = createRedis(server.url);
    const fallback = new Semaphore(3, 500);
    const client = new CacheClient(conn, { fallback, redisTimeoutMs: 300 });
    let inFlight = 0;
    let peak = 0;
    const spec = (id: number): CacheSpec<{ id: number }> => ({
      key: `cache:shop:{${id}}`,
      ttlSeconds: 60,
      load: async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(20);
        inFlight--;
        return { id };
      },
    });
    try {
      expect(await client.get(spec(1))).toEqual({ id: 1 });
      expect(await conn.get('cache:shop:{1}')).toContain('"id":1');

      const loud = vi.spyOn(log, 'error');
      await server.kill();
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => client.get(spec((i % 40) + 1))));
      expect(answers.map((a) => a?.id)).toEqual(Array.from({ length: 200 }, (_, i) => (i % 40) + 1));
      expect(peak).toBeLessThanOrEqual(3);
      expect(fallback.highWater).toBe(3);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(loud.mock.calls.some((c) => String(c[1]).includes('CACHE DOWN'))).toBe(true);
      loud.mockRestore();
    } finally {
      await server.kill();
      conn.disconnect();
    }
  });
});
