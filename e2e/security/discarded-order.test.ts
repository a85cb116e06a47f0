/**
 * A discarded dead letter never becomes an order (proof suite). The worker runs with the default
 * retry/sweep timings scaled down tenfold together (retry base 1 s → 100 ms, stale 10 s → 1 s,
 * sweep 5 s → 500 ms, 5 attempts), so the retry chain and the sweeper overlap exactly as in
 * production: while an order is in retry the sweeper publishes no extra copies, and a copy that
 * arrives after the admin's discard — with the database fixed, so it would succeed — writes nothing
 * while the unit goes back on sale. A discard after the order did land is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { GET as listRoute } from '@/app/api/admin/dead-letters/route';
import { POST as discardRoute } from '@/app/api/admin/dead-letters/[id]/discard/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { publishOrder } from '@/lib/seckill/publish';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { createTestUsers, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

let f: ConsoleFixture;
let users: TestUser[];
let worker: OrderWorker;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  users = await createTestUsers(db, redis, 2);
  worker = await startOrderWorker({ batchWaitMs: 5, retryBaseMs: 100, staleMs: 1000, sweepIntervalMs: 500, maxAttempts: 5 });
});
afterAll(async () => {
  await worker.stop();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const counter = async (c: { get(): Promise<{ values: { value: number; metricName?: string }[] }> }, suffix = '') =>
  (await c.get()).values.filter((v) => !suffix || v.metricName?.endsWith(suffix)).reduce((n, v) => n + v.value, 0);
const setDbStock = (id: string, stock: number) => sql`UPDATE tb_seckill_voucher SET stock = ${stock} WHERE voucher_id = ${id}`.execute(db);
const orderCount = async (id: string) => Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM tb_voucher_order WHERE voucher_id = ${id}`.execute(db)).rows[0]!.n);

async function failingGrab(user: TestUser, ip: string) {
  const created = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 3 }) });
  const voucherId = created.json.data.id as string;
  await setDbStock(voucherId, 0); // MySQL drifted: every persist of this sale fails the stock guard
  const g = await callRoute(grabRoute, { method: 'POST', token: user.token, params: { voucherId }, headers: { [PEER_HEADER]: ip } });
  expect(g.status).toBe(200);
  return { voucherId, orderId: g.json.data.orderId as string };
}

const deadLetterOf = (voucherId: string) =>
  waitFor('dead letter', async () => (await callRoute(listRoute, { token: f.merchantA.token, query: { voucherId } })).json.data.items[0], 30_000);

describe('discarded dead letters', () => {
  it('no sweeper copies during the retries; a late copy after the discard writes nothing and the unit is back', async () => {
    const republishedBefore = await counter(worker.metrics.republished);
    const { voucherId, orderId } = await failingGrab(users[0]!, '198.51.100.41');
    const dead = await deadLetterOf(voucherId);
    expect(dead).toMatchObject({ orderId, attempts: 5, status: 'dead' });
    // 100+500+2500+6000 ms of retries against a 1 s stale threshold: the sweeper held back.
    expect(await counter(worker.metrics.republished)).toBe(republishedBefore);

    expect((await callRoute(discardRoute, { token: f.merchantA.token, method: 'POST', params: { id: dead.id } })).json.data.changed).toBe(true);
    await waitFor('unit released', async () => (await redis.get(keys.seckillStock(voucherId))) === '3');

    await setDbStock(voucherId, 3); // the database is fine now: only the tombstone can stop the copy
    const batchesBefore = await counter(worker.metrics.batchSeconds, '_count');
    await publishOrder({ v: 1, orderId, userId: users[0]!.userId, voucherId, at: Date.now() });
    await waitFor('late copy handled', async () => (await counter(worker.metrics.batchSeconds, '_count')) > batchesBefore);
    expect(await orderCount(voucherId)).toBe(0);
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('3');
    expect(await redis.sismember(keys.seckillBuyers(voucherId), users[0]!.userId)).toBe(0);
  });

  it('a discard after the order landed is refused', async () => {
    const { voucherId } = await failingGrab(users[1]!, '198.51.100.42');
    const dead = await deadLetterOf(voucherId);
    await setDbStock(voucherId, 3);
    // A copy still in flight succeeds before anyone decides…
    await publishOrder({ v: 1, orderId: dead.orderId, userId: users[1]!.userId, voucherId, at: Date.now() });
    await waitFor('order landed', async () => (await orderCount(voucherId)) === 1);
    // …so discarding it now would put a sold unit back on sale: refused.
    const r = await callRoute(discardRoute, { token: f.merchantA.token, method: 'POST', params: { id: dead.id } });
    expect(r.status).toBe(409);
    expect(await orderCount(voucherId)).toBe(1);
  });
});
