/**
 * A bucketed sale (N = 3, docs/buckets.md) whose bucket 0 (or a bucket's write) is lost, against the
 * code that works out N or a user's home bucket without it. Real MySQL + Redis; no worker runs (each
 * step is called directly, so the order of events is exactly the one described). Both fail on the
 * old code: the sweeper guessed N = 1 and retired the sale with an order still in bucket 1's outbox;
 * a bucketed preheat kept a buyer whose return Redis forgot, so the unit stayed gone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { closeLocks } from '@/lib/lock';
import { keys } from '@/lib/redis/keys';
import { nextOrderId } from '@/lib/id';
import { runGrabScript } from '@/lib/seckill/grab';
import { parseOrderMessage, type OrderMessage } from '@/lib/seckill/message';
import { sweepOutbox, type SweepDeps } from '@/lib/seckill/sweeper';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { readSeckillState } from '@/lib/seckill/state';
import { forgetBucketCount } from '@/lib/seckill/buckets/count';
import { bucketTag, homeBucket } from '@/lib/seckill/buckets/tags';
import { startRedisRepair } from '@/lib/seckill/repair';
import { persistOrders } from '@/lib/order/persist';
import { cancelByBuyer } from '@/lib/order/lifecycle';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { createTestUsers, createTestVoucher, type TestUser } from '@/e2e/support/fixtures/seckill';

const N = 3;

afterAll(async () => {
  await closeLocks();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

async function usersWithHome(home: number, n: number, count: number): Promise<TestUser[]> {
  const pool = await createTestUsers(db, redis, count * n + 20);
  const out = pool.filter((u) => homeBucket(u.userId, n) === home).slice(0, count);
  if (out.length < count) throw new Error('not enough users');
  return out;
}

/** The grab script in the user's home bucket, exactly as grabVoucher runs it; the process then dies before the publish. */
async function acceptInHome(voucherId: string, userId: string, n: number): Promise<OrderMessage> {
  const orderId = await nextOrderId(redis);
  const tag = n === 1 ? voucherId : bucketTag(voucherId, homeBucket(userId, n), n);
  const [code, payload] = await runGrabScript(redis, { voucherId, userId, orderId, tag });
  if (code !== 0) throw new Error(`grab refused: ${code}`);
  const parsed = parseOrderMessage(payload!);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.msg;
}

/** Bucket 0's keys gone (its master restarted empty / a failover to a replica that had none of it). */
async function loseBucket0(voucherId: string) {
  await redis.del(keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId), keys.seckillPending(voucherId));
  forgetBucketCount(voucherId); // a worker process that starts now has never learnt N
}

describe('bucket 0 lost: the outbox sweeper reads N from MySQL', () => {
  it('a grab accepted in bucket 1 but never published is republished by the sweeper even while bucket 0 is lost', async () => {
    // The sale ends 2.5 s from now; a buyer of bucket 1 is accepted just before the end and the web process dies before publishing.
    const voucherId = await createTestVoucher(db, redis, { stock: 6, buckets: N, endsInMs: 2500 });
    const [u] = await usersWithHome(1, N, 1);
    const msg = await acceptInHome(voucherId, u!.userId, N);
    expect(await redis.hexists(keys.seckillPending(bucketTag(voucherId, 1, N)), msg.orderId)).toBe(1);
    await new Promise((r) => setTimeout(r, 3000)); // the sale is over now
    // Bucket 0's node loses its keys; a worker that starts now sweeps.
    await loseBucket0(voucherId);
    const published: OrderMessage[] = [];
    const deps: SweepDeps = { db, redis, publish: async (m) => void published.push(m), staleMs: 0, claimMs: 1 };
    await sweepOutbox(deps);
    // The automatic repair (a failover/restart was seen) runs: does it bring the sale back?
    const repair = startRedisRepair({ db, redis, checkMs: 0, delaysMs: [] });
    await repair.repairNow('failover');
    repair.stop();
    await new Promise((r) => setTimeout(r, 5));
    await sweepOutbox(deps);
    await new Promise((r) => setTimeout(r, 5));
    await sweepOutbox(deps);
    // The accepted (200) order must reach the queue: it is in no other place than bucket 1's outbox.
    expect(published.map((m) => m.orderId)).toContain(msg.orderId);
  });
});

describe('a bucketed preheat gives back a unit whose return Redis forgot', () => {
  for (const n of [1, N]) {
    it(`N = ${n}: cancel → return in the home bucket → failover forgets the return → preheat gives the unit back`, async () => {
      const voucherId = await createTestVoucher(db, redis, { stock: 6, buckets: n });
      const [u] = await usersWithHome(n === 1 ? 0 : 1, n, 1);
      const tag = n === 1 ? voucherId : bucketTag(voucherId, 1, n);
      const msg = await acceptInHome(voucherId, u!.userId, n);
      await persistOrders(db, [msg]); // the worker wrote it
      await redis.hdel(keys.seckillPending(tag), msg.orderId);
      // Snapshot of the home bucket as a replica that never saw the return will have it.
      const [stockBefore, returnedBefore] = await Promise.all([redis.get(keys.seckillStock(tag)), redis.smembers(keys.seckillReturned(tag))]);
      await cancelByBuyer(db, redis, u!.userId, msg.orderId);
      expect(await redis.sismember(keys.seckillBuyers(tag), u!.userId)).toBe(0);
      // Failover to a replica that had not seen the return script (the grab long replicated): buyer back, stock one short, no returned mark, no forfeit.
      await redis.sadd(keys.seckillBuyers(tag), u!.userId);
      await redis.set(keys.seckillStock(tag), stockBefore!);
      await redis.del(keys.seckillReturned(tag));
      if (returnedBefore.length) await redis.sadd(keys.seckillReturned(tag), ...returnedBefore);
      await redis.srem(keys.seckillForfeit(tag), u!.userId);
      // The automatic repair preheats from MySQL: the order is cancelled, all 6 units are MySQL's stock.
      await preheatVoucher(db, redis, voucherId);
      const s = await readSeckillState(redis, voucherId);
      const c = await dbStockCounts(db, voucherId);
      expect(c?.stock).toBe(6);
      expect(s?.remaining).toBe(6);
      expect(s?.buyers).toBe(0);
    });
  }
});
