/**
 * Reading an unknown shop id could leave the rebuild lock's fence counter
 * `lock:{shop:<id>}:fence` alive for a DAY, not for the "not in DB" marker's 60 s that
 * docs/security.md#redis-stays-bounded promises for everything a stranger can name.
 *
 * Every grant of the rebuild lock (lua/lock-acquire-2.lua) sets the counter's expiry to 24 h. Only a
 * rebuild that stores the marker itself shortens it again (CacheClient.store → boundFenceCounter).
 * A rebuild that finds the marker already there (lib/cache/cache-client.ts `rebuild`, mode 'fill',
 * `current.kind !== 'miss'`) returns without storing, so the 24 h its grant set stays. That happens
 * when two cache clients miss the same unknown id together and the second takes the lock only after
 * the first released it. Two cache clients are the normal case: every web process has its own, and
 * even ONE web process has two, since the hot server's copy of lib/ (GET /api/shops/{id}/vouchers is
 * a hot route) and the Next build's copy (GET /api/shops/{id}, the shop page) each make their own
 * `cacheFor` map (the Redis connection is shared through globalThis, the single flight is not).
 *
 * Here the second copy is made the way the web server has it: the route module imported again
 * (vi.resetModules), sharing the process's Redis connection and pool. Its first GET of the key is
 * answered by Redis at once but handed to it only after the other copy's request has finished —
 * what a busy event loop or another process does to it. The interleaving is then exact instead of
 * left to chance, and each unknown id leaves one key with a day to live.
 *
 * Now a `fill` rebuild that finds the marker bounds the counter to the marker's life too. Found by
 * a review helper (each unknown id left one key with a day to live).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { randomInt } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeDb } from '@/lib/db/client';
import { closeLocks } from '@/lib/lock';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { callRoute } from '@/e2e/support/helpers';
import { GET as shopRoute } from '@/app/api/shops/[id]/route';

// The second copy of lib/ (the hot server's, next to Next's): its Redis is the same connection,
// whose GET of the watched key is handed back only when `handBack` is called.
let watched: string | null = null;
let handBack: (() => void) | null = null;
const g = globalThis as unknown as { __hmdpRedis?: RedisClient };
const real = g.__hmdpRedis!;
const laggingGet = async (key: string): Promise<string | null> => {
  const v = await real.get(key);
  if (key === watched) {
    watched = null;
    await new Promise<void>((r) => (handBack = r));
  }
  return v;
};
g.__hmdpRedis = new Proxy(real, {
  get(t, p) {
    if (p === 'get') return laggingGet;
    const v = Reflect.get(t, p, t) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
  },
});
vi.resetModules();
const { GET: vouchersRoute } = await import('@/app/api/shops/[id]/vouchers/route');
const { closeLocks: closeSecondCopyLocks } = await import('@/lib/lock');
g.__hmdpRedis = real;

afterAll(async () => {
  await Promise.all([closeLocks(), closeSecondCopyLocks()]);
  await Promise.all([closeDb(), closeRedis()]);
});

const unknownId = () => `9${String(randomInt(0, 1e14)).padStart(14, '0')}`;

/** One stranger's two reads of an unknown id, one per copy, interleaved as above. */
async function raceOnce(id: string) {
  watched = keys.shop(id);
  const second = callRoute(vouchersRoute, { params: { id } }); // reads the miss, then lags
  await vi.waitFor(() => expect(handBack).not.toBeNull(), { timeout: 2000, interval: 1 });
  const first = await callRoute(shopRoute, { params: { id } }); // miss → lock → marker → release
  const release = handBack!;
  handBack = null;
  release(); // the second copy goes on with the miss it read: takes the now free lock
  const late = await second;
  return { first: first.status, second: late.status };
}

describe('lock:{shop:<id>}:fence of an unknown id', () => {
  it('lives no longer than the "not in DB" marker when a second cache client takes the lock after the first stored the marker', async () => {
    for (let i = 0; i < 3; i++) {
      const id = unknownId();
      expect(await raceOnce(id)).toEqual({ first: 404, second: 404 });
      const [marker, record, counter] = await Promise.all([
        redis.pttl(keys.shop(id)),
        redis.pttl(keys.fenceRecord(keys.shop(id))),
        redis.pttl(keys.lockFence(`shop:${id}`)),
      ]);
      const nullTtlMs = env.CACHE_NULL_TTL_SECONDS * 1000 * (1 + env.CACHE_TTL_JITTER);
      expect(marker).toBeGreaterThan(0);
      expect(marker).toBeLessThanOrEqual(nullTtlMs);
      expect(record).toBeLessThanOrEqual(nullTtlMs);
      expect(counter).toBeGreaterThan(0);
      expect(counter).toBeLessThanOrEqual(nullTtlMs); // was a day
    }
  });
});
