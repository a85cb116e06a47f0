/**
 * Waiting without polling, measured on a redis-server of our own so its command counters hold
 * only this test's traffic: a waiter wakes on the release message, within a few ms, having sent a
 * handful of commands where a poller with the same latency would send hundreds.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runLocked } from '@/lib/lock/core';
import { singleNodeBackend, type SingleNodeBackend } from '@/lib/lock/single';
import { LOCK_PORTS, startRedisServer, type RedisServer } from '@/e2e/support/redis-server';
import { createRedis, type Redis } from '@/lib/redis/client';
import { monitorRedis } from '@/e2e/support/redis-monitor';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const outside = AsyncLocalStorage.snapshot();

let server: RedisServer;
let client: Redis;
let backend: SingleNodeBackend;

/**
 * Counts the commands clients send while `work` runs, by MONITOR (commands a Lua script runs
 * inside its one round trip show up with source "lua" and are not counted).
 */
async function countCommands<T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const monitor = await monitorRedis(({ source, args }) => {
    if (source !== 'lua') sent.push(args[0]!.toLowerCase());
  }, server.url);
  try {
    const result = await work();
    await sleep(20); // let the last MONITOR lines arrive
    return { result, sent };
  } finally {
    monitor.stop();
  }
}

beforeAll(async () => {
  server = await startRedisServer({ ports: LOCK_PORTS });
  client = createRedis(server.url);
  backend = singleNodeBackend(client);
  await runLocked(backend, 'warm-up', {}, async () => undefined); // loads the scripts
});

afterAll(async () => {
  await backend.close();
  await client.quit();
  await server.kill();
});

describe('waiting for a busy lock', () => {
  test('a waiter acquires within a few ms of the release, issuing a handful of commands', async () => {
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    let releasedAt = 0;
    const holder = runLocked(backend, 'one-waiter', { leaseMs: 10_000 }, async () => {
      holding();
      await sleep(1000);
      releasedAt = performance.now();
    });
    await held;
    const { result: acquiredAt, sent } = await countCommands(async () => {
      const at = await outside(() => runLocked(backend, 'one-waiter', { waitMs: 5000 }, async () => performance.now()));
      await holder;
      return at;
    });

    expect(acquiredAt - releasedAt).toBeLessThan(20);
    // Waiter: try, SUBSCRIBE, try again, try on the release message, UNSUBSCRIBE, its release;
    // the holder's release; the subscriber connection's INFO ready check: 8. Polling every
    // 10 ms through the same 1 s: 100+ commands.
    expect(sent.filter((c) => c === 'subscribe')).toHaveLength(1);
    expect(sent.length).toBeLessThanOrEqual(10);
  });

  test('50 queued waiters in one process cost about one attempt per release, not a stampede', async () => {
    const waiters = 50;
    const order: number[] = [];
    const { sent } = await countCommands(() =>
      runLocked(backend, 'queue', {}, async () => {
        const all = Array.from({ length: waiters }, (_, i) =>
          outside(() => runLocked(backend, 'queue', { waitMs: 10_000 }, async () => void order.push(i))),
        );
        await sleep(50);
        return all;
      }).then((all) => Promise.all(all)),
    );

    expect(order).toHaveLength(waiters);
    // One subscription shared by all 50; each waiter: first try, retry once subscribed, one try
    // on its wake, its release (≈ 4 each). Waking all 50 on every release: ≈ 1 300 attempts.
    expect(sent.filter((c) => c === 'subscribe')).toHaveLength(1);
    expect(sent.length).toBeLessThan(waiters * 5);
  });
});
