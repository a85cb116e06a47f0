/**
 * Turns in Redis (lib/seckill/room/turns.ts, lua/seckill-grab-16.lua, lua/seckill-turn-keep-4.lua;
 * docs/fair-sale.md#in-turn), on a real Redis and broker: grabs in turn are parked behind the places
 * ahead that are due and run by the call that clears their way, in place order. Who wins a small
 * stock shows the order the grabs ran in (no MONITOR needed): with 3 units and six places, places
 * 1–3 win whatever order their grabs arrive in.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// A short moment, so a holder who never comes back costs the test little.
const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_TURN_MS: '600', RATE_LIMITS: 'false' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { grabVoucher, runGrabScript } from '@/lib/seckill/grab';
import { keepTurn, leaveTurn, MAX_DUE, parkedHere } from '@/lib/seckill/room/turns';
import { assertInvariants } from '@/lib/seckill/invariants';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { createTestUsers, createTestVoucher, waitDrained, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

type Outcome = 'won' | string;

/** A grab in turn of `u` at `place`: 'won' or the refusal's code. */
function grabInTurn(voucherId: string, u: TestUser, place: number): Promise<Outcome> {
  return grabVoucher(db, redis, { voucherId, userId: u.userId, ip: '10.1.0.1', turn: { place } }).then(
    () => 'won',
    (e: { code?: string }) => e.code ?? String(e),
  );
}

async function sale(stock: number, n: number): Promise<{ voucherId: string; users: TestUser[] }> {
  const voucherId = await createTestVoucher(db, redis, { stock });
  return { voucherId, users: await createTestUsers(db, redis, n) };
}

describe('turns kept in Redis', () => {
  it('grabs arriving in the worst order run in place order once the first place buys', async () => {
    const { voucherId, users } = await sale(3, 6);
    for (let p = 1; p <= 6; p++) await keepTurn(redis, voucherId, p, users[p - 1]!.userId, true);
    // Places 6, 5, 4, 3, 2 come first: each is parked behind place 1.
    const later = [6, 5, 4, 3, 2].map((p) => grabInTurn(voucherId, users[p - 1]!, p));
    await waitFor('five parked', async () => (await redis.zcard(keys.turnParked(voucherId))) === 5, 5_000, 10);
    expect(await redis.scard(keys.seckillBuyers(voucherId))).toBe(0);
    const first = await grabInTurn(voucherId, users[0]!, 1);
    expect(first).toBe('won');
    expect(await Promise.all(later)).toEqual(['SOLD_OUT', 'SOLD_OUT', 'SOLD_OUT', 'won', 'won']);
    expect((await redis.smembers(keys.seckillBuyers(voucherId))).sort()).toEqual(users.slice(0, 3).map((u) => u.userId).sort());
    expect(await redis.zcard(keys.turnParked(voucherId))).toBe(0);
    expect(parkedHere(voucherId)).toBe(0);
    await waitDrained(db, redis, voucherId, 3);
    await assertInvariants(voucherId, { drained: true });
  });

  it('a holder who never comes back holds the places behind one moment, once; one who leaves, not at all', async () => {
    const { voucherId, users } = await sale(10, 4);
    await keepTurn(redis, voucherId, 1, users[0]!.userId, true);
    const t0 = Date.now();
    expect(await grabInTurn(voucherId, users[1]!, 2)).toBe('won');
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(450);
    expect(waited).toBeLessThan(600 + 1_000);
    // Its moment is over: kept again it holds nobody (one moment per place and sale).
    await keepTurn(redis, voucherId, 1, users[0]!.userId, true);
    const t1 = Date.now();
    expect(await grabInTurn(voucherId, users[2]!, 3)).toBe('won');
    expect(Date.now() - t1).toBeLessThan(300);
    // Place 4 keeps its turn and leaves (the token route, a failure before its grab): nobody waits.
    await keepTurn(redis, voucherId, 4, users[3]!.userId, true);
    const behind = grabVoucher(db, redis, { voucherId, userId: (await createTestUsers(db, redis, 1))[0]!.userId, ip: '10.1.0.1', turn: { place: 5 } });
    await waitFor('place 5 parked', async () => (await redis.zcard(keys.turnParked(voucherId))) === 1, 5_000, 10);
    const t2 = Date.now();
    await leaveTurn(redis, voucherId, 4);
    await expect(behind).resolves.toMatchObject({ status: 'pending' });
    expect(Date.now() - t2).toBeLessThan(300);
  });

  it('a waiting place starts its moment when a later place buys, all of them side by side', async () => {
    const { voucherId, users } = await sale(10, 4);
    // Three waiting places that never buy, each kept long before (a minute's grace), then place 4 buys.
    for (let p = 1; p <= 3; p++) await keepTurn(redis, voucherId, p, users[p - 1]!.userId, false);
    const t0 = Date.now();
    expect(await grabInTurn(voucherId, users[3]!, 4)).toBe('won');
    // One moment for the three, not three in a row.
    expect(Date.now() - t0).toBeLessThan(600 + 1_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
  });

  it('a buyer kept before the start is placed by the shuffle: the first grab in turn after it waits for them', async () => {
    const { voucherId, users } = await sale(10, 2);
    // Kept by user (no place yet); the room then puts them at place 1.
    await keepTurn(redis, voucherId, null, users[0]!.userId, false);
    await redis.zadd(keys.roomQueue(voucherId), 1, users[0]!.userId);
    const behind = grabInTurn(voucherId, users[1]!, 2);
    await waitFor('place 2 parked', async () => (await redis.zcard(keys.turnParked(voucherId))) === 1, 5_000, 10);
    expect(await redis.zscore(keys.turnDue(voucherId), '1')).toBe('1');
    expect(await grabInTurn(voucherId, users[0]!, 1)).toBe('won');
    expect(await behind).toBe('won');
  });

  it('a parked grab Redis forgot is answered 503 after its last possible moment, and nothing hangs', async () => {
    const { voucherId, users } = await sale(10, 2);
    await keepTurn(redis, voucherId, 1, users[0]!.userId, true);
    const t0 = Date.now();
    const behind = grabInTurn(voucherId, users[1]!, 2);
    await waitFor('place 2 parked', async () => (await redis.zcard(keys.turnParked(voucherId))) === 1, 5_000, 10);
    // A Redis that lost the line (a restart without persistence).
    await redis.del(keys.turnParked(voucherId), keys.turn(voucherId), keys.turnDue(voucherId));
    expect(await behind).toBe('SERVICE_UNAVAILABLE');
    expect(Date.now() - t0).toBeLessThan(600 + 600 + 2_000 + 1_000);
    expect(parkedHere(voucherId)).toBe(0);
    expect(await redis.sismember(keys.seckillBuyers(voucherId), users[1]!.userId)).toBe(0);
  });

  it('a parked grab still behind a place ahead at its deadline is taken back unrun: 503, nothing bought', async () => {
    const { voucherId, users } = await sale(10, 2);
    await keepTurn(redis, voucherId, 1, users[0]!.userId, true);
    const behind = grabInTurn(voucherId, users[1]!, 2);
    await waitFor('place 2 parked', async () => (await redis.zcard(keys.turnParked(voucherId))) === 1, 5_000, 10);
    // Place 1's moment pushed far out (as a place ahead kept again and again could not do: the
    // keep never extends one; this stands for a line the waiter cannot see the end of).
    await redis.hset(keys.turn(voucherId), '1', String(Date.now() + 60_000));
    expect(await behind).toBe('SERVICE_UNAVAILABLE');
    expect(await redis.zcard(keys.turnParked(voucherId))).toBe(0);
    expect(await redis.sismember(keys.seckillBuyers(voucherId), users[1]!.userId)).toBe(0);
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('10');
  });

  it('keeps at most MAX_DUE places per sale, and the line expires with the sale', async () => {
    const { voucherId, users } = await sale(1, 1);
    const pipe = redis.pipeline();
    for (let p = 1; p <= MAX_DUE; p++) pipe.zadd(keys.turnDue(voucherId), p, String(p));
    await pipe.exec();
    await keepTurn(redis, voucherId, MAX_DUE + 1, users[0]!.userId, true);
    expect(await redis.zcard(keys.turnDue(voucherId))).toBe(MAX_DUE);
    await redis.del(keys.turnDue(voucherId));
    await keepTurn(redis, voucherId, 1, users[0]!.userId, true);
    const end = Number(await redis.hget(keys.seckillMeta(voucherId), 'end'));
    expect(await redis.pexpiretime(keys.turn(voucherId))).toBe(end + 3_600_000);
  });

  it('before the start, a full line of early buyers lets go of those who stopped looking to keep a new one', async () => {
    const { voucherId, users } = await sale(1, 2);
    const early = keys.turnEarly(voucherId);
    const pipe = redis.pipeline();
    // MAX_DUE early buyers, one still looking, the others last seen over a minute ago.
    for (let i = 1; i < MAX_DUE; i++) pipe.zadd(early, Date.now() - 1_000, `gone${i}`);
    pipe.zadd(early, Date.now() + 60_000, 'looking');
    await pipe.exec();
    await keepTurn(redis, voucherId, null, users[0]!.userId, false);
    expect(await redis.zscore(early, users[0]!.userId)).not.toBeNull();
    expect(await redis.zscore(early, 'looking')).not.toBeNull();
    expect(await redis.zcard(early)).toBe(2);
    // Full of buyers still looking: a new one is not kept (the line is bounded).
    const full = redis.pipeline();
    for (let i = 2; i < MAX_DUE; i++) full.zadd(early, Date.now() + 60_000, `here${i}`);
    await full.exec();
    expect(await redis.zcard(early)).toBe(MAX_DUE);
    await keepTurn(redis, voucherId, null, users[1]!.userId, false);
    expect(await redis.zscore(early, users[1]!.userId)).toBeNull();
  });

  it('a flush with nothing parked answers what is in the way, and touches no stock', async () => {
    const { voucherId } = await sale(2, 0);
    expect(await runGrabScript(redis, { voucherId, userId: '0', orderId: '0', turn: { mode: 'f' } })).toEqual([15, null, null]);
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('2');
  });
});
