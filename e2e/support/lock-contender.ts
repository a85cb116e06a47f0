/**
 * Child process for the lock tests (run with tsx; env from the parent).
 *   count <lock> <key> <unlockedKey> <n>  n concurrent non-atomic increments of <key> inside the
 *     lock and of <unlockedKey> without it; prints `RESULT [[fence, valueWritten], …]`.
 *   hold <lock> <leaseMs> [nodes]  takes the lock, prints `HELD <fence>`, then holds it until killed.
 */
import { closeLocks, withLock, type LockOptions } from '@/lib/lock';
import { closeRedis, redis } from '@/lib/redis/client';

const [mode, lock, ...rest] = process.argv.slice(2);

async function increment(key: string): Promise<number> {
  const v = Number((await redis.get(key)) ?? 0);
  // Yield between read and write, so without the lock other increments interleave here.
  await new Promise((r) => setTimeout(r, 1));
  await redis.set(key, v + 1);
  return v + 1;
}

async function count(key: string, unlockedKey: string, n: number): Promise<void> {
  const grants: [number, number][] = [];
  await Promise.all([
    ...Array.from({ length: n }, () =>
      withLock(lock!, { waitMs: 60_000, leaseMs: 5_000 }, async (_signal, fence) => {
        grants.push([fence, await increment(key)]);
      }),
    ),
    ...Array.from({ length: n }, () => increment(unlockedKey)),
  ]);
  console.log(`RESULT ${JSON.stringify(grants)}`);
}

async function hold(leaseMs: number, nodes?: LockOptions['nodes']): Promise<void> {
  await withLock(lock!, { leaseMs, nodes }, async (_signal, fence) => {
    console.log(`HELD ${fence}`);
    await new Promise(() => {});
  });
}

if (mode === 'count') await count(rest[0]!, rest[1]!, Number(rest[2]));
else if (mode === 'hold') await hold(Number(rest[0]), rest[1] as LockOptions['nodes']);
else throw new Error(`unknown mode ${mode}`);
await closeLocks();
await closeRedis();
