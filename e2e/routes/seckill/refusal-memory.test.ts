/**
 * The per-process refusal memory (lib/seckill/refusal-memory.ts) on real Redis, through the real
 * grab route (and, with TEST_DOOR=hot, over HTTP through the hot server): a remembered refusal
 * sends nothing to Redis, expires at its bound, is forgotten as soon as another client publishes a
 * change, is never trusted while its subscriber is down, and junk ids never enter it. Redis
 * commands are counted by wrapping the command client's sendCommand (works on one node and on a
 * Cluster alike).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Redis from 'ioredis';
import { db } from '@/lib/db/client';
import { redis, createRedis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { PATCH as patchRoute } from '@/app/api/admin/vouchers/[id]/route';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { orderWorkerSuite, routeTestWorker } from '@/e2e/support/fixtures/order-worker';
import { addSeckillStock, preheatVoucher } from '@/lib/seckill/preheat';
import { returnUnitToRedis } from '@/lib/order/stock-return';
import { releaseOrder } from '@/lib/seckill/outbox';
import { openRefusalMemory, RefusalMemory, refusalsFromMemory, type RefusalMemoryHandle } from '@/lib/seckill/refusal-memory';
import { createTestUsers, createTestVoucher, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { readSeckillState } from '@/lib/seckill/state';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { env } from '@/lib/env';

let other: RedisClient;
let handle: RefusalMemoryHandle;
const BOUND_MS = 3000;
let f: ConsoleFixture;
const sent: string[][] = [];

// No outbox sweeps while the tests run: the sweeper shares this process's command client and
// names every live voucher's keys, so a sweep landing inside a counting window was counted as a
// grab's command (seen once in CI's hot-door run). Nothing here needs the sweeper.
const suite = orderWorkerSuite({ options: { ...routeTestWorker, sweepIntervalMs: 3_600_000 }, alsoClose: () => other.quit() });

beforeAll(async () => {
  await suite.start();
  // "Another process": its own connection, publishing the way the worker or another web process would.
  other = createRedis();
  // A bound of 3 s, not the default 1 s: a loaded CI machine can stall a second between two grabs,
  // and the invalidation tests below then prove pub/sub (forgotten within 1 s), not expiry.
  handle = openRefusalMemory(redis, BOUND_MS);
  const forget = handle.memory.forget.bind(handle.memory);
  handle.memory.forget = (which) => {
    if (typeof which === 'string') invalidations.set(which, (invalidations.get(which) ?? 0) + 1);
    forget(which);
  };
  await waitFor('the refusal memory subscribed', async () => handle.memory.isTrusted);
  const original = redis.sendCommand.bind(redis) as (...a: unknown[]) => unknown;
  (redis as unknown as { sendCommand: (...a: unknown[]) => unknown }).sendCommand = (cmd: unknown, ...rest: unknown[]) => {
    const c = cmd as { name: string; args: unknown[] };
    sent.push([c.name, ...c.args.map(String)]);
    return original(cmd, ...rest);
  };
  f = await createConsoleFixture(db, redis);
});

afterAll(suite.end);

let ip = 0;
const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.77.${(++ip >> 8) & 255}.${ip & 255}` } });

/** Redis commands (of the command client) that named this voucher's keys while `fn` ran. */
async function voucherCommands(voucherId: string, fn: () => Promise<unknown>): Promise<number> {
  const from = sent.length;
  await fn();
  return sent.slice(from).filter((c) => c.some((a) => a.includes(`{${voucherId}}`))).length;
}

async function soldOutVoucher(): Promise<{ voucherId: string; buyer: TestUser; users: TestUser[] }> {
  const voucherId = await createTestVoucher(db, redis, { stock: 1 });
  const [buyer, ...users] = await createTestUsers(db, redis, 8);
  expect((await grab(buyer!, voucherId)).status).toBe(200);
  const first = await grab(users[0]!, voucherId); // answered by the script, remembered
  expect([first.status, first.json.error.code]).toEqual([410, 'SOLD_OUT']);
  expect(handle.memory.lookup(voucherId)).toBe('SOLD_OUT');
  // The worker (in this process, on the same command client) clears the order's outbox entry once
  // it is written: let that happen before any counting window (it landed inside one in CI).
  await waitFor('the order written', async () => (await readSeckillState(redis, voucherId))?.pending === 0);
  return { voucherId, buyer: buyer!, users };
}

/** Invalidations that reached this process's memory, by voucher id (the subscriber calls memory.forget). */
const invalidations = new Map<string, number>();

/**
 * Runs `change` (another client's) and waits until its invalidation has reached the memory. Not
 * "until the entry is gone": the entry may already have expired (a slow CI machine), and then the
 * message, which on a Cluster crosses the cluster bus after PUBLISH has answered, could land
 * inside the next grab and keep that grab's refusal out of the memory, as it should.
 */
async function forgottenAfter<T>(voucherId: string, change: () => Promise<T>, invalidationsExpected = 1): Promise<T> {
  const before = invalidations.get(voucherId) ?? 0;
  const result = await change();
  await waitFor('the voucher forgotten', async () => (invalidations.get(voucherId) ?? 0) >= before + invalidationsExpected && handle.memory.lookup(voucherId) === null, 1000, 5);
  return result;
}

describe('refusal memory', () => {
  it('a remembered sold out answers the same 410 without a Redis command for the voucher', async () => {
    const { voucherId, users } = await soldOutVoucher();
    const before = (await refusalsFromMemory.get()).values.find((v) => v.labels.outcome === 'sold_out')?.value ?? 0;
    const script = await grab(users[0]!, voucherId);
    let answers: Awaited<ReturnType<typeof grab>>[] = [];
    const n = await voucherCommands(voucherId, async () => {
      answers = await Promise.all(users.slice(1).map((u) => grab(u, voucherId)));
    });
    expect(n).toBe(0);
    for (const a of answers) {
      expect(a.status).toBe(410);
      expect(a.json).toEqual(script.json); // same code and message as the script path
    }
    const after = (await refusalsFromMemory.get()).values.find((v) => v.labels.outcome === 'sold_out')?.value ?? 0;
    expect(after - before).toBe(answers.length + 1);
    // Control: without the memory the same grab does reach Redis (the counter above can see it).
    handle.memory.forget(voucherId);
    expect(await voucherCommands(voucherId, () => grab(users[1]!, voucherId))).toBeGreaterThan(0);
  });

  it('an entry expires at its bound: the next grab asks Redis again', async () => {
    const { voucherId, users } = await soldOutVoucher();
    expect(await voucherCommands(voucherId, () => grab(users[1]!, voucherId))).toBe(0);
    await new Promise((r) => setTimeout(r, BOUND_MS + 50));
    expect(handle.memory.lookup(voucherId)).toBeNull();
    expect(await voucherCommands(voucherId, () => grab(users[2]!, voucherId))).toBeGreaterThan(0);
  });

  it('add-stock from another client: forgotten at once, the next grab is accepted', async () => {
    const { voucherId, users } = await soldOutVoucher();
    await forgottenAfter(voucherId, () => addSeckillStock(db, other, voucherId, 1));
    expect((await grab(users[1]!, voucherId)).status).toBe(200);
  });

  it('a preheat, a returned unit and a released order from another client: each forgotten at once', async () => {
    const { voucherId, buyer, users } = await soldOutVoucher();
    await forgottenAfter(voucherId, () => preheatVoucher(db, other, voucherId));

    expect((await grab(users[1]!, voucherId)).status).toBe(410);
    expect(handle.memory.lookup(voucherId)).toBe('SOLD_OUT');
    const order = await waitFor('the order in MySQL', () =>
      db.selectFrom('tb_voucher_order').select(['id']).where('voucher_id', '=', voucherId).where('user_id', '=', buyer.userId).executeTakeFirst(),
    );
    expect(await forgottenAfter(voucherId, () => returnUnitToRedis(db, other, { id: String(order.id), voucherId, userId: buyer.userId }))).toBe(true);

    // Sell the returned unit, remember "sold out" again, then release an accepted order.
    const resold = await grab(users[2]!, voucherId);
    expect(resold.status).toBe(200);
    expect((await grab(users[3]!, voucherId)).status).toBe(410);
    expect(handle.memory.lookup(voucherId)).toBe('SOLD_OUT');
    expect(await forgottenAfter(voucherId, () => releaseOrder(other, voucherId, resold.json.data.orderId, users[2]!.userId))).toBe(true);
  });

  it('a window edit in the console: "not started" forgotten at once; never remembered past the begin time', async () => {
    const created = await callRoute(createRoute, {
      method: 'POST',
      token: f.merchantA.token,
      body: seckillBody(f.shopA, { beginTime: new Date(Date.now() + 3_600_000).toISOString(), endTime: new Date(Date.now() + 7_200_000).toISOString() }),
    });
    expect(created.status).toBe(201);
    const voucherId = String(created.json.data.id);
    const users = await createTestUsers(db, redis, 2);
    expect((await grab(users[0]!, voucherId)).json.error.code).toBe('NOT_STARTED');
    expect(handle.memory.lookup(voucherId)).toBe('NOT_STARTED');
    const begin = Date.now() + 600;
    // The edit runs in this process: forgotten here at once, then again by its own message, which
    // must have arrived before the next grab or it would (rightly) keep that grab's answer out.
    const edited = await forgottenAfter(
      voucherId,
      () => callRoute(patchRoute, { method: 'PATCH', token: f.merchantA.token, params: { id: voucherId }, body: { beginTime: new Date(begin).toISOString() } }),
      2,
    );
    expect(edited.status).toBe(200);
    // Remembered again, but only until the new begin time (600 ms away, inside the 1 s bound).
    expect((await grab(users[0]!, voucherId)).json.error.code).toBe('NOT_STARTED');
    expect(handle.memory.lookup(voucherId)).toBe('NOT_STARTED');
    await new Promise((r) => setTimeout(r, Math.max(0, begin - Date.now()) + 30));
    expect((await grab(users[1]!, voucherId)).status).toBe(200);
  });

  it('junk and unknown voucher ids never enter the memory', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    handle.memory.setTrusted(true); // empties it
    for (const voucherId of ['abc', '0', '-1', '99999999999999999999', '9223372036854775807', '9223372036854775806']) {
      const r = await grab(u!, voucherId);
      expect([400, 404]).toContain(r.status);
    }
    expect(handle.memory.size).toBe(0);
  });

  it('the size is capped and expired entries go first', () => {
    let now = 1000;
    const m = new RefusalMemory(1000, 3, () => now);
    m.setTrusted(true);
    for (let i = 1; i <= 3; i++) m.record(String(i), 'SOLD_OUT', m.mark());
    now += 2000; // all three expired
    m.record('4', 'ENDED', m.mark());
    expect(m.size).toBe(1);
    m.record('5', 'SOLD_OUT', m.mark());
    m.record('6', 'SOLD_OUT', m.mark());
    m.record('7', 'SOLD_OUT', m.mark()); // full of live entries: cleared, then 7
    expect(m.size).toBeLessThanOrEqual(3);
    expect(m.lookup('7')).toBe('SOLD_OUT');
    // A refusal whose script call started before an invalidation arrived is not recorded.
    const mark = m.mark();
    m.forget('8');
    m.record('8', 'SOLD_OUT', mark);
    expect(m.lookup('8')).toBeNull();
    // "Not started" never outlives the begin time.
    m.record('9', 'NOT_STARTED', m.mark(), now + 10);
    now += 11;
    expect(m.lookup('9')).toBeNull();
  });

  it.skipIf(env.REDIS_CLUSTER_NODES.length > 0)('while the subscriber is down the memory is not used; it comes back empty once resubscribed', async () => {
    const { voucherId, users } = await soldOutVoucher();
    (handle.subscriber as Redis).stream.destroy(); // the connection drops as on a network fault
    await waitFor('distrust', async () => !handle.memory.isTrusted, 1000, 2);
    expect(handle.memory.lookup(voucherId)).toBeNull();
    expect(await voucherCommands(voucherId, () => grab(users[1]!, voucherId))).toBeGreaterThan(0);
    await waitFor('resubscribed', async () => handle.memory.isTrusted, 5000, 10);
    expect(handle.memory.size).toBe(0);
    // And it works again: a published change still reaches it.
    expect((await grab(users[2]!, voucherId)).status).toBe(410);
    expect(handle.memory.lookup(voucherId)).toBe('SOLD_OUT');
    await forgottenAfter(voucherId, () => addSeckillStock(db, other, voucherId, 1));
  });
});
