/**
 * Stock buckets and the per-process refusal memory (docs/buckets.md#sold-out-is-the-sum): a SOLD_OUT
 * from one bucket while others still hold stock is never remembered, only the whole sale's is.
 * Real Redis (or the 3 + 3 cluster), the real grab route, RabbitMQ and an in-process worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { orderWorkerSuite, routeTestWorker } from '@/e2e/support/fixtures/order-worker';
import { openRefusalMemory, type RefusalMemoryHandle } from '@/lib/seckill/refusal-memory';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, createTestVoucher, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { closeLocks, withLock } from '@/lib/lock';
import { moveLockName } from '@/lib/seckill/buckets/move';
import { homeBucket } from '@/lib/seckill/buckets/tags';

const N = 3;
const suite = orderWorkerSuite({ options: { ...routeTestWorker, sweepIntervalMs: 3_600_000 }, alsoClose: closeLocks });
let handle: RefusalMemoryHandle;

beforeAll(async () => {
  await suite.start();
  handle = openRefusalMemory(redis, 10_000);
  await waitFor('the refusal memory subscribed', async () => handle.memory.isTrusted);
});

afterAll(suite.end);

let ip = 0;
const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.78.${(++ip >> 8) & 255}.${ip & 255}` } });

describe('refusal memory of a bucketed sale', () => {
  it('remembers SOLD_OUT only once every bucket is empty, not when a home bucket is empty and no move could be made', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3, buckets: N }); // shares 1/1/1
    const pool = await createTestUsers(db, redis, 40);
    const home0 = pool.filter((u) => homeBucket(u.userId, N) === 0);
    const [a, b, c, d, e] = home0;
    expect((await grab(a!, voucherId)).status).toBe(200); // bucket 0 is empty now

    // Another process holds the move lock (a long move, say): b's home is empty and no stock can
    // come in, so b hears SOLD_OUT after the bounded rounds, but the process must not remember it.
    let release!: () => void;
    let held!: () => void;
    const acquired = new Promise<void>((r) => (held = r));
    const holder = withLock(moveLockName(voucherId), { leaseMs: 5000 }, () => {
      held();
      return new Promise<void>((r) => (release = r));
    });
    await acquired;
    const refused = await grab(b!, voucherId);
    release();
    await holder;
    expect(refused.json.error?.code).toBe('SOLD_OUT');
    expect(handle.memory.lookup(voucherId)).toBeNull();

    // The lock is free: the next user of bucket 0 gets a unit moved home, then the last one.
    expect((await grab(c!, voucherId)).status).toBe(200);
    expect((await grab(d!, voucherId)).status).toBe(200);
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(0);
    // Now the whole sale is sold out: remembered.
    expect((await grab(e!, voucherId)).json.error?.code).toBe('SOLD_OUT');
    expect(handle.memory.lookup(voucherId)).toBe('SOLD_OUT');
    await waitFor('the drain', async () => (await readSeckillState(redis, voucherId))?.pending === 0);
    await assertInvariants(voucherId, { drained: true });
  });
});
