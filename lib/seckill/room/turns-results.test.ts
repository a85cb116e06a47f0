/**
 * Turns in Redis (lua/seckill-grab-16.lua, lib/seckill/room/turns.ts), on a real Redis, MariaDB
 * and broker: each parked grab hears its own result, and the line's keys always have a life.
 * Both failed on the first version:
 *
 * - A parked grab's result was kept by user (`seckill:{vid}:turn:res` userId -> result): a result
 *   nobody read (its process died, or another request of the same user took its place) answered
 *   the user's next parked grab, whose own grab stayed parked and ran later — an order for a buyer
 *   told 已抢光, and its order id back in the pool while the parked grab still carried it.
 * - The line's hash was written without a life by a leave (`'f'` with a place: the token route)
 *   on a sale whose line no keep or grab in turn had started, and by a grab in turn of a sale
 *   Redis did not know.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_TURN_MS: '600', RATE_LIMITS: 'false' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { grabVoucher, runGrabScript, takeOrderId } from '@/lib/seckill/grab';
import { releaseOrder } from '@/lib/seckill/outbox';
import { keepTurn, leaveTurn, parkedHere } from '@/lib/seckill/room/turns';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { createTestUsers, createTestVoucher, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

function grabInTurn(voucherId: string, u: TestUser, place: number): Promise<string> {
  return grabVoucher(db, redis, { voucherId, userId: u.userId, ip: '10.1.0.1', turn: { place } }).then(
    () => 'won',
    (e: { code?: string }) => e.code ?? String(e),
  );
}

describe('turns: results and key lives', () => {
  it("a parked grab is answered with its own result, not an earlier grab's of the same user left unread", async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1 });
    const [a, b, c, d] = await createTestUsers(db, redis, 4);
    // A's first grab in turn (place 3) is parked behind place 1, on a web process that then dies:
    // nobody waits for its result.
    await keepTurn(redis, voucherId, 1, b!.userId, true);
    expect((await runGrabScript(redis, { voucherId, userId: a!.userId, orderId: '900000000000001', turn: { mode: 'g', place: 3 } }))[0]).toBe(14);
    // C takes the last unit meanwhile; place 1 leaves, A's parked grab runs: sold out, unread.
    expect((await runGrabScript(redis, { voucherId, userId: c!.userId, orderId: '900000000000002' }))[0]).toBe(0);
    await leaveTurn(redis, voucherId, 1);
    expect(await redis.zcard(keys.turnParked(voucherId))).toBe(0);
    // C's unit comes back (its publish was never confirmed: given back).
    expect(await releaseOrder(redis, voucherId, '900000000000002', c!.userId)).toBe(true);
    // A tries again on this process; place 2 (admitted, its moment running) is ahead: parked.
    await keepTurn(redis, voucherId, 2, d!.userId, true);
    const again = grabInTurn(voucherId, a!, 3);
    await waitFor('A parked again', async () => parkedHere(voucherId) === 1, 5_000, 5);
    const record = await redis.hget(keys.turn(voucherId), 'g3');
    // Give the process's poll time to read the results hash (every 200 ms).
    await new Promise((r) => setTimeout(r, 400));
    let answer: string | undefined;
    void again.then((x) => (answer = x));
    await new Promise((r) => setTimeout(r, 0));
    if (answer !== undefined && answer !== 'won') {
      // Answered a refusal while its own grab is still parked: the order id it gave back to the
      // pool is the one that grab carries.
      const next = await takeOrderId(redis);
      expect.soft(`${a!.userId} ${next.id}`, 'the order id given back is still carried by a parked grab').not.toBe(record?.split(' ').slice(0, 2).join(' '));
      next.giveBack();
    }
    const outcome = await again;
    // Place 2 leaves: whatever is still parked runs.
    await leaveTurn(redis, voucherId, 2);
    await waitFor('nothing parked', async () => (await redis.zcard(keys.turnParked(voucherId))) === 0, 5_000, 10);
    const bought = await redis.sismember(keys.seckillBuyers(voucherId), a!.userId);
    // What A was told is what happened.
    expect.soft({ outcome, bought }, 'what A was told vs whether A bought').toEqual({ outcome, bought: outcome === 'won' ? 1 : 0 });
    expect(outcome).toBe('won');
  });

  it('a parked grab replaced by another request of the same user (another process) is not answered with that one\'s order', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [a, b] = await createTestUsers(db, redis, 2);
    await keepTurn(redis, voucherId, 1, b!.userId, true);
    // A's request on this process is parked at place 2 behind place 1.
    const here = grabVoucher(db, redis, { voucherId, userId: a!.userId, ip: '10.1.0.1', turn: { place: 2 } }).then(
      (r) => r.orderId,
      (e: { code?: string }) => e.code ?? String(e),
    );
    await waitFor('A parked here', async () => parkedHere(voucherId) === 1, 5_000, 5);
    // A's second request, on another web process, parks at the same place with its own order id.
    const other = '900000000000009';
    expect((await runGrabScript(redis, { voucherId, userId: a!.userId, orderId: other, turn: { mode: 'g', place: 2 } }))[0]).toBe(14);
    // Place 1 leaves: the parked grab (the other request's) runs.
    await leaveTurn(redis, voucherId, 1);
    const answer = await here;
    const outbox = Object.keys(await redis.hgetall(keys.seckillPending(voucherId)));
    // The unit is held under the other request's order id; this request must not answer 200 with its own.
    expect(outbox).toEqual([other]);
    expect(answer).toBe('SERVICE_UNAVAILABLE');
  });

  it('a leave on a sale whose line has not started leaves no key without a life', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1 });
    // The token route of an admitted buyer who never kept a turn (mintGrabPass leaves its place).
    await leaveTurn(redis, voucherId, 7);
    const ttl = await redis.pttl(keys.turn(voucherId));
    expect(ttl === -2 || ttl > 0).toBe(true);
    const due = await redis.pttl(keys.turnDue(voucherId));
    expect(due === -2 || due > 0).toBe(true);
  });

  it('a grab in turn of a sale Redis does not know leaves no key without a life', async () => {
    const voucherId = '987654321012345';
    await redis.del(keys.turn(voucherId), keys.turnParked(voucherId), keys.turnDue(voucherId));
    const r = await runGrabScript(redis, { voucherId, userId: '1', orderId: '900000000000003', turn: { mode: 'g', place: 1 } });
    expect(r[0]).toBe(1);
    for (const k of [keys.turn(voucherId), keys.turnParked(voucherId), keys.turnDue(voucherId)]) {
      const ttl = await redis.pttl(k);
      expect(ttl === -2 || ttl > 0, k).toBe(true);
    }
    await redis.del(keys.turn(voucherId), keys.turnParked(voucherId), keys.turnDue(voucherId));
  });
});
