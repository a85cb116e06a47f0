/**
 * Child process for lib/lock/product-locks.test.ts: the product's own locked work, run with
 * whatever LOCK_BACKEND (and REDLOCK_NODES / ZOOKEEPER_CONNECT) the parent put in its env.
 * Prints `BACKEND <nodes>` first, then per mode:
 *   locks <voucherId> <shopId> <typeId> <id>
 *     the voucher console lock (underVoucherLock), the shop cache rebuild (CacheClient.refresh)
 *     and the GEO index load (loadShopGeo, forced), one after the other; `START-<which>` before
 *     and `DONE-<which>` after each, so the parent can hold the same lock names and watch them
 *     wait; then stale-rebuild <id>.
 *   loop <voucherId> <counterKey> <sections> <workMs>
 *     contends for the voucher console lock until it has done <sections> non-atomic increments of
 *     <counterKey> (read, wait workMs, write unless the lock was lost meanwhile); a failed try (lock
 *     lost, busy, ZooKeeper unreachable) is retried. `ENTER <ms>` per section; at the end
 *     `RESULT {sections: [{enter, until, wrote, aborted}], failures: [...]}` where `until` is when
 *     the section ended or learnt it lost the lock, whichever came first.
 *   stale-rebuild <id>
 *     the cache's fenced writes: a slow rebuild reads the source, the source changes and is
 *     invalidated, the slow rebuild then tries to store what it read; prints
 *     `RESULT {afterStale, afterFresh, stored, fenceRecord}` (the raw entry left after the stale
 *     store, the value a read then returns, the raw entry that read stored, the key's fence record).
 */
import { CacheClient } from '@/lib/cache';
import { closeDb, db } from '@/lib/db/client';
import { closeLocks, configuredLockNodes } from '@/lib/lock';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { shopSpec } from '@/lib/shop/shop.cache';
import { loadShopGeo } from '@/lib/shop/shop.geo';
import { underVoucherLock } from '@/lib/voucher/voucher-sync';

const [mode, ...args] = process.argv.slice(2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => console.log(line);

async function locks(voucherId: string, shopId: string, typeId: string): Promise<void> {
  const steps: [string, () => Promise<unknown>][] = [
    ['voucher', () => underVoucherLock(voucherId, async () => undefined)],
    ['cache', () => new CacheClient(redis).refresh(shopSpec(db, redis, shopId))],
    ['geo', () => loadShopGeo(db, redis, typeId, true)],
  ];
  for (const [which, step] of steps) {
    say(`START-${which} ${Date.now()}`);
    await step();
    say(`DONE-${which} ${Date.now()}`);
  }
}

interface SectionRecord {
  enter: number;
  until: number;
  wrote: boolean;
  aborted: boolean;
}

async function loop(voucherId: string, counterKey: string, sections: number, workMs: number): Promise<void> {
  const done: SectionRecord[] = [];
  const failures: string[] = [];
  while (done.filter((s) => s.wrote).length < sections) {
    try {
      await underVoucherLock(voucherId, async (signal) => {
        const enter = Date.now();
        let abortedAt = 0;
        signal.addEventListener('abort', () => (abortedAt = Date.now()), { once: true });
        say(`ENTER ${enter}`);
        const v = Number((await redis.get(counterKey)) ?? 0);
        await sleep(workMs); // without mutual exclusion another section's write lands here and is lost
        let wrote = false;
        if (!signal.aborted) {
          await redis.set(counterKey, v + 1);
          wrote = true;
        }
        const left = Date.now();
        done.push({ enter, until: abortedAt ? Math.min(abortedAt, left) : left, wrote, aborted: abortedAt > 0 });
      });
    } catch (err) {
      failures.push((err as Error).message);
      await sleep(50);
    }
  }
  say(`RESULT ${JSON.stringify({ sections: done, failures })}`);
}

async function staleRebuild(id: string): Promise<void> {
  const cache = new CacheClient(redis, { lockWaitMs: 5_000, jitter: 0 });
  const key = keys.shop(`lockfence-${id}`);
  const source = `test:lockfence-source:{${id}}`;
  await redis.set(source, 'v1', 'PX', 60_000);
  let readStarted!: () => void;
  const started = new Promise<void>((r) => (readStarted = r));
  const spec = (slowMs: number) => ({
    key,
    ttlSeconds: 60,
    load: async () => {
      const v = await redis.get(source);
      readStarted();
      await sleep(slowMs);
      return { v };
    },
  });
  const slow = cache.refresh(spec(800));
  await started;
  await redis.set(source, 'v2', 'PX', 60_000); // the source of truth changes while the slow rebuild holds v1…
  await cache.invalidate(key); // …and is invalidated, as every shop write does
  await slow;
  const afterStale = await redis.get(key);
  const afterFresh = await cache.get(spec(0));
  const stored = await redis.get(key); // stored by that read, not only returned (a refused or skipped store returns it too)
  const fenceRecord = await redis.get(keys.fenceRecord(key));
  await Promise.all([key, keys.fenceRecord(key), source].map((k) => redis.del(k)));
  say(`RESULT ${JSON.stringify({ afterStale, afterFresh, stored, fenceRecord })}`);
}

say(`BACKEND ${configuredLockNodes}`);
if (mode === 'locks') {
  await locks(args[0]!, args[1]!, args[2]!);
  await staleRebuild(args[3]!);
}
else if (mode === 'loop') await loop(args[0]!, args[1]!, Number(args[2]), Number(args[3]));
else if (mode === 'stale-rebuild') await staleRebuild(args[0]!);
else throw new Error(`unknown mode ${mode}`);
await closeLocks();
await closeRedis();
await closeDb();
process.exit(0);
