/**
 * Stock buckets (docs/buckets.md): a flash sale spread over 3 buckets, through the real grab route,
 * Redis (scripts.test.ts's guard: single-slot; run again on a 3 + 3 cluster with REDIS_CLUSTER_NODES),
 * RabbitMQ and an in-process worker writing MySQL. Every test ends on the invariants, per bucket.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ SECKILL_REFUSAL_MEMORY_MS: '0' }));

import { spawn } from 'node:child_process';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, createTestVoucher, waitDrained, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { dbStockCounts, firstShopId } from '@/lib/seckill/seckill.repository';
import { getShopVouchers } from '@/lib/shop/shop.service';
import { keys } from '@/lib/redis/keys';
import { slotOf } from '@/lib/redis/slots';
import { bucketTag, bucketTags, homeBucket } from '@/lib/seckill/buckets/tags';
import { journaledMoves, movesInFlight, readMoveSeq, recoverMoves } from '@/lib/seckill/buckets/move';
import { giveBackToBuckets, takeFromBuckets } from '@/lib/seckill/buckets/lower';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { closeLocks } from '@/lib/lock';
import { cancelByBuyer } from '@/lib/order/lifecycle';
import { forgetBucketCount } from '@/lib/seckill/buckets/count';

const suite = orderWorkerSuite({ waitOutKeys: true, alsoClose: closeLocks, env: saved });
const N = 3;

beforeAll(suite.start);
afterAll(suite.end);

let ip = 0;
const grabOnce = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.77.${(ip >> 8) & 255}.${ip++ & 255}` } });

/** A grab as the grab box makes it: a 503 (the broker did not confirm in time; the unit went back) is tried again. */
async function grab(u: TestUser, voucherId: string) {
  for (let attempt = 1; ; attempt++) {
    const r = await grabOnce(u, voucherId);
    if (r.status !== 503 || attempt === 5) return r;
    await new Promise((res) => setTimeout(res, 300 * attempt));
  }
}

const statuses = (rs: { status: number }[]) => {
  const m: Record<number, number> = {};
  for (const r of rs) m[r.status] = (m[r.status] ?? 0) + 1;
  return m;
};

/** `want[b]` users whose home is bucket b, from a fresh batch of users. */
async function usersByHome(want: number[]): Promise<TestUser[]> {
  const pool = await createTestUsers(db, redis, want.reduce((a, w) => a + w, 0) * N + 30);
  const left = [...want];
  return pool.filter((u) => {
    const b = homeBucket(u.userId, N);
    return left[b]! > 0 && left[b]!-- > 0;
  });
}

describe('a flash sale over 3 stock buckets', () => {
  it('preheat splits the stock over 3 slots in 3 different thirds of the slot space, each with its own window', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 10, buckets: N });
    const tags = bucketTags(voucherId, N);
    expect(tags[0]).toBe(voucherId);
    expect(new Set(tags.map((t) => Math.floor((slotOf(keys.seckillMeta(t)) * N) / 16384))).size).toBe(N);
    // On a 3 + 3 cluster (REDIS_CLUSTER_NODES): three different masters.
    const slotOwners = (redis as unknown as { slots?: string[][] }).slots;
    if (slotOwners?.length) expect(new Set(tags.map((t) => slotOwners[slotOf(keys.seckillMeta(t))]![0])).size).toBe(N);
    const s = await readSeckillState(redis, voucherId);
    expect(s?.buckets?.map((b) => b.initial)).toEqual([4, 3, 3]);
    expect(s?.initial).toBe(10);
    for (const t of tags) expect(await redis.hmget(keys.seckillMeta(t), 'begin', 'end', 'buckets')).toEqual([expect.any(String), expect.any(String), String(N)]);
    await assertInvariants(voucherId);
    // The shop page shows the whole sale's live stock (the sum), not bucket 0's.
    const shopId = (await firstShopId(db))!;
    await redis.del(keys.shopVouchers(shopId));
    const shown = (await getShopVouchers(db, redis, shopId)).find((v) => v.id === voucherId);
    expect(shown?.seckill).toMatchObject({ initialStock: 10, remaining: 10, live: true });
  });

  it('30 users racing for 30 units whose homes are 20/8/2: everyone gets one (stock moves home), then SOLD_OUT for all', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 30, buckets: N });
    const users = await usersByHome([20, 8, 2]);
    expect(users).toHaveLength(30);
    // Each user twice at once: one order each, the other 409.
    const results = await Promise.all(users.flatMap((u) => [grab(u, voucherId), grab(u, voucherId)]));
    expect(statuses(results)).toEqual({ 200: 30, 409: 30 });
    const late = await usersByHome([3, 3, 3]);
    const lateResults = await Promise.all(late.map((u) => grab(u, voucherId)));
    expect(statuses(lateResults)).toEqual({ 410: 9 });
    await waitDrained(db, redis, voucherId, 30);
    const s = await readSeckillState(redis, voucherId);
    expect(s?.buckets?.map((b) => b.remaining)).toEqual([0, 0, 0]);
    expect(s?.buckets?.map((b) => b.buyers)).toEqual([20, 8, 2]);
    expect(await journaledMoves(redis, voucherId, N)).toEqual([]);
    const r = await assertInvariants(voucherId, { drained: true });
    expect(r.oversold).toBe(0);
    expect(r.duplicates).toBe(0);
  });

  it('600 users × 2 grabs at once against 100 units over 3 buckets: exactly 100 orders, nobody twice, never oversold', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 100, buckets: N });
    const users = await createTestUsers(db, redis, 600);
    const results = await Promise.all(users.flatMap((u) => [grab(u, voucherId), grab(u, voucherId)]));
    const st = statuses(results);
    expect(st[200]).toBe(100);
    expect((st[409] ?? 0) + (st[410] ?? 0)).toBe(1100);
    await waitDrained(db, redis, voucherId, 100);
    await assertInvariants(voucherId, { drained: true });
  });

  it('a mover SIGKILLed between taking units and delivering them: the units are in flight, the sums hold, recovery delivers them once', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 12, buckets: N });
    // One node process with tsx as a loader: the tsx CLI would fork a second one that SIGKILL misses.
    const child = spawn(process.execPath, ['--import', 'tsx', 'e2e/support/bucket-mover.ts', voucherId, String(N), '1', '0', '3'], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    const said = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`mover exited ${code} before taking`)));
    });
    expect(said).toBe('taken 3');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const mid = await readSeckillState(redis, voucherId);
    expect(mid?.inFlight).toBe(3);
    expect(mid?.buckets?.map((b) => b.remaining)).toEqual([4, 1, 4]);
    await assertInvariants(voucherId); // 9 in buckets + 3 in flight = 12
    expect(await movesInFlight(redis, voucherId, N)).toHaveLength(1);

    // Recovery (here, or the worker's sweeper, whichever gets the lock first once the dead
    // mover's lease ran out) delivers the move exactly once.
    expect(await recoverMoves(redis, voucherId, N)).toBeLessThanOrEqual(1);
    expect(await recoverMoves(redis, voucherId, N)).toBe(0);
    expect(await journaledMoves(redis, voucherId, N)).toEqual([]);
    const after = await readSeckillState(redis, voucherId);
    expect(after?.inFlight).toBe(0);
    expect(after?.buckets?.map((b) => b.remaining)).toEqual([7, 1, 4]);
    await preheatVoucher(db, redis, voucherId);
    expect((await readSeckillState(redis, voucherId))?.buckets?.map((b) => b.initial)).toEqual([7, 1, 4]);

    // And every unit sells: 12 users, 4 per home bucket.
    const users = await usersByHome([4, 4, 4]);
    expect(statuses(await Promise.all(users.map((u) => grab(u, voucherId))))).toEqual({ 200: 12 });
    await waitDrained(db, redis, voucherId, 12);
    await assertInvariants(voucherId, { drained: true });
  });

  it('lowering takes from the richest buckets; short takes nothing; a give-back tried twice returns each bucket\'s units once', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 30, buckets: N });
    const initials = async () => (await readSeckillState(redis, voucherId))?.buckets?.map((b) => b.initial);
    expect(await initials()).toEqual([10, 10, 10]);
    expect(await takeFromBuckets(redis, voucherId, N, 31)).toEqual({ status: 'short' });
    expect(await initials()).toEqual([10, 10, 10]);
    const r = await takeFromBuckets(redis, voucherId, N, 25);
    if (r.status !== 'ok') throw new Error(`expected ok, got ${r.status}`);
    expect([...r.taken.values()].reduce((a, b) => a + b, 0)).toBe(25);
    expect((await initials())?.reduce((a, b) => a + b, 0)).toBe(5);
    await giveBackToBuckets(redis, voucherId, N, r.taken);
    await giveBackToBuckets(redis, voucherId, N, r.taken);
    expect(await initials()).toEqual([10, 10, 10]);
    expect(await readMoveSeq(redis, voucherId) % 2).toBe(0);
    await assertInvariants(voucherId);
  });

  it('a cancelled order gives its unit back in the buyer\'s home bucket, where the buyer forfeits; a user of another bucket then gets it', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3, buckets: N });
    const [a, b, c, d] = await usersByHome([0, 3, 1]).then((us) => us.sort((x, y) => homeBucket(x.userId, N) - homeBucket(y.userId, N)));
    // Three users of bucket 1 take all 3 units (two of them moved in from buckets 0 and 2).
    const first = await Promise.all([a!, b!, c!].map((u) => grab(u, voucherId)));
    expect(statuses(first)).toEqual({ 200: 3 });
    expect((await grab(d!, voucherId)).status).toBe(410);
    await waitDrained(db, redis, voucherId, 3);
    await cancelByBuyer(db, redis, a!.userId, first[0]!.json.data.orderId);
    await waitFor('the unit back in Redis', async () => (await readSeckillState(redis, voucherId))?.remaining === 1);
    const s = await readSeckillState(redis, voucherId);
    expect(s?.buckets?.map((x) => x.remaining)).toEqual([0, 1, 0]);
    expect(await redis.sismember(keys.seckillForfeit(bucketTag(voucherId, 1, N)), a!.userId)).toBe(1);
    expect((await grab(a!, voucherId)).json.error.code).toBe('FORFEITED');
    // d (home bucket 2) was told SOLD_OUT when every bucket was empty; now the unit moves to it.
    expect((await grab(d!, voucherId)).status).toBe(200);
    await waitDrained(db, redis, voucherId, 3);
    await assertInvariants(voucherId, { drained: true });
  });

  it('bucket 0 lost: a cancel handled by a process that never learnt N still gives the unit back in the buyer\'s home bucket', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 4, buckets: N });
    const [u] = await usersByHome([0, 1, 0]);
    const g = await grab(u!, voucherId);
    expect(g.status).toBe(200);
    await waitDrained(db, redis, voucherId, 1);
    // Bucket 0's keys are gone (its master lost them), and this process never served a grab of the sale.
    await Promise.all([keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId)].map((k) => redis.del(k)));
    forgetBucketCount(voucherId);
    await cancelByBuyer(db, redis, u!.userId, g.json.data.orderId);
    const home = bucketTag(voucherId, 1, N);
    await waitFor('the unit back in the home bucket', async () => (await redis.sismember(keys.seckillBuyers(home), u!.userId)) === 0);
    expect(await redis.sismember(keys.seckillForfeit(home), u!.userId)).toBe(1);
    // The repair rebuilds bucket 0: every unit on sale, Redis and MySQL agree.
    await preheatVoucher(db, redis, voucherId);
    expect((await readSeckillState(redis, voucherId))?.remaining).toBe(4);
    expect((await dbStockCounts(db, voucherId))?.stock).toBe(4);
    await assertInvariants(voucherId, { drained: true });
  });

  it('a bucket lost mid-sale (its keys gone) is rebuilt from MySQL by preheat: its share is what the others do not hold', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 9, buckets: N });
    const users = await usersByHome([2, 2, 2]);
    expect(statuses(await Promise.all(users.map((u) => grab(u, voucherId))))).toEqual({ 200: 6 });
    await waitDrained(db, redis, voucherId, 6);
    const lost = bucketTag(voucherId, 1, N);
    await Promise.all([keys.seckillMeta(lost), keys.seckillStock(lost), keys.seckillBuyers(lost)].map((k) => redis.del(k)));
    await preheatVoucher(db, redis, voucherId);
    const s = await readSeckillState(redis, voucherId);
    expect(s?.buckets?.map((b) => [b.initial, b.buyers])).toEqual([
      [3, 2],
      [3, 2],
      [3, 2],
    ]);
    // The rebuilt bucket still knows its buyers: a second grab is 409, not a second order.
    const again = users.filter((u) => homeBucket(u.userId, N) === 1);
    expect(statuses(await Promise.all(again.map((u) => grab(u, voucherId))))).toEqual({ 409: 2 });
    await assertInvariants(voucherId, { drained: true });
  });
});
