/**
 * The multi-node lock over three redis-server processes of our own, really killed: granted by a
 * majority, so it keeps working (and excluding) with one node dead and refuses with two dead.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LockTimeoutError, runLocked, tryRunLocked } from '@/lib/lock/core';
import { multiNodeBackend, type MultiNodeBackend } from '@/lib/lock/multi';
import { LOCK_PORTS, startRedisServer, type RedisServer } from '@/e2e/support/redis-server';
import { createRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const outside = AsyncLocalStorage.snapshot();
const LOCK = 'multi-test';

let servers: RedisServer[];
let backend: MultiNodeBackend;
const steal = () => outside(() => tryRunLocked(backend, LOCK, {}, async () => 'stolen'));

beforeAll(async () => {
  servers = [];
  for (let i = 0; i < 3; i++) servers.push(await startRedisServer({ ports: LOCK_PORTS }));
  backend = multiNodeBackend(servers.map((s) => s.url));
});

afterAll(async () => {
  await backend.close();
  await Promise.all(servers.map((s) => s.kill()));
});

describe('multi-node lock (Redlock over 3 nodes)', () => {
  let firstFence = 0;
  test('is taken on every live node and fences strictly increase', async () => {
    const fences: number[] = [];
    for (let i = 0; i < 3; i++) {
      fences.push(
        await runLocked(backend, LOCK, {}, async (_signal, fence) => {
          const onNodes = await Promise.all(
            servers.map(async (s) => {
              const c = createRedis(s.url);
              try {
                return await c.exists(keys.lockMulti(LOCK));
              } finally {
                c.disconnect();
              }
            }),
          );
          expect(onNodes).toEqual([1, 1, 1]);
          expect(await steal()).toEqual({ acquired: false });
          return fence;
        }),
      );
    }
    // A fresh counter starts at the clock (ms), then counts up by one per grant.
    expect(fences[0]).toBeGreaterThan(Date.now() - 60_000);
    expect(fences).toEqual([fences[0], fences[0]! + 1, fences[0]! + 2]);
    firstFence = fences[0]!;
  });

  test('holds with 1 of 3 nodes down: the held lock keeps renewing and excluding, new grants still work', async () => {
    const aborted = await runLocked(backend, LOCK, { leaseMs: 600 }, async (signal) => {
      await servers[0]!.kill();
      await sleep(1500); // two and a half leases: only renewals on the 2 live nodes keep it
      expect(await steal()).toEqual({ acquired: false });
      return signal.aborted;
    });
    expect(aborted).toBe(false);

    const fence = await runLocked(backend, LOCK, {}, async (_signal, f) => {
      expect(await steal()).toEqual({ acquired: false });
      return f;
    });
    expect(fence).toBe(firstFence + 4);
  });

  test('refuses with 2 of 3 nodes down, and a holder is told when the majority goes', async () => {
    const reason = await runLocked(backend, LOCK, { leaseMs: 600 }, async (signal) => {
      await servers[1]!.kill();
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      return signal.reason as Error;
    });
    expect(reason.name).toBe('LockLostError');

    expect(await tryRunLocked(backend, LOCK, {}, async () => 'granted')).toEqual({ acquired: false });
    await expect(runLocked(backend, LOCK, { waitMs: 300 }, async () => 'granted')).rejects.toBeInstanceOf(LockTimeoutError);
  });
});
