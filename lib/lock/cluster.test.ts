/**
 * The lock on a Redis Cluster: a lock's keys live on whichever master owns its slot, while the
 * process's one release subscriber sits on some other node. Redis Cluster forwards PUBLISH to
 * every node, so a waiter must still wake on the release message (milliseconds), not when the
 * holder's lease runs out (seconds). Runs only when REDIS_CLUSTER_NODES points at a cluster.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Cluster } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { closeLocks, withLock } from '@/lib/lock';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { deleteKeys } from '@/lib/redis/keyspace';
import { slotOf } from '@/lib/redis/slots';

const outside = AsyncLocalStorage.snapshot();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = randomUUID().slice(0, 8);
const created: string[] = [];

afterAll(async () => {
  if (created.length) await deleteKeys(redis, created);
  await closeLocks();
  await closeRedis();
});

/** The master port owning each slot, from CLUSTER SLOTS. */
async function slotOwners(cluster: Cluster): Promise<(slot: number) => number> {
  const ranges = (await cluster.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  return (slot) => ranges.find(([from, to]) => slot >= from && slot <= to)![2][1];
}

describe.runIf(redis instanceof Cluster)('lock on a Redis Cluster', () => {
  test('a release on every master wakes its waiter in milliseconds, whichever node the subscriber is on', async () => {
    const ownerOf = await slotOwners(redis as Cluster);
    // One lock name per master: at least two of them are on a node the subscriber is not on.
    const byMaster = new Map<number, string>();
    for (let i = 0; byMaster.size < 3 && i < 1000; i++) {
      const name = `test:cluster:${run}:${i}`;
      const port = ownerOf(slotOf(keys.lock(name)));
      if (!byMaster.has(port)) byMaster.set(port, name);
    }
    expect(byMaster.size).toBe(3);

    for (const name of byMaster.values()) {
      created.push(keys.lock(name), keys.lockFence(name));
      let releasedAt = 0;
      const holder = withLock(name, { leaseMs: 10_000 }, async () => {
        await sleep(300);
        releasedAt = performance.now();
      });
      await sleep(50);
      const waited = await outside(() =>
        withLock(name, { leaseMs: 10_000, waitMs: 5000 }, async () => performance.now() - releasedAt),
      );
      await holder;
      // The lease is 10 s: only the release message can explain a wake-up this soon.
      expect(waited).toBeLessThan(250);
    }
  });
});
