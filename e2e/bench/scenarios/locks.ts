/**
 * The original 黑马点评's Redis-vs-ZooKeeper comparison, measured: one lock, `--contenders` (20) concurrent
 * callers looping over the same short critical section for `--duration` seconds, on each backend:
 *   single     the bench Redis (BENCH_REDIS_URL), push-based waiting
 *   multi      Redlock over 3 throwaway redis-servers (127.0.0.1:6391-6399)
 *   zookeeper  a throwaway ZooKeeper on 127.0.0.1:2285 (scripts/zookeeper.sh)
 * Prints grants per second, wait p50/p99 (from asking to entering the section) and what each
 * survives (each line backed by a test in lib/lock). `--strategy <one>` runs one backend only.
 * A second holder inside the section at once is a failure.
 */
import { runLocked, type LockBackend } from '@/lib/lock/core';
import { multiNodeBackend } from '@/lib/lock/multi';
import { singleNodeBackend } from '@/lib/lock/single';
import { LOCK_PORTS, startRedisServer, type RedisServer } from '@/e2e/support/redis-server';
import { TestZooKeeper } from '@/e2e/support/zookeeper-server';
import { zookeeperBackend } from '@/lib/lock/zookeeper';
import { redis } from '@/lib/redis/client';
import type { BenchArgs, Scenario } from '../types';

const BACKENDS = ['single', 'multi', 'zookeeper'] as const;
type BackendName = (typeof BACKENDS)[number];

const SURVIVES: Record<BackendName, string> = {
  single: 'holder crash (lease, lib/lock/processes.test.ts); NOT a master failover (the replica may lack the lock)',
  multi: 'holder crash and 1 of 3 nodes down (majority, lib/lock/multi.test.ts); timing assumptions on clocks/pauses',
  zookeeper: 'holder crash (session expiry, zookeeper.test.ts); server crash: holders aborted, no overlap (zookeeper-restart.test.ts); a 3-server ensemble losing its leader: no overlap, no lost work (product-locks.test.ts)',
};

interface Measured {
  grants: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  overlaps: number;
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : 0);
const round = (n: number) => Math.round(n * 100) / 100;

async function contend(backend: LockBackend, lock: string, contenders: number, seconds: number): Promise<Measured> {
  const waits: number[] = [];
  let inside = 0;
  let overlaps = 0;
  const started = Date.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: contenders }, async () => {
      while (Date.now() < until) {
        const asked = performance.now();
        await runLocked(backend, lock, { waitMs: 30_000, leaseMs: 5_000 }, async () => {
          waits.push(performance.now() - asked);
          if (++inside > 1) overlaps += 1;
          await new Promise((r) => setImmediate(r)); // the section yields, as real work would
          inside -= 1;
        });
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  waits.sort((a, b) => a - b);
  return { grants: waits.length, perSecond: round(waits.length / elapsed), p50Ms: round(pct(waits, 0.5)), p99Ms: round(pct(waits, 0.99)), overlaps };
}

/** Starts what the backend needs; `stop` frees it again. */
async function open(name: BackendName): Promise<{ backend: LockBackend; stop: () => Promise<void> }> {
  if (name === 'single') {
    const backend = singleNodeBackend(redis);
    return { backend, stop: () => backend.close() };
  }
  if (name === 'multi') {
    const servers: RedisServer[] = [];
    for (let i = 0; i < 3; i++) servers.push(await startRedisServer({ ports: LOCK_PORTS }));
    const backend = multiNodeBackend(servers.map((s) => s.url));
    return { backend, stop: async () => (await backend.close(), await Promise.all(servers.map((s) => s.kill())), undefined) };
  }
  const server = new TestZooKeeper(2285);
  server.fresh();
  const backend = zookeeperBackend(server.connect, 2_000);
  return { backend, stop: async () => (await backend.close(), server.stop()) };
}

export const scenario: Scenario = {
  description: 'one contended lock on single-node Redis, Redlock over 3 nodes and ZooKeeper: grants/s, wait p99, what each survives',
  variants: ['all', ...BACKENDS],
  needsBuild: false,
  async run(h, a: BenchArgs, variant) {
    const contenders = Number(a.extra.contenders ?? 20);
    const which = variant === 'all' ? [...BACKENDS] : [variant as BackendName];
    const lock = `bench:locks:${Date.now()}`;
    const rows: (Measured & { backend: BackendName })[] = [];
    for (const name of which) {
      const line = h.progress(name);
      line(`starting, then ${contenders} contenders for ${a.duration} s`);
      const { backend, stop } = await open(name);
      try {
        rows.push({ backend: name, ...(await contend(backend, lock, contenders, a.duration)) });
      } finally {
        await stop();
      }
      line('done', true);
    }
    const summary = [
      `locks: ${contenders} contenders, ${a.duration} s each, section = one yield`,
      '| backend | grants/s | wait p50 ms | wait p99 ms | survives |',
      '|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.backend} | ${r.perSecond} | ${r.p50Ms} | ${r.p99Ms} | ${SURVIVES[r.backend]} |`),
    ];
    const failures = rows.filter((r) => r.overlaps > 0).map((r) => `${r.backend}: ${r.overlaps} overlapping holders`);
    const best = rows.reduce((m, r) => (r.perSecond > m.perSecond ? r : m), rows[0]!);
    return { line: { scenario: 'locks', contenders, duration: a.duration, rows }, summary, rps: best.perSecond, p99Ms: best.p99Ms, failures };
  },
};
