/**
 * WAIT 1 after a write on the voucher's master, on the real cluster: the replica acknowledges, and
 * the cost per grab is measured against the same write without WAIT (printed; the figures are in docs/redis-cluster.md#replica-wait-is-off-by-default).
 */
import { performance } from 'node:perf_hooks';
import { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { waitForReplica } from '@/lib/seckill/replica-wait';

const vid = `wait-test-${process.pid}`;
afterAll(async () => {
  await redis.del(keys.seckillStock(vid));
  await closeRedis();
});

describe.runIf(redis instanceof Cluster)('WAIT 1 after a grab', () => {
  it('the voucher master’s replica acknowledges every write; cost measured', async () => {
    const n = 300;
    const time = async (withWait: boolean) => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        await redis.set(keys.seckillStock(vid), i, 'EX', 60);
        if (withWait) expect(await waitForReplica(redis, vid, 100)).toBe(1);
      }
      return (performance.now() - t0) / n;
    };
    await time(false); // warm the connections
    const plain = await time(false);
    const waited = await time(true);
    console.log(`write alone ${plain.toFixed(3)} ms, write + WAIT 1 ${waited.toFixed(3)} ms per grab (${n} sequential)`);
    expect(waited).toBeGreaterThan(plain);
  });
});
