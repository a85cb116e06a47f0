/**
 * The product's own locks (voucher console, shop cache rebuild, GEO index) on the backend
 * LOCK_BACKEND names, each case in real child processes (e2e/support/product-lock-client.ts)
 * started with that setting:
 *   - routing: with the same lock names held on all three backends at once, a product lock
 *     waits for exactly the hold on its own backend, and its waiting is seen there (its znode, its
 *     release subscription, its fence on the Redlock nodes);
 *     then, in the same child, the fences: a cache rebuild that read the source before an
 *     invalidation cannot store what it read, and the next read stores the fresh value;
 *   - a 3-server ZooKeeper ensemble whose leader is SIGKILLed while three processes contend for
 *     the voucher lock: no two sections ever overlap, no increment is lost, the work completes.
 * Servers of its own: the ensemble on 127.0.0.1:2301-2309 (clients 2301-2303) and two
 * redis-servers on 6431 and 6432, the Redlock nodes besides REDIS_URL.
 */
import { randomUUID } from 'node:crypto';
import zookeeper from 'node-zookeeper-client';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { env } from '@/lib/env';
import { runLocked, type LockBackend } from '@/lib/lock/core';
import { multiNodeBackend } from '@/lib/lock/multi';
import { singleNodeBackend } from '@/lib/lock/single';
import { zookeeperBackend } from '@/lib/lock/zookeeper';
import { closeLocks } from '@/lib/lock';
import { createRedis, redis, type Redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { productLockClient, killContenders } from '@/e2e/support/lock-spawn';
import { startRedisServer, type RedisServer } from '@/e2e/support/redis-server';
import { TestZooKeeperEnsemble } from '@/e2e/support/zookeeper-server';

// Before lib/env is imported: where this file's (and its children's) ZooKeeper and Redlock are.
vi.hoisted(() => {
  process.env.ZOOKEEPER_CONNECT = '127.0.0.1:2301,127.0.0.1:2302,127.0.0.1:2303';
  process.env.ZOOKEEPER_SESSION_TIMEOUT_MS = '1500';
  const db = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/1').pathname.slice(1) || '0';
  process.env.REDLOCK_NODES = `redis://127.0.0.1:6431/${db},redis://127.0.0.1:6432/${db}`;
});

const ensemble = new TestZooKeeperEnsemble(2301);
const run = randomUUID().slice(0, 8);
const num = () => String(900_000_000 + Math.floor(Math.random() * 99_999_999));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const zkDir = (name: string) => `/hmdp/locks/${encodeURIComponent(name).replace(/\./g, '%2E')}`;

type Kind = 'redis' | 'redlock' | 'zookeeper';
const KINDS: Kind[] = ['redis', 'redlock', 'zookeeper'];
const NODES = { redis: 'single', redlock: 'multi', zookeeper: 'zookeeper' } as const;

let servers: RedisServer[] = [];
let extraNodes: Redis[] = [];
let backends: Record<Kind, LockBackend & { close(): Promise<void> }>;
let zk: zookeeper.Client;
const createdKeys: string[] = [];

const childEnv = (kind: Kind, extra: Record<string, string> = {}) => ({ ...process.env, LOCK_BACKEND: kind, CACHE_LOCK_WAIT_MS: '8000', ...extra });

beforeAll(async () => {
  ensemble.fresh();
  servers = [await startRedisServer({ ports: [6431] }), await startRedisServer({ ports: [6432] })];
  extraNodes = env.REDLOCK_NODES.map((u) => createRedis(u));
  backends = {
    redis: singleNodeBackend(redis),
    redlock: multiNodeBackend([env.REDIS_URL, ...env.REDLOCK_NODES]),
    zookeeper: zookeeperBackend(env.ZOOKEEPER_CONNECT, env.ZOOKEEPER_SESSION_TIMEOUT_MS),
  };
  zk = zookeeper.createClient(env.ZOOKEEPER_CONNECT);
  await new Promise<void>((resolve) => (zk.once('connected', () => resolve()), zk.connect()));
});

afterAll(async () => {
  killContenders();
  try {
    zk?.close();
    await Promise.all(Object.values(backends ?? {}).map((b) => b.close()));
    await closeLocks();
    await Promise.all(createdKeys.map((k) => redis.del(k)));
    await Promise.all(extraNodes.map((n) => n.quit()));
  } finally {
    await Promise.all(servers.map((s) => s.kill()));
    ensemble.stop();
  }
});

/** Holds `name` on `backend` until the returned release is called; resolves once granted. */
async function hold(backend: LockBackend, name: string): Promise<{ fence: number; release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let granted!: (fence: number) => void;
  const isHeld = new Promise<number>((r) => (granted = r));
  const section = runLocked(backend, name, { leaseMs: 10_000 }, async (_signal, fence) => {
    granted(fence);
    await released;
  });
  const fence = await Promise.race([isHeld, section.then(() => Promise.reject(new Error(`${name} not granted`)))]);
  return { fence, release: async () => (release(), await section) };
}

const children = (path: string) => new Promise<string[]>((resolve, reject) => zk.getChildren(path, (err, c) => (err ? reject(err) : resolve(c))));

describe('LOCK_BACKEND routes the product locks', () => {
  test.each(KINDS)('%s: each product lock waits for the hold on its own backend only; fenced cache writes hold', async (kind) => {
    const voucherId = num();
    const shopId = num();
    const typeId = num();
    const names = { voucher: `voucher-admin:${voucherId}`, cache: `shop:${shopId}`, geo: `geo:${typeId}` };
    createdKeys.push(keys.shop(shopId), keys.fenceRecord(keys.shop(shopId)), keys.shopGeoReady(typeId), ...Object.values(names).map(keys.lockFence));

    // The same three names held on every backend: only the child's own backend may hold it up.
    const holds = Object.fromEntries(
      await Promise.all(KINDS.map(async (k) => [k, Object.fromEntries(await Promise.all(Object.entries(names).map(async ([w, n]) => [w, await hold(backends[k], n)])))])),
    ) as Record<Kind, Record<keyof typeof names, Awaited<ReturnType<typeof hold>>>>;

    const child = productLockClient(['locks', voucherId, shopId, typeId, `${run}-${kind}`], childEnv(kind));
    expect(await child.line('BACKEND')).toBe(NODES[kind]);
    for (const which of ['voucher', 'cache', 'geo'] as const) {
      const name = names[which];
      await child.line(`START-${which}`);
      const early = await Promise.race([child.line(`DONE-${which}`).then(() => true), sleep(800).then(() => false)]);
      expect(early, `${which} ran while its lock was held on ${kind}`).toBe(false);
      // Its waiting is visible on its backend.
      if (kind === 'zookeeper') expect((await children(zkDir(name))).filter((c) => c.startsWith('lock-'))).toHaveLength(2);
      if (kind === 'redis') expect(((await redis.pubsub('NUMSUB', keys.lockReleased(name))) as [string, number])[1]).toBeGreaterThanOrEqual(1);

      const releasedAt = Date.now();
      await holds[kind][which].release();
      await child.line(`DONE-${which}`);
      expect(Date.now() - releasedAt).toBeLessThan(5_000);
      if (kind === 'redlock') {
        // The child's grant raised the fence counter on a majority of the three nodes past ours.
        const counters = await Promise.all([redis, ...extraNodes].map((n) => n.get(keys.lockFence(name))));
        expect(counters.filter((c) => Number(c) > holds.redlock[which].fence).length).toBeGreaterThanOrEqual(2);
      }
    }

    // Fenced cache writes: a rebuild that read before an invalidation is refused; the next read
    // stores the fresh value.
    const fenced = JSON.parse(await child.line('RESULT')) as { afterStale: string | null; afterFresh: { v: string }; stored: string | null; fenceRecord: string };
    expect(fenced.afterStale).toBeNull();
    expect(fenced.afterFresh).toEqual({ v: 'v2' });
    expect(fenced.stored).toContain('"v2"');
    // The fence came from the child's backend: zxids are offset by 2^48, Redis counters are not.
    if (kind === 'zookeeper') expect(Number(fenced.fenceRecord)).toBeGreaterThan(2 ** 48);
    else expect(Number(fenced.fenceRecord)).toBeLessThan(2 ** 48);

    expect(await child.exited).toBe(0);
    // Nothing else was waited for: the other backends' holds were still held all along.
    for (const k of KINDS.filter((x) => x !== kind)) for (const h of Object.values(holds[k])) await h.release();
    await Promise.all(extraNodes.flatMap((n) => Object.values(names).map((name) => n.del(keys.lockFence(name)))));
  });
});

interface LoopResult {
  sections: { enter: number; until: number; wrote: boolean; aborted: boolean }[];
  failures: string[];
}

describe('a 3-server ZooKeeper ensemble loses its leader mid-section', () => {
  test('three processes keep taking the voucher lock: no overlap, no lost increment, all work done', async () => {
    const voucherId = num();
    const counterKey = `test:zk-ensemble-counter:{${run}}`;
    createdKeys.push(counterKey);
    const SECTIONS = 12;
    const WORK_MS = 100;
    const clients = [0, 1, 2].map(() => productLockClient(['loop', voucherId, counterKey, String(SECTIONS), String(WORK_MS)], childEnv('zookeeper')));
    const entered = () => clients.reduce((n, c) => n + c.lines().filter((l) => l.startsWith('ENTER ')).length, 0);

    // Kill the leader just after a section began, once every client is under way.
    while (entered() < 6) await sleep(20);
    const leader = ensemble.leader();
    const before = entered();
    while (entered() === before) await sleep(2);
    await sleep(20);
    const killedAt = Date.now();
    leader.kill();

    const results = await Promise.all(clients.map(async (c) => JSON.parse(await c.line('RESULT')) as LoopResult));
    expect(await Promise.all(clients.map((c) => c.exited))).toEqual([0, 0, 0]);
    const sections = results.flatMap((r) => r.sections).sort((a, b) => a.enter - b.enter);

    // Mutual exclusion: no section began before the one before it had ended or learnt it lost the lock.
    let overlaps = 0;
    let busyUntil = 0;
    for (const s of sections) {
      if (s.enter < busyUntil) overlaps += 1;
      busyUntil = Math.max(busyUntil, s.until);
    }
    expect(overlaps).toBe(0);
    // Nothing lost: every increment written is in the counter, and each client did all its work.
    const wrote = sections.filter((s) => s.wrote).length;
    expect(wrote).toBe(3 * SECTIONS);
    expect(Number(await redis.get(counterKey))).toBe(wrote);
    // The kill landed mid-section (a section began before it and ended or was aborted after it).
    expect(sections.some((s) => s.enter < killedAt && s.until > killedAt)).toBe(true);
    const aborted = sections.filter((s) => s.aborted);
    const resumed = sections.find((s) => s.enter > killedAt);
    expect(resumed).toBeDefined();
    const around = sections.filter((s) => s.until > killedAt - 300 && s.enter < killedAt + 5_000);
    console.log(`around the kill (ms from it): ${around.map((s) => `[${s.enter - killedAt}, ${s.until - killedAt}${s.aborted ? ' aborted' : ''}]`).join(' ')}`);
    console.log(
      `ensemble: leader ${leader.port} killed; ${aborted.length} section(s) aborted, first grant after the kill in ${resumed!.enter - killedAt} ms; ` +
        `${sections.length} sections, ${wrote} increments, ${results.flatMap((r) => r.failures).length} failed tries (${[...new Set(results.flatMap((r) => r.failures))].join(' | ')})`,
    );
  });
});
