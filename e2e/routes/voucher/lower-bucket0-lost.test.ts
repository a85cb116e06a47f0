/**
 * Lowering a bucketed sale's stock (console PATCH) while bucket 0's keys are lost and this
 * process never learnt N: takeRedisStock guesses N = 1, finds bucket 0 "not preheated" and lets
 * MySQL's guard decide — which does not know the grabs still in flight that buckets 1 and 2 hold.
 * On the old code the PATCH answered 200 and one of the six accepted orders could never be written.
 * Now N comes from MySQL and the buckets answer "short": 400, and all six orders are written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { closeLocks } from '@/lib/lock';
import { callRoute } from '@/e2e/support/helpers';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { PATCH as patchRoute } from '@/app/api/admin/vouchers/[id]/route';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { keys } from '@/lib/redis/keys';
import { nextOrderId } from '@/lib/id';
import { runGrabScript } from '@/lib/seckill/grab';
import { parseOrderMessage, type OrderMessage } from '@/lib/seckill/message';
import { bucketTag, homeBucket } from '@/lib/seckill/buckets/tags';
import { forgetBucketCount } from '@/lib/seckill/buckets/count';
import { persistOrders } from '@/lib/order/persist';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';

const N = 3;
let f: ConsoleFixture;
beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});
afterAll(async () => {
  await closeLocks();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

describe('lowering a bucketed sale\'s stock with bucket 0 lost', () => {
  it('6 grabs accepted in buckets 1 and 2 (not yet written): lowering 10 → 5 must be refused', async () => {
    const r = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 10, buckets: N }) });
    expect(r.status).toBe(201);
    const id: string = r.json.data.id;
    const pool = await createTestUsers(db, redis, 40);
    const buyers = [...pool.filter((u) => homeBucket(u.userId, N) === 1).slice(0, 3), ...pool.filter((u) => homeBucket(u.userId, N) === 2).slice(0, 3)];
    const msgs: OrderMessage[] = [];
    for (const u of buyers) {
      const orderId = await nextOrderId(redis);
      const [code, payload] = await runGrabScript(redis, { voucherId: id, userId: u.userId, orderId, tag: bucketTag(id, homeBucket(u.userId, N), N) });
      expect(code).toBe(0); // 200 to the buyer; the order is on its way to the worker
      const p = parseOrderMessage(payload!);
      if (p.ok) msgs.push(p.msg);
    }
    expect(msgs).toHaveLength(6);
    // Bucket 0's master lost its keys; the console's process never served this sale.
    await redis.del(keys.seckillMeta(id), keys.seckillStock(id), keys.seckillBuyers(id), keys.seckillPending(id));
    forgetBucketCount(id);
    const lowered = await callRoute(patchRoute, { method: 'PATCH', token: f.merchantA.token, params: { id }, body: { stock: 5 } });
    expect(lowered.status).toBe(400);
    // The worker now writes the 6 accepted orders: every one fits under MySQL's stock guard.
    const pr = await persistOrders(db, msgs);
    expect(pr.inserted).toBe(6);
    const c = await dbStockCounts(db, id);
    expect(c?.stock).toBe(4);
    expect(c?.orders).toBe(6);
  });
});
