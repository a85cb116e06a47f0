/**
 * The ZooKeeper lock against a real ZooKeeper (started here on 127.0.0.1:2282, 1 s sessions from
 * e2e/support/setup-env.ts): mutual exclusion and fences through the public API, re-entry, a
 * SIGKILLed holder freed by its session expiry, and 50 waiters woken one by one (no herd).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { env } from '@/lib/env';
import { closeLocks, tryWithLock, withLock } from '@/lib/lock';
import { runLocked } from '@/lib/lock/core';
import { contender, killContenders } from '@/e2e/support/lock-spawn';
import { TestZooKeeper } from '@/e2e/support/zookeeper-server';
import { zookeeperBackend } from '@/lib/lock/zookeeper';

const server = new TestZooKeeper(Number(env.ZOOKEEPER_CONNECT.split(':')[1]));
const run = randomUUID().slice(0, 8);
const zk = { nodes: 'zookeeper' } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Runs a function outside every lock the calling chain holds (as another request would). */
const outside = AsyncLocalStorage.snapshot();
const steal = (lock: string) => outside(() => tryWithLock(lock, zk, async () => 'stolen'));

beforeAll(() => server.fresh());
afterAll(async () => {
  killContenders();
  await closeLocks();
  server.stop();
});

describe('ZooKeeper lock', () => {
  test('20 contenders run one at a time, in fence order; busy means not acquired', async () => {
    const lock = `test:zk-mutex:${run}`;
    let inside = 0;
    let most = 0;
    const fences: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withLock(lock, { ...zk, waitMs: 10_000 }, async (_signal, fence) => {
          most = Math.max(most, ++inside);
          fences.push(fence);
          await sleep(2);
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(fences).toEqual([...fences].sort((a, b) => a - b));
    expect(new Set(fences).size).toBe(20);

    await withLock(lock, zk, async () => {
      // Another call chain, even in this process, does not get it…
      expect(await steal(lock)).toEqual({ acquired: false });
    });
    // …and the lock is free again afterwards.
    expect(await tryWithLock(lock, zk, async () => 'free')).toEqual({ acquired: true, value: 'free' });
  });

  test('the same call chain re-enters with the same fence; the lock frees when the outer section ends', async () => {
    const lock = `test:zk-reentry:${run}`;
    await withLock(lock, zk, async (_s, outerFence) => {
      const innerFence = await withLock(lock, zk, async (_s2, f) => f);
      expect(innerFence).toBe(outerFence);
      // The inner section ending did not free the outer one's lock.
      expect(await steal(lock)).toEqual({ acquired: false });
    });
    expect((await tryWithLock(lock, zk, async (_s, f) => f)).acquired).toBe(true);
  });

  test('50 waiters: each release wakes exactly one waiter (its successor)', async () => {
    const backend = zookeeperBackend(env.ZOOKEEPER_CONNECT, 1000);
    const lock = `test:zk-herd:${run}`;
    const wakeupsAtGrant: number[] = [];
    let release!: () => void;
    const firstHeld = new Promise<void>((resolve) => (release = resolve));
    let gate!: () => void;
    const holder = runLocked(backend, lock, {}, async () => {
      release();
      await new Promise<void>((r) => (gate = r));
    });
    await firstHeld;
    const waiters = Array.from({ length: 50 }, () =>
      runLocked(backend, lock, { waitMs: 20_000 }, async () => {
        wakeupsAtGrant.push(backend.stats.wakeups);
        await sleep(1);
      }),
    );
    // Every waiter has queued and set its watch (polled: a fixed pause was too short on a busy machine).
    for (const until = Date.now() + 15_000; backend.stats.watches < 50 && Date.now() < until; ) await sleep(10);
    expect(backend.stats.watches).toBe(50);
    expect(backend.stats.wakeups).toBe(0);
    gate();
    await Promise.all([holder, ...waiters]);
    // The k-th waiter got the lock after exactly k watch notifications in all: one per release.
    expect(wakeupsAtGrant).toEqual(Array.from({ length: 50 }, (_, k) => k + 1));
    expect(backend.stats.wakeups).toBe(50);
    await backend.close();
  });

  test("a SIGKILLed holder's lock frees when its session expires, not before", async () => {
    const lock = `test:zk-killed:${run}`;
    const sessionMs = env.ZOOKEEPER_SESSION_TIMEOUT_MS;
    const holder = contender(['hold', lock, '10000', 'zookeeper']);
    const heldFence = Number(await holder.line('HELD'));
    expect(await steal(lock)).toEqual({ acquired: false });

    holder.child.kill('SIGKILL');
    await holder.exited;
    const killedAt = Date.now();
    const fence = await withLock(lock, { ...zk, waitMs: 10_000 }, async (_signal, f) => f);
    const waited = Date.now() - killedAt;
    expect(fence).toBeGreaterThan(heldFence);
    // Nobody released it: the server expired the dead session, counting from the last ping the
    // holder sent (an idle client pings every third of the session), so at least ~2/3 of it.
    expect(waited).toBeGreaterThan(sessionMs * 0.5);
    expect(waited).toBeLessThan(sessionMs * 3);
  });
});
