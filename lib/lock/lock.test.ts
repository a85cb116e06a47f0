/**
 * The single-node lock in one process against the real Redis: lease loss, watchdog, re-entry,
 * fencing. Cross-process and multi-node cases live in processes.test.ts and multi.test.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, test } from 'vitest';
import { closeLocks, invalidateFenced, LockLostError, LockTimeoutError, setIfFenceNewer, tryWithLock, withLock } from '@/lib/lock';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { deleteKeys } from '@/lib/redis/keyspace';
import { env } from '@/lib/env';

const run = randomUUID().slice(0, 8);
const created: string[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Runs a function outside every lock the calling chain holds (as another request would). */
const outside = AsyncLocalStorage.snapshot();

function lockName(what: string): string {
  const name = `test:${what}:${run}`;
  created.push(keys.lock(name), keys.lockFence(name));
  return name;
}

afterAll(async () => {
  await deleteKeys(redis, created);
  await closeLocks();
});

describe('single-node lock', () => {
  test("a holder whose lease expired cannot release the new holder's lock", async () => {
    const lock = lockName('expired');
    let bHolds!: () => void;
    const bHolding = new Promise<void>((r) => (bHolds = r));
    let aDone!: () => void;
    const aFinished = new Promise<void>((r) => (aDone = r));
    let b: Promise<{ fence: number; stillHeld: number }> | undefined;
    // Set outside A's section and due while A is frozen: B asks once A's lease has run out.
    setTimeout(() => {
      b = withLock(lock, { waitMs: 2000 }, async (_signal, fence) => {
        bHolds();
        await aFinished; // A releases while B holds
        return { fence, stillHeld: await redis.exists(keys.lock(lock)) };
      });
    }, 100);

    const a = await withLock(lock, { leaseMs: 300 }, async (signal, fence) => {
      // Freeze the process past the lease, like a long GC pause: the watchdog cannot renew.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
      await bHolding;
      return { fence, aborted: signal.aborted, reason: signal.reason as unknown };
    });
    aDone();
    const bResult = await b!;

    expect(a.aborted).toBe(true);
    expect(a.reason).toBeInstanceOf(LockLostError);
    expect(bResult.stillHeld).toBe(1);
    expect(bResult.fence).toBeGreaterThan(a.fence);
    expect(await redis.exists(keys.lock(lock))).toBe(0);
  });

  test('a 1 s lease survives a 5 s section (watchdog)', async () => {
    const lock = lockName('watchdog');
    const aborted = await withLock(lock, { leaseMs: 1000 }, async (signal) => {
      for (let i = 0; i < 5; i++) {
        await sleep(1000);
        expect(await outside(() => tryWithLock(lock, {}, async () => 'stolen'))).toEqual({ acquired: false });
      }
      return signal.aborted;
    });
    expect(aborted).toBe(false);
    expect(await redis.exists(keys.lock(lock))).toBe(0);
  });

  test('a grant after a long wait still gets its full lease from the watchdog', async () => {
    const lock = lockName('late-grant');
    let letGo!: () => void;
    const holder = withLock(lock, {}, () => new Promise<void>((r) => (letGo = r)));
    const waiter = withLock(lock, { leaseMs: 300, waitMs: 3000 }, async (signal) => {
      await sleep(500);
      return signal.aborted;
    });
    await sleep(700); // more than the waiter's lease goes by before it is granted
    letGo();
    await holder;
    expect(await waiter).toBe(false);
  });

  test('re-entrant to depth 3 in one call chain, freed only when the count is back at zero', async () => {
    const lock = lockName('reentrant');
    const count = () => redis.hget(keys.lock(lock), 'count');
    const taken = () => outside(() => tryWithLock(lock, {}, async () => 'stolen'));
    await withLock(lock, {}, async (_s, f1) => {
      await withLock(lock, {}, async (_s2, f2) => {
        await withLock(lock, { waitMs: 0 }, async (_s3, f3) => {
          expect([f2, f3]).toEqual([f1, f1]);
          expect(await count()).toBe('3');
        });
        expect(await count()).toBe('2');
      });
      expect(await count()).toBe('1');
      expect(await taken()).toEqual({ acquired: false });
    });
    expect(await redis.exists(keys.lock(lock))).toBe(0);
    expect(await taken()).toEqual({ acquired: true, value: 'stolen' });
  });

  test("an inner section's shorter lease does not cut the outer section's hold short", async () => {
    const lock = lockName('reenter-short');
    const taken = () => outside(() => tryWithLock(lock, {}, async () => 'stolen'));
    // The outer lease is 3 s (its watchdog renews every second); the inner asks for 50 ms.
    await withLock(lock, { leaseMs: 3000 }, async () => {
      await withLock(lock, { leaseMs: 50 }, async () => {
        await sleep(200);
        expect(await redis.pttl(keys.lock(lock))).toBeGreaterThan(2000);
        expect(await taken()).toEqual({ acquired: false });
      });
      // The inner release does not cut it to 50 ms either.
      expect(await redis.pttl(keys.lock(lock))).toBeGreaterThan(2000);
      await sleep(200);
      expect(await taken()).toEqual({ acquired: false });
    });
    expect(await taken()).toEqual({ acquired: true, value: 'stolen' });
  });

  test('a busy lock is a LockTimeoutError after waitMs; tryWithLock does not swallow one from inside', async () => {
    const lock = lockName('busy');
    const other = lockName('busy-other');
    await withLock(lock, {}, async () => {
      const started = Date.now();
      await expect(outside(() => withLock(lock, { waitMs: 150 }, async () => 1))).rejects.toBeInstanceOf(LockTimeoutError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      await expect(
        outside(() => tryWithLock(other, {}, () => withLock(lock, {}, async () => 1))),
      ).rejects.toBeInstanceOf(LockTimeoutError);
    });
  });

  // Redlock's nodes are independent servers (REDIS_URL + REDLOCK_NODES), never the cluster: this
  // reads REDIS_URL through the main client, which in cluster mode is the cluster.
  test.skipIf(env.REDIS_CLUSTER_NODES.length > 0)("nodes: 'multi' without REDLOCK_NODES is Redlock over REDIS_URL alone", async () => {
    const lock = lockName('multi-default');
    created.push(keys.lockMulti(lock));
    const fences = [];
    for (let i = 0; i < 2; i++) {
      fences.push(
        await withLock(lock, { nodes: 'multi' }, async (_s, fence) => {
          expect(await redis.exists(keys.lockMulti(lock))).toBe(1);
          expect(await outside(() => tryWithLock(lock, { nodes: 'multi' }, async () => 'stolen'))).toEqual({ acquired: false });
          return fence;
        }),
      );
    }
    expect(fences[1]).toBeGreaterThan(fences[0]!);
    expect(await redis.exists(keys.lockMulti(lock))).toBe(0);
  });

  test('fencing tokens strictly increase and a stale write is refused', async () => {
    const lock = lockName('fence');
    const key = `test:lock-fenced:{${run}}`;
    created.push(key, keys.fenceRecord(key));

    const fences: number[] = [];
    for (let i = 0; i < 5; i++) fences.push(await withLock(lock, {}, async (_s, f) => f));
    expect(fences.every((f, i) => i === 0 || f > fences[i - 1]!)).toBe(true);

    // A slow holder (old fence) writes after a newer holder did: refused.
    const [older, newer] = fences.slice(-2) as [number, number];
    expect(await setIfFenceNewer(redis, key, 'new', newer, 60_000)).toBe(true);
    expect(await setIfFenceNewer(redis, key, 'stale', older, 60_000)).toBe(false);
    expect(await redis.get(key)).toBe('new');

    // A rebuild that started before the source changed is refused after the invalidation;
    // the next grant's rebuild is accepted.
    const stale = await withLock(lock, {}, async (_s, f) => f);
    await invalidateFenced(redis, lock, key);
    expect(await redis.exists(key)).toBe(0);
    expect(await setIfFenceNewer(redis, key, 'rebuilt from old rows', stale, 60_000)).toBe(false);
    const fresh = await withLock(lock, {}, async (_s, f) => f);
    expect(await setIfFenceNewer(redis, key, 'rebuilt', fresh, 60_000)).toBe(true);
    expect(await redis.get(key)).toBe('rebuilt');
    expect(await redis.pttl(key)).toBeGreaterThan(50_000);
  });
  test('an invalidation after the fence counter expired restarts it above every token before: later grants store again', async () => {
    const lock = lockName('fence-expiry');
    const key = `test:fenced-expiry:{${run}}`;
    created.push(key, keys.fenceRecord(key));
    const first = await withLock(lock, {}, async (_s, f) => f);
    expect(await setIfFenceNewer(redis, key, 'v1', first)).toBe(true);
    await invalidateFenced(redis, lock, key); // the record now holds a fence above `first`
    // The counter ends its life before the record does (a day after its last grant; here at once).
    await redis.pexpire(keys.lockFence(lock), 20);
    await sleep(100);
    expect(await redis.exists(keys.lockFence(lock))).toBe(0);
    await invalidateFenced(redis, lock, key); // the source changes again, nobody read in between
    const second = await withLock(lock, {}, async (_s, f) => f);
    expect(second).toBeGreaterThan(first);
    expect(await setIfFenceNewer(redis, key, 'v2', second)).toBe(true);
    expect(await redis.get(key)).toBe('v2');
  });
});
